package faults

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/harness/consumer"
	"github.com/seqgate/seqgate/harness/pods"
)

// The harness's pod and consumer handles must satisfy Pod and Consumer as they are: these lines break
// the build if either side drifts.
var (
	_ Pod      = (*pods.Pod)(nil)
	_ Consumer = (*consumer.Consumer)(nil)
)

func TestMain(m *testing.M) {
	if os.Getenv(fakePodEnv) != "" {
		fakePod() // this test binary doubles as a pod for the harness/pods integration test
		return
	}
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

// paramsOf binds a kind's parameter struct to the kind (nil = the kind's defaults).
func paramsOf(t *testing.T, kind string, v any) Params {
	t.Helper()
	k, ok := Lookup(kind)
	if !ok {
		t.Fatalf("no kind %s", kind)
	}
	if v == nil {
		return k.Defaults()
	}
	p, err := k.ParamsOf(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
