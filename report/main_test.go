package report

import (
	"testing"

	"go.uber.org/goleak"
)

// The browser tests start Chromium and goroutines that read its console; none may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
