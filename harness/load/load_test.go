package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/ledger"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func dur(d time.Duration) scenario.Duration { return scenario.Duration(d) }

func TestPacerCounts(t *testing.T) {
	tests := []struct {
		name  string
		load  scenario.Load
		phase float64
		want  int
		end   time.Duration
	}{
		{"constant 20/s 3s", scenario.Load{Executor: "constant-arrival-rate", Rate: 20, TimeUnit: dur(time.Second), Duration: dur(3 * time.Second)}, 0, 60, 3 * time.Second},
		{"constant 30/min 1m", scenario.Load{Executor: "constant-arrival-rate", Rate: 30, TimeUnit: dur(time.Minute), Duration: dur(time.Minute)}, 0.5, 30, time.Minute},
		{"ramp 0->10 2s then 10 1s", scenario.Load{Executor: "ramping-arrival-rate", TimeUnit: dur(time.Second), Stages: []scenario.Stage{
			{Target: 10, Duration: dur(2 * time.Second)}, {Target: 10, Duration: dur(time.Second)}}}, 0, 20, 3 * time.Second},
		{"ramp down 10->0 4s", scenario.Load{Executor: "ramping-arrival-rate", StartRate: 10, TimeUnit: dur(time.Second), Stages: []scenario.Stage{
			{Target: 0, Duration: dur(4 * time.Second)}}}, 0, 20, 4 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPacer(tc.load, tc.phase)
			n := 0
			prev := time.Duration(-1)
			for ; n < 100000; n++ {
				off, ok := p(n)
				if !ok {
					break
				}
				if off < prev || off >= tc.end {
					t.Fatalf("arrival %d at %v (previous %v, end %v)", n, off, prev, tc.end)
				}
				prev = off
			}
			if n != tc.want {
				t.Errorf("%d arrivals, want %d", n, tc.want)
			}
		})
	}
}

func TestMixDeterministicAndWeighted(t *testing.T) {
	w := map[string]int{"write": 8, "mkdir": 1, "delete": 1}
	a, b := NewMix(w, 1, 2), NewMix(w, 1, 2)
	count := map[string]int{}
	for i := 0; i < 10000; i++ {
		x, y := a.Next(), b.Next()
		if x != y {
			t.Fatalf("draw %d differs: %s vs %s", i, x, y)
		}
		count[x]++
	}
	if count["write"] < 7500 || count["write"] > 8500 || count["mkdir"] < 700 || count["mkdir"] > 1300 {
		t.Errorf("counts %v do not follow weights %v", count, w)
	}
}

func TestDriverSendsMutations(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k1" {
			w.WriteHeader(401)
			return
		}
		op := r.Method
		if r.URL.RawQuery != "" {
			op = r.URL.RawQuery
		}
		if (op == "rename" && r.Header.Get("X-Dat9-Rename-Source") == "") || (op == "copy" && r.Header.Get("X-Dat9-Copy-Source") == "") {
			w.WriteHeader(400)
			return
		}
		mu.Lock()
		seen[op]++
		mu.Unlock()
		_, _ = w.Write([]byte(`{"revision":1,"status":"ok"}`))
	}))
	defer srv.Close()
	s := &ledger.Memory{}
	d := NewDriver(Config{RunID: "r1", Seed: 3, Start: time.Now(), Sink: s,
		Endpoints: func() []Endpoint { return []Endpoint{{Name: "pod-1", URL: srv.URL}} }})
	l := scenario.Load{Executor: "constant-arrival-rate", Rate: 200, TimeUnit: dur(time.Second), Duration: dur(500 * time.Millisecond),
		MaxInFlight: 64, Timeout: dur(5 * time.Second), Mix: map[string]int{"write": 4, "mkdir": 1, "rename": 1, "copy": 1, "chmod": 1, "delete": 1}}
	d.Run(context.Background(), time.Now(), []Block{{Index: 0, Load: l, Tenants: []Tenant{{ID: "ten1", Key: "k1", Index: 1}}}})
	if got := d.Stats.Offered.Load(); got != 100 {
		t.Errorf("offered %d, want 100", got)
	}
	mids := map[string]bool{}
	muts := 0
	for _, r := range s.Records() {
		if r.K == ledger.KindDrop {
			continue // the open model's drops: counted below
		}
		muts++
		if r.Res != ledger.ResOK || r.Status != 200 || r.Pod != "pod-1" || r.Tenant != "ten1" {
			t.Errorf("record %+v", r)
		}
		if mids[r.MID] {
			t.Errorf("mid %s twice", r.MID)
		}
		mids[r.MID] = true
		if r.DoneT < r.T || r.IntendedT <= 0 {
			t.Errorf("times out of order: %+v", r)
		}
		switch r.Op {
		case "write", "mkdir", "rename", "copy":
			if r.Path != "/seqgate/r1/ten1/"+r.MID {
				t.Errorf("%s path %q", r.Op, r.Path)
			}
		}
		if (r.Op == "rename" || r.Op == "copy") && !strings.HasPrefix(r.Src, "/seqgate/r1/ten1/") {
			t.Errorf("%s without a source: %+v", r.Op, r)
		}
	}
	if int64(muts)+d.Stats.Dropped.Load() != 100 || int64(len(s.Records())-muts) != d.Stats.Dropped.Load() {
		t.Errorf("%d mut records + %d dropped != 100 offered, or %d drop records", muts, d.Stats.Dropped.Load(), len(s.Records())-muts)
	}
	ops := []string{}
	for op := range seen {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	if len(ops) < 5 {
		t.Errorf("server saw only %v", ops)
	}
}

// A service that does not answer must not slow the schedule: with one request slot, the first
// mutation holds it and every later arrival is dropped and counted, not queued.
func TestDriverOpenModelDropsWhenSaturated(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer srv.Close()
	s := &ledger.Memory{}
	d := NewDriver(Config{RunID: "r", Seed: 1, Start: time.Now(), Sink: s,
		Endpoints: func() []Endpoint { return []Endpoint{{Name: "p", URL: srv.URL}} }})
	l := scenario.Load{Executor: "constant-arrival-rate", Rate: 100, TimeUnit: dur(time.Second), Duration: dur(200 * time.Millisecond),
		MaxInFlight: 1, Timeout: dur(time.Minute), Mix: map[string]int{"write": 1}}
	done := make(chan struct{})
	go func() {
		d.Run(context.Background(), time.Now(), []Block{{Load: l, Tenants: []Tenant{{ID: "t", Key: "k", Index: 1}}}})
		close(done)
	}()
	wait.For(t, 10*time.Second, "20 arrivals offered", func() bool { return d.Stats.Offered.Load() >= 20 })
	close(release)
	<-done
	if d.Stats.Sent.Load() != 1 || d.Stats.Dropped.Load() != 19 {
		t.Errorf("sent %d dropped %d, want 1 and 19", d.Stats.Sent.Load(), d.Stats.Dropped.Load())
	}
	// Every dropped arrival is in the ledger as a drop record with its intended time, in schedule order.
	var drops, muts int
	var last int64
	for _, r := range s.Records() {
		switch r.K {
		case ledger.KindDrop:
			drops++
			if r.Tenant != "t" || r.Block != "0" || r.IntendedT <= last {
				t.Errorf("drop record %+v after intended_t %d", r, last)
			}
			last = r.IntendedT
		case ledger.KindMut:
			muts++
		}
	}
	if drops != 19 || muts != 1 {
		t.Errorf("%d drop and %d mut records, want 19 and 1", drops, muts)
	}
}

func TestDriverRecordsTimeoutAndError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, ".0") {
			w.WriteHeader(503)
			return
		}
		time.Sleep(300 * time.Millisecond) // a slow answer (the load's service time), far past the 50 ms timeout
	}))
	defer srv.Close()
	s := &ledger.Memory{}
	d := NewDriver(Config{RunID: "r", Seed: 1, Start: time.Now(), Sink: s,
		Endpoints: func() []Endpoint { return []Endpoint{{Name: "p", URL: srv.URL}} }})
	l := scenario.Load{Executor: "constant-arrival-rate", Rate: 10, TimeUnit: dur(time.Second), Duration: dur(200 * time.Millisecond),
		MaxInFlight: 4, Timeout: dur(50 * time.Millisecond), Mix: map[string]int{"write": 1}}
	d.Run(context.Background(), time.Now(), []Block{{Load: l, Tenants: []Tenant{{ID: "t", Key: "k", Index: 1}}}})
	got := map[string]string{}
	for _, r := range s.Records() {
		got[r.MID] = r.Res
	}
	want := map[string]string{"t1.b0.0": ledger.ResErr, "t1.b0.1": ledger.ResTimeout}
	for mid, res := range want {
		if got[mid] != res {
			t.Errorf("%s res = %q, want %q (all: %v)", mid, got[mid], res, got)
		}
	}
}

// A tenant whose requests hang must not take the request slots of the other tenants of its block:
// the stalled tenant uses up its own max_in_flight slots and its later arrivals are dropped (counted
// for it alone), while every arrival of the healthy tenant is sent and answered.
func TestStalledTenantDoesNotStarveItsBlock(t *testing.T) {
	const slots, offered = 8, 40 // per tenant: 20/s for 2s (a healthy request may take up to 400 ms on a busy machine)
	tests := []struct {
		name    string
		tenants []Tenant
	}{
		{"stalled first", []Tenant{{ID: "stalled", Key: "stalled", Index: 1}, {ID: "healthy", Key: "healthy", Index: 2}}},
		{"stalled second", []Tenant{{ID: "healthy", Key: "healthy", Index: 1}, {ID: "stalled", Key: "stalled", Index: 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") == "Bearer stalled" {
					<-release // a stalled tenant DB: the request hangs until the schedule is over
					return
				}
				_, _ = w.Write([]byte(`{"revision":1,"status":"ok"}`))
			}))
			defer srv.Close()
			s := &ledger.Memory{}
			d := NewDriver(Config{RunID: "r", Seed: 1, Start: time.Now(), Sink: s,
				Endpoints: func() []Endpoint { return []Endpoint{{Name: "p", URL: srv.URL}} }})
			l := scenario.Load{Executor: "constant-arrival-rate", Rate: 20, TimeUnit: dur(time.Second), Duration: dur(2 * time.Second),
				MaxInFlight: slots, Timeout: dur(time.Minute), Mix: map[string]int{"write": 1}}
			done := make(chan struct{})
			go func() {
				d.Run(context.Background(), time.Now(), []Block{{Load: l, Tenants: tc.tenants}})
				close(done)
			}()
			// Bounded wait for the whole schedule to be offered, then let the hung requests go.
			wait.For(t, 10*time.Second, "the whole schedule offered", func() bool { return d.Stats.Offered.Load() >= 2*offered })
			close(release)
			<-done
			drops := d.DroppedByTenant()
			if drops["healthy"] != 0 {
				t.Errorf("healthy tenant dropped %d arrivals: the stalled tenant took its slots", drops["healthy"])
			}
			if drops["stalled"] != offered-slots || d.Stats.Dropped.Load() != offered-slots {
				t.Errorf("stalled tenant dropped %d (total %d), want %d: its %d slots stay busy",
					drops["stalled"], d.Stats.Dropped.Load(), offered-slots, slots)
			}
			var ok, stalled int
			for _, r := range s.Records() {
				switch {
				case r.Tenant == "healthy" && r.Res == ledger.ResOK:
					ok++
				case r.Tenant == "stalled" && r.K == ledger.KindMut:
					stalled++
				case r.K == ledger.KindDrop && r.Tenant != "stalled":
					t.Errorf("drop record of a tenant that dropped nothing: %+v", r)
				}
			}
			if ok != offered || stalled != slots {
				t.Errorf("healthy answered %d of %d; stalled sent %d, want %d", ok, offered, stalled, slots)
			}
		})
	}
}

// TestDriverSendsNonASCIIAndInvalidUTF8Paths: write_unicode sends a valid non-ASCII path and records
// it exactly; write_invalid_utf8 sends a path whose decoded form ends in byte 0xFF, and a service
// that refuses it (400) leaves the mutation unacked. Negative control: a service that acks the
// invalid path is recorded as ok (the run's verifier then expects its event).
func TestDriverSendsNonASCIIAndInvalidUTF8Paths(t *testing.T) {
	for _, refuse := range []bool{true, false} {
		t.Run(map[bool]string{true: "refused", false: "acked (control)"}[refuse], func(t *testing.T) {
			var mu sync.Mutex
			paths := map[string]bool{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p := strings.TrimPrefix(r.URL.Path, "/v1/fs")
				mu.Lock()
				paths[p] = true
				mu.Unlock()
				if refuse && !utf8.ValidString(p) {
					w.WriteHeader(400)
					_, _ = w.Write([]byte(`{"error":"path is not valid UTF-8"}`))
					return
				}
				_, _ = w.Write([]byte(`{"revision":1,"status":"ok"}`))
			}))
			defer srv.Close()
			s := &ledger.Memory{}
			d := NewDriver(Config{RunID: "r1", Seed: 3, Start: time.Now(), Sink: s,
				Endpoints: func() []Endpoint { return []Endpoint{{Name: "pod-1", URL: srv.URL}} }})
			l := scenario.Load{Executor: "constant-arrival-rate", Rate: 100, TimeUnit: dur(time.Second), Duration: dur(200 * time.Millisecond),
				MaxInFlight: 64, Timeout: dur(5 * time.Second), Mix: map[string]int{"write_unicode": 1, "write_invalid_utf8": 1}}
			d.Run(context.Background(), time.Now(), []Block{{Index: 0, Load: l, Tenants: []Tenant{{ID: "ten1", Key: "k1", Index: 1}}}})
			var uni, bad int
			for _, r := range s.Records() {
				if r.Op != "write" {
					t.Fatalf("ledger op %q, want write", r.Op)
				}
				switch {
				case strings.HasSuffix(r.Path, UnicodeSuffix):
					uni++
					if r.Res != ledger.ResOK || !paths[r.Path] {
						t.Fatalf("unicode write %+v: not acked, or the service saw another path", r)
					}
				case strings.HasSuffix(r.Path, InvalidUTF8Suffix):
					bad++
					sent := strings.TrimSuffix(r.Path, InvalidUTF8Suffix) + "-\xff"
					if !paths[sent] {
						t.Fatalf("invalid write %s: the service never saw %q", r.MID, sent)
					}
					if acked := r.Res == ledger.ResOK; acked == refuse {
						t.Fatalf("invalid write %+v: acked %v, want %v", r, acked, !refuse)
					}
				default:
					t.Fatalf("unexpected path %q", r.Path)
				}
			}
			if uni == 0 || bad == 0 {
				t.Fatalf("%d unicode and %d invalid writes, want both", uni, bad)
			}
		})
	}
}
