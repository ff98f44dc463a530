package api_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
)

func TestAdminPollerStallDelaysCrossPodDeliveryUntilResume(t *testing.T) {
	e := newEnv(t)
	a := e.pod("a", nil)
	b := e.pod("b", nil)
	_, k := a.provision(t, "")
	sub := b.subscribe(t, k, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	if code, _ := b.do(t, "POST", "/v1/admin/poller/stall?for=bogus", "", nil, nil); code != 400 {
		t.Fatalf("bad duration: %d", code)
	}
	if code, _ := b.do(t, "POST", "/v1/admin/poller/stall?for=1m", "", nil, nil); code != 200 {
		t.Fatalf("stall: %d", code)
	}
	a.write(t, k, "/x", "1")
	const window = 3 * time.Second // the resumed poller (the control) delivers /x within it
	sub.never(t, window, "/x delivered through a stalled poller", func(f frame) bool { return f.Path == "/x" })
	if code, _ := b.do(t, "POST", "/v1/admin/poller/resume", "", nil, nil); code != 200 {
		t.Fatalf("resume: %d", code)
	}
	if got, ok := sub.until(t, window, func(f frame) bool { return f.Path == "/x" }); !ok {
		t.Fatalf("not delivered after resume: %+v", got)
	}
	code, m := b.do(t, "GET", "/v1/admin/buffer", "", nil, nil)
	if code != 200 || m["depth"] != float64(0) {
		t.Fatalf("admin buffer: %d %v", code, m)
	}
	// Admin is off by default.
	c := e.pod("c", func(cfg *api.Config) { cfg.Admin = false })
	if code, _ := c.do(t, "GET", "/v1/admin/buffer", "", nil, nil); code != 404 {
		t.Fatalf("admin without --admin: %d, want 404", code)
	}
}

func TestStalePodSweepDeletesItsCursor(t *testing.T) {
	e := newEnv(t)
	// A short heartbeat: the sweep runs on every heartbeat, and a loaded machine can make one tick
	// fail (it then skips its sweep), so the test waits for several ticks, not one 5 s period.
	logs := &lockedBuffer{}
	a := e.pod("a", func(c *api.Config) {
		c.PodStaleAfter = 2 * time.Second
		c.PodHeartbeat = 500 * time.Millisecond
		c.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	t.Cleanup(func() {
		if t.Failed() { // why no tick swept (a failed heartbeat or sweep is a warning, a sweep info)
			t.Logf("pod a's log:\n%s", logs.String())
		}
	})
	meta := a.srv.Meta().DB
	old := time.Now().UTC().Add(-time.Hour)
	if _, err := meta.Exec(`INSERT INTO pods (pod_id, started_at, heartbeat_at) VALUES ('dead', ?, ?)`, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := meta.Exec(`INSERT INTO tenant_outbox_cursor (pod_id, last_id, updated_at) VALUES ('dead', 0, ?)`, old); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, "stale pod sweep", func() bool {
		var pods, cursors int
		_ = meta.QueryRow(`SELECT COUNT(*) FROM pods WHERE pod_id = 'dead'`).Scan(&pods)
		_ = meta.QueryRow(`SELECT COUNT(*) FROM tenant_outbox_cursor WHERE pod_id = 'dead'`).Scan(&cursors)
		return pods == 0 && cursors == 0
	})
	wait.For(t, 30*time.Second, "the live pod's cursor and registry row", func() bool {
		var pods, cursors int
		_ = meta.QueryRow(`SELECT COUNT(*) FROM pods WHERE pod_id = 'a'`).Scan(&pods)
		_ = meta.QueryRow(`SELECT COUNT(*) FROM tenant_outbox_cursor WHERE pod_id = 'a'`).Scan(&cursors)
		return pods == 1 && cursors == 1
	})
}

// TestStalledPodCannotPinOutbox: a pod whose heartbeat is fine but whose poller is stuck keeps an
// old cursor; the prune gate ignores cursors older than the age bound. The unbounded variant (the
// unbounded-outbox-pinning defect) is pinned.
func TestStalledPodCannotPinOutbox(t *testing.T) {
	for _, bound := range []time.Duration{10 * time.Minute, 0} {
		t.Run(map[bool]string{true: "age-bound", false: "unbounded"}[bound > 0], func(t *testing.T) {
			e := newEnv(t)
			a := e.pod("a", func(c *api.Config) { c.OutboxPruneEvery = time.Hour }) // only the test prunes
			meta := a.srv.Meta()
			ctx := testCtx(t)
			old := time.Now().UTC().Add(-2 * time.Hour)
			for i := 0; i < 10; i++ {
				if _, err := meta.DB.Exec(`INSERT INTO tenant_notify_outbox (tenant_id, work, created_at) VALUES ('t', 'sse', ?)`, old); err != nil {
					t.Fatal(err)
				}
			}
			head, _ := meta.OutboxHead(ctx)
			if err := meta.UpsertCursor(ctx, "fresh", head); err != nil {
				t.Fatal(err)
			}
			if _, err := meta.DB.Exec(`INSERT INTO tenant_outbox_cursor (pod_id, last_id, updated_at) VALUES ('stalled', 0, ?)`, time.Now().UTC().Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			// "a" polls too; wait until its cursor reached the head so only "stalled" can pin.
			wait.For(t, 10*time.Second, "pod a's cursor", func() bool {
				c, ok, _ := meta.Cursor(ctx, "a")
				return ok && c >= head
			})
			n, err := meta.PruneOutbox(ctx, time.Hour, bound, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if bound > 0 && n != 10 {
				t.Fatalf("age-bound gate pruned %d of 10 rows", n)
			}
			if bound == 0 && n != 0 {
				t.Fatalf("unbounded gate pruned %d rows past a stalled cursor", n)
			}
		})
	}
}

// TestStalledPollerPinsOutboxOnlyUnderDefect runs the pinning scenario on whole pods: pod s's poller
// is stalled (its heartbeat is fine), pod w keeps writing. With the age bound, w prunes past s's stale
// cursor and the outbox stays short; with unbounded-outbox-pinning, rows pile up behind s's cursor.
func TestStalledPollerPinsOutboxOnlyUnderDefect(t *testing.T) {
	for _, pin := range []bool{false, true} {
		t.Run(map[bool]string{false: "age-bound", true: "unbounded-outbox-pinning"}[pin], func(t *testing.T) {
			e := newEnv(t)
			mod := func(c *api.Config) {
				c.OutboxRetention = 200 * time.Millisecond
				c.OutboxCursorMaxAge = 500 * time.Millisecond
				c.OutboxPruneEvery = 100 * time.Millisecond
				if pin {
					c.Defects = defect.Set{defect.UnboundedOutboxPinning: true}
				}
			}
			w := e.pod("w", mod)
			s := e.pod("s", mod)
			_, k := w.provision(t, "")
			qctx := testCtx(t)
			wait.For(t, 10*time.Second, "pod s's cursor", func() bool {
				_, ok, _ := s.srv.Meta().Cursor(qctx, "s")
				return ok
			})
			s.srv.Poller().Stall(time.Minute)
			for i := 0; i < 15; i++ {
				w.write(t, k, "/x", "1")
				time.Sleep(100 * time.Millisecond) // paces the load: 15 writes over 1.5 s age the outbox
			}
			var rows int
			_ = w.srv.Meta().DB.QueryRow(`SELECT COUNT(*) FROM tenant_notify_outbox`).Scan(&rows)
			age := counter(t, w, "drive9_tenant_outbox_backlog_oldest_age_seconds", nil)
			if pin && (rows < 10 || age < 1) {
				t.Fatalf("defect: %d outbox rows, oldest %.1fs: the stalled cursor did not pin", rows, age)
			}
			if !pin && (rows > 8 || age > 1) {
				t.Fatalf("age bound: %d outbox rows, oldest %.1fs: the stalled cursor pinned the outbox", rows, age)
			}
		})
	}
}
