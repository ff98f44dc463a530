package api_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// writeMany issues n writes with 8 concurrent writers and returns the achieved rate. A failed write
// stops the producer and fails the test with its error (a worker must not t.Fatal: the producer
// would then block forever on the channel, hanging the whole package).
func writeMany(t *testing.T, p *pod, key, prefix string, n int) float64 {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	ch := make(chan int)
	failed := make(chan string, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				path := fmt.Sprintf("%s/%d", prefix, i)
				if code, m, err := p.try("PUT", "/v1/fs"+path, key, strings.NewReader("x"), nil); err != nil || code != 200 {
					failed <- fmt.Sprintf("write %s: %d %v %v", path, code, m, err)
					return
				}
			}
		}()
	}
	var fail string
produce:
	for i := 0; i < n; i++ {
		select {
		case ch <- i:
		case fail = <-failed:
			break produce
		}
	}
	close(ch)
	mustWithin(t, 2*time.Minute, "writeMany's writers to finish", wg.Wait)
	if fail == "" {
		select {
		case fail = <-failed:
		default:
		}
	}
	if fail != "" {
		t.Fatal(fail)
	}
	return float64(n) / time.Since(start).Seconds()
}

func TestQuietTenantReplaysWholeBacklog(t *testing.T) {
	const backlog = 2500
	for _, single := range []bool{false, true} {
		t.Run(map[bool]string{false: "paginated", true: "single-page-replay"}[single], func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
			p := e.pod("p", func(c *api.Config) {
				c.Stream.ReplayHeartbeatPages = 1
				if single {
					c.Defects = defect.Set{defect.SinglePageReplay: true}
				}
			})
			_, k := p.provision(t, "ded")
			p.write(t, k, "/first", "x")
			rate := writeMany(t, p, k, "/bulk", backlog)
			t.Logf("%d writes (mutation + event insert) at %.0f/s over HTTP, 8 writers", backlog, rate)

			qctx := testCtx(t)
			// Once every hint is read back no wake is left: the bus publishes only to streams
			// subscribed when it publishes, and this stream subscribes after.
			wait.For(t, 10*time.Second, "wakes to settle", func() bool { return p.srv.SignalIdle(qctx) })
			start := time.Now()
			sub := p.subscribe(t, k, 1).start() // the tenant stays quiet from here on
			var events, heartbeats int
			last := int64(1)
			count := func(f frame) {
				switch f.Type {
				case "file_changed":
					if f.Seq <= last {
						t.Fatalf("seq %d after %d", f.Seq, last)
					}
					last = f.Seq
					events++
				case "heartbeat":
					heartbeats++
				}
			}
			// Both variants read the first page (1000 events and its heartbeat). Then the paginated
			// stream is the control: its next frame comes within window, the window over which the
			// single-page defect must send nothing more.
			const window = 2 * time.Second
			got, _ := sub.until(t, 60*time.Second, func(f frame) bool {
				count(f)
				return f.Type == "heartbeat" && events == 1000
			})
			if events != 1000 {
				t.Fatalf("%d events before the first page's heartbeat, want one page (1000)", events)
			}
			more, ok := sub.until(t, window, func(f frame) bool { count(f); return true })
			if single {
				if ok {
					t.Fatalf("single-page defect kept streaming: %+v within %v", more, window)
				}
				return
			}
			if !ok {
				t.Fatalf("control: the paginated replay sent nothing within %v after its first page", window)
			}
			got = append(got, more...)
			if events < backlog {
				rest, _ := sub.until(t, 60*time.Second, func(f frame) bool {
					count(f)
					return f.Type == "heartbeat" && events == backlog
				})
				got = append(got, rest...)
			}
			if events != backlog {
				t.Fatalf("replayed %d of %d (frames %d)", events, backlog, len(got))
			}
			if heartbeats < 3 {
				t.Fatalf("want a heartbeat after each full page plus the final one, got %d", heartbeats)
			}
			t.Logf("replayed %d backlog events in %v (%.0f events/s)", backlog, time.Since(start), float64(backlog)/time.Since(start).Seconds())
		})
	}
}

func TestOneWakeDrainsBurstAcrossPages(t *testing.T) {
	const burst = 2500
	for _, single := range []bool{false, true} {
		t.Run(map[bool]string{false: "event-driven-drain", true: "single-page-replay"}[single], func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
			p := e.pod("p", func(c *api.Config) {
				c.Stream.PageSize = 100
				c.Stream.MaxPagesPerWake = 2
				if single {
					c.Defects = defect.Set{defect.SinglePageReplay: true}
				}
			})
			tenant, k := p.provision(t, "ded")
			sub := p.subscribe(t, k, 0).start()
			sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
			st, err := p.srv.Store(testCtx(t), tenant)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < burst; i++ { // durable rows, but no wake
				if _, err := st.InsertEvent(testCtx(t), store.Event{Path: fmt.Sprintf("/burst/%d", i), Op: "write", CreatedAt: time.Now()}, store.GuardLock); err != nil {
					t.Fatal(err)
				}
			}
			p.write(t, k, "/wake", "x") // exactly one wake
			// Both arms count file_changed frames over the same window from the first one on: the
			// event-driven drain (the control) passes the 200 of two pages within it; the single-page
			// defect reads one page per wake (the local bus and this pod's own outbox hint make at
			// most two wakes) and must not.
			const window = 2 * time.Second
			got, ok := sub.until(t, 30*time.Second, func(f frame) bool { return f.Type == "file_changed" })
			if !ok {
				t.Fatalf("no event delivered after one write: %+v", got)
			}
			n := 1
			more, past := sub.until(t, window, func(f frame) bool {
				if f.Type == "file_changed" {
					n++
				}
				return n > 200
			})
			got = append(got, more...)
			if single {
				if past {
					t.Fatalf("single-page defect: more than 200 events within %v of the first, want one page per wake", window)
				}
				return
			}
			if !past {
				t.Fatalf("control: the drain delivered %d events within %v of the first, want more than two pages (200)", n, window)
			}
			rest, ok := sub.until(t, 30*time.Second, func(f frame) bool { return f.Path == "/wake" })
			got = append(got, rest...)
			n = countType(got, "file_changed")
			if !ok || n != burst+1 {
				t.Fatalf("one wake drained %d of %d", n, burst+1)
			}
		})
	}
}
