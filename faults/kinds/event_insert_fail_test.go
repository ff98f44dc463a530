package kinds_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// failpointPod serves eventlogd's event-insert failpoint contract (docs/eventlogd.md) over real HTTP:
// it keeps the armed tenant and deadline and answers 400 to a bad `for`, like eventlogd's handler.
type failpointPod struct {
	mu     sync.Mutex
	tenant string
	until  time.Time
	calls  []string
	status int // non-zero: the pod refuses (no --admin)
}

func (p *failpointPod) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, r.Method+" "+r.URL.RequestURI())
	if p.status != 0 {
		http.Error(w, "404 page not found", p.status)
		return
	}
	d, err := time.ParseDuration(r.URL.Query().Get("for"))
	if r.Method != http.MethodPost || r.URL.Path != "/v1/admin/failpoint/event-insert" || err != nil || d < 0 {
		http.Error(w, `{"error":"for: want a Go duration"}`, http.StatusBadRequest)
		return
	}
	p.tenant, p.until = r.URL.Query().Get("tenant"), time.Now().Add(d)
	fmt.Fprint(w, `{"status":"ok"}`)
}

// armed reports the tenant whose inserts fail now ("" when disarmed).
func (p *failpointPod) armed() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Now().Before(p.until) {
		return p.tenant
	}
	return ""
}

// idEnv maps tenant names to service ids, as the harness's Env does.
type idEnv struct {
	*faultstest.Env
	ids map[string]string
}

func (e idEnv) TenantID(name string) (string, error) {
	if id, ok := e.ids[name]; ok {
		return id, nil
	}
	return "", fmt.Errorf("no tenant %q", name)
}

// TestEventInsertFail proves the fault arms the failpoint for the target's service tenant id on every
// pod for the span, that Heal disarms it on every pod, and that a pod without the admin hook is an
// Inject error (never a silently healthy run).
func TestEventInsertFail(t *testing.T) {
	tests := []struct {
		name    string
		refuse  int // pod-2's refusal status, 0 = serves
		ids     bool
		wantID  string
		wantErr string
	}{
		{name: "armed on every pod by tenant id", ids: true, wantID: "t9f3"},
		{name: "env names tenants by id", ids: false, wantID: "tenant_1"},
		{name: "pod without admin", refuse: http.StatusNotFound, ids: true, wantID: "t9f3", wantErr: "pod-2: admin POST /v1/admin/failpoint/event-insert"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fp := []*failpointPod{{}, {status: tc.refuse}}
			te := faultstest.NewEnv(t)
			for i, p := range fp {
				srv := httptest.NewServer(p)
				t.Cleanup(srv.Close)
				name := fmt.Sprintf("pod-%d", i+1)
				te.PodOrder = append(te.PodOrder, name)
				te.Admin[name] = srv.URL
			}
			var env fault.Env = te
			if tc.ids {
				env = idEnv{te, map[string]string{"tenant_1": "t9f3"}}
			}
			f := build(t, kinds.EventInsertFail(), env, "tenant_1", time.Minute, kinds.EventInsertFailParams{})
			err := f.Inject(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "HTTP 404") {
					t.Fatalf("Inject error %v, want one naming %q and HTTP 404", err, tc.wantErr)
				}
				if fp[0].armed() != tc.wantID {
					t.Errorf("the pod that serves the hook was not armed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range fp {
				if got := p.armed(); got != tc.wantID {
					t.Errorf("pod-%d armed for %q, want %q", i+1, got, tc.wantID)
				}
				if want := "POST /v1/admin/failpoint/event-insert?for=1m0s&tenant=" + tc.wantID; p.calls[0] != want {
					t.Errorf("pod-%d call %q, want %q", i+1, p.calls[0], want)
				}
			}
			if err := f.Heal(context.Background()); err != nil {
				t.Fatal(err)
			}
			for i, p := range fp {
				if got := p.armed(); got != "" {
					t.Errorf("pod-%d still armed for %q after Heal", i+1, got)
				}
			}
		})
	}
}

// An unknown tenant name is a Build error naming it.
func TestEventInsertFailUnknownTenant(t *testing.T) {
	te := faultstest.NewEnv(t)
	te.PodOrder, te.Admin["pod-1"] = []string{"pod-1"}, "http://127.0.0.1:1"
	_, err := kinds.EventInsertFail().Build(idEnv{te, map[string]string{}}, "tenant_7", time.Second, kinds.EventInsertFailParams{})
	if err == nil || !strings.Contains(err.Error(), "tenant_7") {
		t.Fatalf("error %v, want one naming tenant_7", err)
	}
}
