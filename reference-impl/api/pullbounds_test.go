package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestPullFloodLeavesOtherTenantsWrites: one tenant's 64 concurrent pullers in a shared pool whose
// fs_events holds 20,000 rows of another tenant before the puller's only row, so each pull under
// the horizon guard judges every one of them. The pulls read on the stream-read handle under the
// flooding tenant's read gate: they queue there (counted in eventlogd_stream_reads_queued_total for
// that tenant, which stays 0 with the gate off: the control), and a bystander tenant's writes in
// the same pool all answer 200 while the flood runs. The bystander's write p50 alone and under the
// flood are logged.
func TestPullFloodLeavesOtherTenantsWrites(t *testing.T) {
	cases := []struct {
		name      string
		tenantMax int  // --db-stream-tenant-max
		queued    bool // the flood's reads queue on its own gate
	}{
		{"gate", 0, true},
		{"no-gate-control", -1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.pod("p", func(cfg *api.Config) {
				cfg.DB.MaxOpen = 8 // mutation connections; the stream handle then has 2, one per tenant
				cfg.DB.StreamTenantMax = c.tenantMax
			})
			flood, fk := p.provision(t, "shared")
			by, bk := p.provision(t, "shared")
			direct, err := store.OpenDB(testCtx(t), dsnDirect(e, "shared"))
			if err != nil {
				t.Fatal(err)
			}
			defer direct.Close()
			if _, err := direct.ExecContext(testCtx(t), `INSERT INTO fs_events (tenant_id, path, op, created_at)
				SELECT 'filler', CONCAT('/f', seq), 'write', NOW(6) FROM seq_1_to_20000`); err != nil {
				t.Fatal(err)
			}
			p.write(t, fk, "/mine", "x")

			writes := func(what string, n int) time.Duration {
				var took []time.Duration
				for i := range n {
					start := time.Now()
					code, m, err := p.try("PUT", fmt.Sprintf("/v1/fs/%s-%d", what, i), bk, strings.NewReader("x"), nil)
					if err != nil || code != 200 {
						t.Fatalf("bystander write %d (%s): %d %v %v", i, what, code, m, err)
					}
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				return took[len(took)/2]
			}
			alone := writes("alone", 30)

			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var ok, busy atomic.Int64
			for range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; n < 1000 && ctx.Err() == nil; n++ { // bounded: the test stops it far sooner
						req, _ := http.NewRequestWithContext(ctx, "GET", p.url+"/v1/events/changes?since=0&limit=1000", nil)
						req.Header.Set("Authorization", "Bearer "+fk)
						resp, err := p.client.Do(req)
						if err != nil {
							continue
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode == 200 {
							ok.Add(1)
						} else {
							busy.Add(1)
						}
					}
				}()
			}
			wait.For(t, time.Minute, "the flood's pulls to be answered", func() bool { return ok.Load() >= 64 })
			under := writes("flood", 100)
			queued := metricSum(t, p.srv, "eventlogd_stream_reads_queued_total", map[string]string{"tenant_id": flood})
			stop()
			wg.Wait()
			t.Logf("bystander write p50 alone %v, under 64 pullers %v; flood pulls 200: %d, other: %d; flood reads queued at its gate: %v",
				alone, under, ok.Load(), busy.Load(), queued)
			if (queued > 0) != c.queued {
				t.Fatalf("flood reads queued at its tenant's gate: %v, want queued = %v", queued, c.queued)
			}
			if q := metricSum(t, p.srv, "eventlogd_stream_reads_queued_total", map[string]string{"tenant_id": by}); q != 0 {
				t.Fatalf("bystander reads queued: %v, want 0 (it does not read)", q)
			}
		})
	}
}

// TestPullReadsOnlyItsTenant: honest use in a shared pool. Two tenants' writes interleave; each
// tenant's puller, paging two events at a time and resuming from next_since, gets exactly its own
// events, in order, and none of the other's; the pulls read on the pool's stream-read handle.
func TestPullReadsOnlyItsTenant(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", nil)
	_, ak := p.provision(t, "shared")
	_, bk := p.provision(t, "shared")
	var wantA, wantB []string
	for i := range 5 {
		p.write(t, ak, fmt.Sprintf("/a%d", i), "x")
		p.write(t, bk, fmt.Sprintf("/b%d", i), "x")
		wantA, wantB = append(wantA, fmt.Sprintf("/a%d", i)), append(wantB, fmt.Sprintf("/b%d", i))
	}
	for _, c := range []struct {
		name, key string
		want      []string
	}{{"a", ak, wantA}, {"b", bk, wantB}} {
		t.Run(c.name, func(t *testing.T) {
			code, first := p.pull(t, c.key, "since=0&limit=2")
			if code != 200 || len(first.Events) != 2 || !first.HasMore {
				t.Fatalf("first page: %d %+v, want 2 events and has_more", code, first)
			}
			rest, _ := p.pullAll(t, c.key, first.NextSince, 2) // resumes where the first page ended
			got := []string{first.Events[0].Path, first.Events[1].Path}
			got = append(got, rest...)
			if !slices.Equal(got, c.want) {
				t.Fatalf("pulled %v, want %v", got, c.want)
			}
		})
	}
	if n := metricSum(t, p.srv, "eventlogd_db_stream_connections_open", map[string]string{"pool": "shared"}); n == 0 {
		t.Fatal("no connection open on the shared pool's stream-read handle after the pulls")
	}
}
