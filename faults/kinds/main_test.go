package kinds_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/faults/fault"
	"github.com/seqgate/seqgate/faults/internal/faultstest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	faultstest.StopDB()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// build binds a kind to one target with its typed params, as the registry does for a scheduled fault.
func build[P any](t *testing.T, def fault.Def[P], env fault.Env, target string, span time.Duration, p P) fault.Fault {
	t.Helper()
	f, err := def.Build(env, target, span, p)
	if err != nil {
		t.Fatalf("%s on %s: %v", def.Name, target, err)
	}
	return f
}
