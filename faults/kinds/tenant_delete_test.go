package kinds_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// deletePod serves eventlogd's tenant deletion contract (DELETE /v1/admin/tenants/{id}) over real
// HTTP, or refuses with status (a pod whose meta DB does not answer: 503).
type deletePod struct {
	mu      sync.Mutex
	status  int
	deleted []string
}

func (p *deletePod) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := strings.CutPrefix(r.URL.Path, "/v1/admin/tenants/")
	if r.Method != http.MethodDelete || !ok {
		http.NotFound(w, r)
		return
	}
	if p.status != 0 {
		http.Error(w, `{"error":"meta DB unavailable"}`, p.status)
		return
	}
	p.deleted = append(p.deleted, id)
	fmt.Fprint(w, `{"status":"ok"}`)
}

// goneEnv records the deletions the fault reports, as the harness's Env does for its drain.
type goneEnv struct {
	idEnv
	mu   sync.Mutex
	gone []string
}

func (e *goneEnv) TenantDeleted(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gone = append(e.gone, name)
}

// TestTenantDelete proves the fault deletes the target's service tenant id through the first pod
// that answers, reports the deletion to the Env only when it happened, and fails naming every pod
// when none could delete it (never a run that believes a tenant gone that is not).
func TestTenantDelete(t *testing.T) {
	tests := []struct {
		name     string
		refuse   []int // per pod, 0 = serves
		wantOn   int   // the pod that deleted (-1: none)
		wantErr  string
		wantGone bool
	}{
		{name: "first pod deletes", refuse: []int{0, 0}, wantOn: 0, wantGone: true},
		{name: "second pod when the first refuses", refuse: []int{http.StatusServiceUnavailable, 0}, wantOn: 1, wantGone: true},
		{name: "no pod can", refuse: []int{http.StatusServiceUnavailable, http.StatusNotFound}, wantOn: -1,
			wantErr: "delete tenant tenant_2 (t7c1): no pod could"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			te := faultstest.NewEnv(t)
			var pods []*deletePod
			for i, st := range tc.refuse {
				p := &deletePod{status: st}
				pods = append(pods, p)
				srv := httptest.NewServer(p)
				t.Cleanup(srv.Close)
				name := fmt.Sprintf("pod-%d", i+1)
				te.PodOrder = append(te.PodOrder, name)
				te.Admin[name] = srv.URL
			}
			env := &goneEnv{idEnv: idEnv{te, map[string]string{"tenant_2": "t7c1"}}}
			f := build(t, kinds.TenantDelete(), env, "tenant_2", 0, kinds.TenantDeleteParams{})
			err := f.Inject(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "pod-1") || !strings.Contains(err.Error(), "pod-2") {
					t.Fatalf("Inject error %v, want %q naming both pods", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			for i, p := range pods {
				want := []string(nil)
				if i == tc.wantOn {
					want = []string{"t7c1"}
				}
				if !slices.Equal(p.deleted, want) {
					t.Errorf("pod-%d deleted %v, want %v", i+1, p.deleted, want)
				}
			}
			if got := len(env.gone) == 1 && env.gone[0] == "tenant_2"; got != tc.wantGone {
				t.Errorf("Env told of deletions %v, want tenant_2 told: %v", env.gone, tc.wantGone)
			}
			if err := f.Heal(context.Background()); err != nil {
				t.Errorf("Heal: %v (a deletion has nothing to undo)", err)
			}
		})
	}
}

// A target without pods (an external service) cannot be deleted through an admin hook: a Build
// error, before the run.
func TestTenantDeleteNeedsPods(t *testing.T) {
	te := faultstest.NewEnv(t)
	_, err := kinds.TenantDelete().Build(idEnv{te, map[string]string{"tenant_1": "x"}}, "tenant_1", time.Duration(0), kinds.TenantDeleteParams{})
	if err == nil || !strings.Contains(err.Error(), "no pods") {
		t.Fatalf("error %v, want one saying there are no pods", err)
	}
}
