package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
	tgt "github.com/seqgate/seqgate/harness/target"
)

// syncBuffer is a bytes.Buffer safe for the progress goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestProvisionEach provisions tenants through a POST /v1/provision endpoint that counts the requests
// in flight and holds the first ones until `conc` of them are in flight at once (or 30 s passed):
// the most it saw in flight is the concurrency the provisioning really had, observed, not timed. The
// first tenants also wait for a progress line, so the progress is seen while provisioning runs. A
// run with one failing pool must name that tenant; the clean run returns every tenant in order.
func TestProvisionEach(t *testing.T) {
	defer func(d time.Duration) { provisionEvery = d }(provisionEvery)
	provisionEvery = 10 * time.Millisecond
	for _, c := range []struct {
		name    string
		conc    int
		tenants int
		fail    string // the pool whose provisioning answers 500
		wantErr string
	}{
		{name: "parallel", conc: 8, tenants: 100},
		{name: "one at a time", conc: 1, tenants: 20},
		{name: "fewer tenants than workers", conc: 16, tenants: 3},
		{name: "one tenant fails", conc: 8, tenants: 50, fail: "tenant_37", wantErr: `provision tenant_37 (group "g", pool tenant_37)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			progress := &syncBuffer{}
			var mu sync.Mutex
			inFlight, maxInFlight, served := 0, 0, 0
			want := min(c.conc, c.tenants)
			full := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body struct{ Pool string }
				_ = json.NewDecoder(r.Body).Decode(&body)
				mu.Lock()
				inFlight++
				served++
				first := served <= want
				if inFlight > maxInFlight {
					maxInFlight = inFlight
				}
				if maxInFlight == want {
					select {
					case <-full:
					default:
						close(full)
					}
				}
				mu.Unlock()
				if first {
					select {
					case <-full:
					case <-time.After(30 * time.Second):
					}
					for end := time.Now().Add(30 * time.Second); !strings.Contains(progress.String(), "tenants active") && time.Now().Before(end); {
						time.Sleep(time.Millisecond) // pacing the poll for the progress line
					}
				}
				mu.Lock()
				inFlight--
				mu.Unlock()
				if body.Pool == c.fail {
					http.Error(w, "no such pool", http.StatusInternalServerError)
					return
				}
				fmt.Fprintf(w, `{"tenant_id":"id-%s","api_key":"key-%s","pool":%q}`, body.Pool, body.Pool, body.Pool)
			}))
			defer srv.Close()
			p, err := service.Shipped.Profile(tgt.Options{}, false)
			if err != nil {
				t.Fatal(err)
			}
			p.SendPool = true
			var slots []scenario.Tenant
			for i := 1; i <= c.tenants; i++ {
				slots = append(slots, scenario.Tenant{Group: "g", Index: i, Mode: "dedicated", Pool: fmt.Sprintf("tenant_%d", i)})
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			out, err := provisionEach(context.Background(), log, progress, slots, c.conc, func(ctx context.Context, slot scenario.Tenant) (tenant, error) {
				tn, err := p.Provision(ctx, provisionClient, srv.URL, slot.Pool)
				if err != nil {
					return tenant{}, err
				}
				return tenant{Tenant: slot, ID: tn.ID, Key: tn.Key}, nil
			})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "HTTP 500") {
					t.Fatalf("err = %v, want one naming %s and its HTTP 500", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != c.tenants {
				t.Fatalf("%d tenants, want %d", len(out), c.tenants)
			}
			for i, tn := range out {
				if tn.Index != i+1 || tn.ID != fmt.Sprintf("id-tenant_%d", i+1) {
					t.Fatalf("tenant %d is %+v: want tenant_%d in order", i, tn, i+1)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if maxInFlight != want {
				t.Fatalf("at most %d provisioning requests in flight, want %d (concurrency %d, %d tenants)", maxInFlight, want, c.conc, c.tenants)
			}
			if !strings.Contains(progress.String(), fmt.Sprintf("/%d tenants active", c.tenants)) {
				t.Fatalf("no progress line; progress:\n%s", progress.String())
			}
		})
	}
}
