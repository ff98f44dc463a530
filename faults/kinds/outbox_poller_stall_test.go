package kinds_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// adminStub serves eventlogd's admin contract (docs/eventlogd.md) over real HTTP and records calls.
type adminStub struct {
	mu     sync.Mutex
	calls  []string
	status int
}

func (a *adminStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, r.Method+" "+r.URL.RequestURI())
	if a.status != 0 {
		http.Error(w, "admin disabled", a.status)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// TestOutboxPollerStall proves the fault speaks the admin contract: stall with the span, then resume;
// and that an admin endpoint that refuses (eventlogd without --admin) is an Inject error, not a silent
// no-op fault.
func TestOutboxPollerStall(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  int
		wantErr bool
	}{{"ok", 0, false}, {"no_admin", http.StatusNotFound, true}} {
		t.Run(c.name, func(t *testing.T) {
			stub := &adminStub{status: c.status}
			srv := httptest.NewServer(stub)
			defer srv.Close()
			env := faultstest.NewEnv(t)
			env.Admin["p1"] = srv.URL + "/"
			f := build(t, kinds.OutboxPollerStall(), env, "p1", 90*time.Second, kinds.PollerStallParams{})
			err := f.Inject(context.Background())
			if (err != nil) != c.wantErr {
				t.Fatalf("Inject error %v, want error %v", err, c.wantErr)
			}
			if c.wantErr {
				if !strings.Contains(err.Error(), "HTTP 404") {
					t.Errorf("error does not say what the pod answered: %v", err)
				}
				return
			}
			if err := f.Heal(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := []string{"POST /v1/admin/poller/stall?for=1m30s", "POST /v1/admin/poller/resume"}
			if strings.Join(stub.calls, "|") != strings.Join(want, "|") {
				t.Fatalf("admin calls %q, want %q", stub.calls, want)
			}
		})
	}
}
