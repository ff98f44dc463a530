package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/ledger"
)

// TestQueueOffersEachArrivalOnce: whatever the number of slots, every arrival of the schedule is
// either sent once (a mut record, never before its intended time) or dropped once (a drop record),
// with the intended time the pacer gives it and the op the i-th draw of the tenant's mix, whichever
// slot took it. The slow start holds the first answers back, so slots pile up and then park (and
// are woken again) while few of them keep up with the rate.
func TestQueueOffersEachArrivalOnce(t *testing.T) {
	for _, tc := range []struct {
		slots     int
		slowStart bool
	}{{1, false}, {3, false}, {64, false}, {3, true}, {64, true}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, i, _ := strings.Cut(r.URL.Path, ".b1.")
			if n, _ := strconv.Atoi(i); tc.slowStart && n < 10 {
				time.Sleep(50 * time.Millisecond) // paces the load: a slow start holds the first answers back
			}
			_, _ = w.Write([]byte(`{"revision":1,"status":"ok"}`))
		}))
		defer srv.Close()
		slots := tc.slots
		t.Run("max_in_flight "+strconv.Itoa(slots)+map[bool]string{true: " slow start"}[tc.slowStart], func(t *testing.T) {
			const n = 100
			l := scenario.Load{Executor: "constant-arrival-rate", Rate: 400, TimeUnit: dur(time.Second), Duration: dur(n * time.Second / 400),
				Start: dur(20 * time.Millisecond), MaxInFlight: slots, Timeout: dur(5 * time.Second), Mix: map[string]int{"write": 3, "mkdir": 1}}
			tenant := Tenant{ID: "ten", Key: "k", Index: 2, Phase: 0.25}
			blk := Block{Index: 1, Load: l, Tenants: []Tenant{tenant}}
			s := &ledger.Memory{}
			start := time.Now()
			d := NewDriver(Config{RunID: "r", Seed: 7, Start: start, Sink: s,
				Endpoints: func() []Endpoint { return []Endpoint{{Name: "p", URL: srv.URL}} }})
			d.Run(context.Background(), start, []Block{blk})

			pace := NewPacer(l, tenant.Phase)
			mix := NewMix(l.Mix, 7, uint64(tenant.Index)<<16|uint64(blk.Index))
			intended := map[int64]int{} // intended_t -> arrival index
			var ops []string
			for i := 0; ; i++ {
				off, ok := pace(i)
				if !ok {
					break
				}
				intended[(l.Start.D() + off).Nanoseconds()] = i
				ops = append(ops, mix.Next())
				mix.Pick(1 << 30)
			}
			if len(ops) != n {
				t.Fatalf("the pacer gives %d arrivals, want %d", len(ops), n)
			}
			seen := make([]int, n)
			for _, r := range s.Records() {
				i, ok := intended[r.IntendedT]
				if !ok {
					t.Fatalf("record with an intended_t no arrival has: %+v", r)
				}
				seen[i]++
				if r.K == ledger.KindDrop {
					continue
				}
				if r.MID != "t2.b1."+strconv.Itoa(i) || r.Op != ops[i] || r.Res != ledger.ResOK || r.T < r.IntendedT ||
					!strings.HasSuffix(r.Path, "/"+r.MID) {
					t.Errorf("arrival %d (op %s): %+v", i, ops[i], r)
				}
			}
			for i, c := range seen {
				if c != 1 {
					t.Errorf("arrival %d recorded %d times", i, c)
				}
			}
			if got := d.Stats.Offered.Load(); got != n {
				t.Errorf("offered %d, want %d", got, n)
			}
		})
	}
}

// TestQueueCancel: a cancelled run ends at once, whether its slots sleep until an arrival an hour
// away or send at a high rate; what was offered is all in the ledger (goleak checks that no slot
// is left).
func TestQueueCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"revision":1,"status":"ok"}`))
	}))
	defer srv.Close()
	tests := []struct {
		name     string
		start    time.Duration // the block's first arrival
		rate     float64
		slots    int
		minOffer int64 // cancel once this many arrivals were offered
	}{
		{"asleep an hour before the first arrival", time.Hour, 10, 4, 0},
		{"sending", 0, 2000, 4, 50},
		{"every slot busy", 0, 2000, 1, 50},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &ledger.Memory{}
			start := time.Now()
			d := NewDriver(Config{RunID: "r", Seed: 1, Start: start, Sink: s,
				Endpoints: func() []Endpoint { return []Endpoint{{Name: "p", URL: srv.URL}} }})
			l := scenario.Load{Executor: "constant-arrival-rate", Rate: tc.rate, TimeUnit: dur(time.Second), Duration: dur(time.Hour),
				Start: dur(tc.start), MaxInFlight: tc.slots, Timeout: dur(5 * time.Second), Mix: map[string]int{"write": 1}}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				d.Run(ctx, start, []Block{{Load: l, Tenants: []Tenant{{ID: "t", Key: "k", Index: 1}}}})
			}()
			wait.For(t, 10*time.Second, "the minimum arrivals offered", func() bool { return d.Stats.Offered.Load() >= tc.minOffer })
			cancel()
			<-done
			if got := int64(len(s.Records())); got != d.Stats.Offered.Load() {
				t.Errorf("%d records for %d offered arrivals", got, d.Stats.Offered.Load())
			}
		})
	}
}
