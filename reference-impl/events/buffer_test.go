package events

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// inserterFunc is the buffer's Inserter seam driven by the test (the DB-backed inserter is
// exercised against MariaDB in reference-impl/api).
type inserterFunc func(ctx context.Context, tenant string, ev store.Event) (int64, error)

func (f inserterFunc) InsertBuffered(ctx context.Context, tenant string, ev store.Event) (int64, error) {
	return f(ctx, tenant, ev)
}

var errDown = errors.New("tenant DB down")

type harness struct {
	b       *Buffer
	m       *metrics.Metrics
	mu      sync.Mutex
	down    map[string]bool
	gone    map[string]bool
	flushed []string // tenant:path in flush order
}

func newHarness(t *testing.T, cfg BufferConfig) *harness {
	h := newIdleHarness(t, cfg)
	h.b.Start()
	return h
}

// newIdleHarness is newHarness without Start: until the test starts the scheduler, no entry is in
// flight, so evictions are deterministic.
func newIdleHarness(t *testing.T, cfg BufferConfig) *harness {
	h := &harness{down: map[string]bool{}, gone: map[string]bool{}}
	h.m = metrics.New(prometheus.NewRegistry())
	ins := inserterFunc(func(ctx context.Context, tenant string, ev store.Event) (int64, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.gone[tenant] {
			return 0, ErrTenantGone
		}
		if h.down[tenant] {
			return 0, errDown
		}
		if ev.Path == "/refused" {
			return 0, fmt.Errorf("%w: Error 1366: Incorrect string value", ErrRejected)
		}
		h.flushed = append(h.flushed, tenant+":"+ev.Path)
		return int64(len(h.flushed)), nil
	})
	if cfg.BackoffMin == 0 {
		cfg.BackoffMin = 5 * time.Millisecond
	}
	if cfg.BackoffMax == 0 {
		cfg.BackoffMax = 20 * time.Millisecond
	}
	cfg.Tick = 5 * time.Millisecond
	h.b = NewBuffer(cfg, ins, nil, h.m, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { h.b.Close(0) })
	return h
}

func (h *harness) setDown(tenant string, down bool) {
	h.mu.Lock()
	h.down[tenant] = down
	h.mu.Unlock()
}

func (h *harness) drops(tenant, reason string) float64 {
	return testutil.ToFloat64(h.m.Dropped.WithLabelValues(tenant, reason))
}

func ev(path string) store.Event { return store.Event{Path: path, Op: "write", CreatedAt: time.Now()} }

// recvWithin waits for one value on ch, failing the test with what it awaited after 10 s: a lost
// signal becomes a failure with a message, not a hung package.
func recvWithin(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// closeWithin closes b with budget and fails the test if Close has not returned 10 s after the
// budget; it returns Close's count of leftover entries.
func closeWithin(t *testing.T, b *Buffer, budget time.Duration) int {
	t.Helper()
	left := make(chan int, 1)
	go func() { left <- b.Close(budget) }()
	select {
	case n := <-left:
		return n
	case <-time.After(budget + 10*time.Second):
		t.Fatalf("Buffer.Close(%v) did not return", budget)
		return 0
	}
}

func TestCapsDropOldestAndCountByTenantAndReason(t *testing.T) {
	cases := []struct {
		name       string
		cfg        BufferConfig
		enqueue    []string // tenant:path, all while DBs are down
		wantDrops  map[[2]string]float64
		wantRemain []string // flushed after recovery, in order
	}{
		{"tenant_cap", BufferConfig{TenantCap: 2, GlobalCap: 100},
			[]string{"a:1", "a:2", "a:3", "b:1"},
			map[[2]string]float64{{"a", DropTenantCap}: 1},
			[]string{"a:2", "a:3", "b:1"}},
		{"global_cap evicts the largest tenant's oldest, not a smaller tenant's", BufferConfig{TenantCap: 10, GlobalCap: 3},
			[]string{"a:1", "b:1", "b:2", "b:3"},
			map[[2]string]float64{{"b", DropGlobalCap}: 1, {"a", DropGlobalCap}: 0},
			[]string{"a:1", "b:2", "b:3"}},
		{"global_cap: a flooding tenant loses its own entries, the victim none", BufferConfig{TenantCap: 100, GlobalCap: 4},
			[]string{"v:1", "x:1", "x:2", "x:3", "x:4", "x:5", "x:6"},
			map[[2]string]float64{{"x", DropGlobalCap}: 3, {"v", DropGlobalCap}: 0},
			[]string{"v:1", "x:4", "x:5", "x:6"}},
		{"global_cap on equal tenants evicts the enqueuing tenant's own oldest", BufferConfig{TenantCap: 10, GlobalCap: 4},
			[]string{"a:1", "b:1", "a:2", "b:2", "b:3"},
			map[[2]string]float64{{"b", DropGlobalCap}: 1, {"a", DropGlobalCap}: 0},
			[]string{"a:1", "a:2", "b:2", "b:3"}},
		// Bug: the eviction removed the tenant's last entry, which deleted its queue, and the new
		// entry went onto that orphaned queue: never flushed, counted only at a clean close.
		{"global_cap evicting the tenant's last entry keeps its new one flushable", BufferConfig{TenantCap: 10, GlobalCap: 2},
			[]string{"a:1", "b:1", "a:2"},
			map[[2]string]float64{{"a", DropGlobalCap}: 1},
			[]string{"b:1", "a:2"}},
		{"tenant_cap 1 keeps the newest entry flushable", BufferConfig{TenantCap: 1, GlobalCap: 100},
			[]string{"a:1", "a:2", "a:3"},
			map[[2]string]float64{{"a", DropTenantCap}: 2},
			[]string{"a:3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.BackoffMin = time.Hour // nothing flushes until recovery
			h := newIdleHarness(t, c.cfg)
			for _, e := range c.enqueue {
				h.b.Enqueue(e[:1], ev(e[2:]))
			}
			for k, want := range c.wantDrops {
				if got := h.drops(k[0], k[1]); got != want {
					t.Fatalf("drops{%s,%s} = %v, want %v", k[0], k[1], got, want)
				}
			}
			if d := testutil.ToFloat64(h.m.BufferDepth); int(d) != len(c.wantRemain) {
				t.Fatalf("depth gauge %v, want %d", d, len(c.wantRemain))
			}
			h.b.Start()
			if left := closeWithin(t, h.b, 5*time.Second); left != 0 { // the shutdown drain ignores backoff and flushes everything
				t.Fatalf("%d entries left at close (orphaned?), flushed %v", left, h.flushed)
			}
			if len(h.flushed) != len(c.wantRemain) {
				t.Fatalf("flushed %v, want %v", h.flushed, c.wantRemain)
			}
			// Per-tenant FIFO: each tenant's entries flush in enqueue order.
			for _, tenant := range []string{"a", "b"} {
				var got, want []string
				for _, f := range h.flushed {
					if f[:1] == tenant {
						got = append(got, f)
					}
				}
				for _, f := range c.wantRemain {
					if f[:1] == tenant {
						want = append(want, f)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("tenant %s flushed %v, want %v", tenant, got, want)
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("tenant %s flushed %v, want %v (FIFO)", tenant, got, want)
					}
				}
			}
		})
	}
}

// TestEvictionNeverOrphansTheNewEntry: after an eviction that emptied the enqueuing tenant's queue,
// the new entry is still visible to the scheduler: it flushes while the buffer runs (no close).
func TestEvictionNeverOrphansTheNewEntry(t *testing.T) {
	cases := []struct {
		name    string
		cfg     BufferConfig
		enqueue []string
	}{
		{"tenant cap 1", BufferConfig{TenantCap: 1}, []string{"a:1", "a:2"}},
		{"global cap 2", BufferConfig{GlobalCap: 2}, []string{"a:1", "b:1", "a:2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newIdleHarness(t, c.cfg)
			for _, e := range c.enqueue {
				h.b.Enqueue(e[:1], ev(e[2:]))
			}
			if got := h.b.Snapshot().Tenants["a"]; got != 1 {
				t.Fatalf("snapshot shows %d entries of tenant a, want 1 (the new entry)", got)
			}
			h.b.Start()
			wait.For(t, 10*time.Second, "every buffered entry flushed while running", func() bool { return h.b.Depth() == 0 })
			h.mu.Lock()
			defer h.mu.Unlock()
			if !contains(h.flushed, "a:2") {
				t.Fatalf("flushed %v, want a:2 among them", h.flushed)
			}
		})
	}
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// TestRejectedEntryIsDroppedAndNeverBlocksTheQueue: an entry the DB refuses for good (a data error)
// drops as rejected at once, and the tenant's later entries flush behind it without waiting for
// its max age; an ordinary error (negative control) keeps the entry at the head for a retry.
func TestRejectedEntryIsDroppedAndNeverBlocksTheQueue(t *testing.T) {
	h := newIdleHarness(t, BufferConfig{BackoffMin: time.Hour, BackoffMax: time.Hour})
	h.b.Enqueue("a", ev("/refused"))
	h.b.Enqueue("a", ev("/1"))
	h.b.Enqueue("a", ev("/2"))
	h.b.draining = true // due at once (no backoff), as in the shutdown drain, but the buffer keeps running
	h.b.Start()
	wait.For(t, 10*time.Second, "the queue behind the refused entry flushed", func() bool { return h.b.Depth() == 0 })
	if got := h.drops("a", DropRejected); got != 1 {
		t.Fatalf("rejected drops %v, want 1", got)
	}
	h.mu.Lock()
	got := append([]string(nil), h.flushed...)
	h.mu.Unlock()
	if len(got) != 2 || got[0] != "a:/1" || got[1] != "a:/2" {
		t.Fatalf("flushed %v, want [a:/1 a:/2]", got)
	}

	t.Run("negative control: a transient error keeps the head", func(t *testing.T) {
		h := newIdleHarness(t, BufferConfig{BackoffMin: time.Hour, BackoffMax: time.Hour})
		h.setDown("a", true)
		h.b.Enqueue("a", ev("/1"))
		h.b.Enqueue("a", ev("/2"))
		h.b.draining = true
		h.b.Start()
		wait.For(t, 10*time.Second, "one failed attempt", func() bool {
			return testutil.ToFloat64(h.m.FlushResults.WithLabelValues("error")) >= 1
		})
		if d := h.b.Depth(); d != 2 {
			t.Fatalf("depth %d after a transient error, want 2", d)
		}
		if got := h.drops("a", DropRejected); got != 0 {
			t.Fatalf("rejected drops %v for a transient error", got)
		}
	})
}

func TestExpiredStoppedShutdownTenantGone(t *testing.T) {
	t.Run("expired", func(t *testing.T) {
		h := newHarness(t, BufferConfig{MaxAge: 30 * time.Millisecond})
		h.setDown("a", true)
		h.b.Enqueue("a", ev("/1"))
		wait.For(t, 10*time.Second, "expiry", func() bool { return h.drops("a", DropExpired) == 1 })
		if h.b.Depth() != 0 {
			t.Fatal("expired entry still buffered")
		}
	})
	t.Run("tenant_gone drops all of the tenant's entries", func(t *testing.T) {
		h := newHarness(t, BufferConfig{})
		h.mu.Lock()
		h.gone["a"] = true
		h.mu.Unlock()
		h.b.Enqueue("a", ev("/1"))
		h.b.Enqueue("a", ev("/2"))
		h.b.Enqueue("b", ev("/1"))
		wait.For(t, 10*time.Second, "tenant_gone", func() bool { return h.drops("a", DropTenantGone) == 2 })
		wait.For(t, 10*time.Second, "b flushed", func() bool { return h.b.Depth() == 0 })
	})
	t.Run("shutdown leftovers and stopped", func(t *testing.T) {
		h := newHarness(t, BufferConfig{})
		h.setDown("a", true)
		h.b.Enqueue("a", ev("/1"))
		h.b.Enqueue("a", ev("/2"))
		if left := closeWithin(t, h.b, 50*time.Millisecond); left != 2 {
			t.Fatalf("left %d, want 2", left)
		}
		if got := h.drops("a", DropShutdown); got != 2 {
			t.Fatalf("shutdown drops %v, want 2", got)
		}
		h.b.Enqueue("a", ev("/3"))
		if got := h.drops("a", DropStopped); got != 1 {
			t.Fatalf("stopped drops %v, want 1", got)
		}
	})
	t.Run("uncounted-drop defect", func(t *testing.T) {
		h := newHarness(t, BufferConfig{TenantCap: 1, Uncounted: true, BackoffMin: time.Hour})
		h.b.Enqueue("a", ev("/1"))
		h.b.Enqueue("a", ev("/2"))
		if got := h.drops("a", DropTenantCap); got != 0 {
			t.Fatalf("defect counted %v drops", got)
		}
	})
}

// TestInFlightEntryIsNeverEvicted: while a tenant's head entry is being inserted (the DB hangs),
// cap pressure evicts the oldest idle entry instead, and the in-flight one still lands.
func TestInFlightEntryIsNeverEvicted(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	var mu sync.Mutex
	var flushed []string
	m := metrics.New(prometheus.NewRegistry())
	ins := inserterFunc(func(ctx context.Context, tenant string, e store.Event) (int64, error) {
		if e.Path == "/1" {
			started <- struct{}{}
			select { // bounded: a test that fails before close(release) must not pin this goroutine
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		mu.Lock()
		flushed = append(flushed, e.Path)
		mu.Unlock()
		return 1, nil
	})
	b := NewBuffer(BufferConfig{TenantCap: 2, BackoffMin: time.Millisecond, Tick: time.Millisecond}, ins, nil, m, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.Start()
	b.Enqueue("a", ev("/1"))
	recvWithin(t, started, "/1's insert to start") // /1 is in flight
	b.Enqueue("a", ev("/2"))
	b.Enqueue("a", ev("/3")) // cap 2: evicts /2 (oldest idle), not /1
	close(release)
	wait.For(t, 10*time.Second, "drain", func() bool { return b.Depth() == 0 })
	closeWithin(t, b, time.Second)
	if got := testutil.ToFloat64(m.Dropped.WithLabelValues("a", DropTenantCap)); got != 1 {
		t.Fatalf("tenant_cap drops %v, want 1", got)
	}
	if len(flushed) != 2 || flushed[0] != "/1" || flushed[1] != "/3" {
		t.Fatalf("flushed %v, want [/1 /3]", flushed)
	}
}

func TestBackoffDoublesToCap(t *testing.T) {
	b := &Buffer{cfg: BufferConfig{BackoffMin: time.Second, BackoffMax: 5 * time.Minute}}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	for i, w := range want {
		if got := b.backoff(i + 1); got != w {
			t.Fatalf("backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := b.backoff(30); got != 5*time.Minute {
		t.Fatalf("backoff(30) = %v, want the 5m cap", got)
	}
}

func TestMaxAgeForClampsRetention(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{time.Minute, time.Hour}, {time.Hour, time.Hour}, {6 * time.Hour, 6 * time.Hour}, {168 * time.Hour, 24 * time.Hour},
	} {
		if got := MaxAgeFor(c.in); got != c.want {
			t.Fatalf("MaxAgeFor(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestConcurrencyCapAndHungTenantIsolation: at most Concurrency tenants flush at once, and a tenant
// whose DB hangs does not hold up the others.
func TestConcurrencyCapAndHungTenantIsolation(t *testing.T) {
	hang := make(chan struct{})
	hungStarted := make(chan struct{}, 1)
	var mu sync.Mutex
	running, peak, done := 0, 0, 0
	m := metrics.New(prometheus.NewRegistry())
	ins := inserterFunc(func(ctx context.Context, tenant string, e store.Event) (int64, error) {
		if tenant == "hung" {
			select {
			case hungStarted <- struct{}{}:
			default:
			}
			select {
			case <-hang:
			case <-ctx.Done():
			}
			return 0, errDown
		}
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond) // an insert's service time: the load that overlaps flushes
		mu.Lock()
		running--
		done++
		mu.Unlock()
		return 1, nil
	})
	b := NewBuffer(BufferConfig{Concurrency: 3, BackoffMin: time.Millisecond, Tick: time.Millisecond}, ins, nil, m, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.Start()
	b.Enqueue("hung", ev("/h"))
	recvWithin(t, hungStarted, "the hung tenant's insert to start")
	for i := 0; i < 20; i++ {
		b.Enqueue(string(rune('a'+i)), ev("/x"))
	}
	wait.For(t, 10*time.Second, "the healthy tenants to flush past the hung one", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done == 20
	})
	close(hang)
	closeWithin(t, b, 0)
	if peak > 2 { // 3 slots, one held by the hung tenant
		t.Fatalf("peak concurrent healthy flushes %d, want <= 2 with Concurrency 3 and one hung", peak)
	}
}
