package kinds_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// TestOutboxCommitDelay proves the fault speaks the admin contract (arm with delay and span, disarm
// with for=0s), that a pod refusing the admin call is an Inject error, and that a delay outside
// (0s, 1m] is refused when the fault is built.
func TestOutboxCommitDelay(t *testing.T) {
	for _, c := range []struct {
		name     string
		status   int
		delay    time.Duration
		buildErr string
		wantErr  bool
	}{
		{name: "ok", delay: 250 * time.Millisecond},
		{name: "no_admin", status: http.StatusNotFound, delay: time.Second, wantErr: true},
		{name: "zero delay", delay: 0, buildErr: "params.delay 0s"},
		{name: "delay over a minute", delay: 2 * time.Minute, buildErr: "params.delay 2m0s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := &adminStub{status: c.status}
			srv := httptest.NewServer(stub)
			defer srv.Close()
			env := faultstest.NewEnv(t)
			env.Admin["p1"] = srv.URL + "/"
			def := kinds.OutboxCommitDelay()
			if c.buildErr != "" {
				_, err := def.Build(env, "p1", 10*time.Second, kinds.OutboxCommitDelayParams{Delay: c.delay})
				if err == nil || !strings.Contains(err.Error(), c.buildErr) {
					t.Fatalf("Build error %v, want one containing %q", err, c.buildErr)
				}
				return
			}
			f := build(t, def, env, "p1", 10*time.Second, kinds.OutboxCommitDelayParams{Delay: c.delay})
			err := f.Inject(context.Background())
			if (err != nil) != c.wantErr {
				t.Fatalf("Inject error %v, want error %v", err, c.wantErr)
			}
			if c.wantErr {
				return
			}
			if err := f.Heal(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := []string{"POST /v1/admin/failpoint/outbox-hold?delay=250ms&for=10s", "POST /v1/admin/failpoint/outbox-hold?delay=250ms&for=0s"}
			if strings.Join(stub.calls, "|") != strings.Join(want, "|") {
				t.Fatalf("admin calls %q, want %q", stub.calls, want)
			}
		})
	}
}
