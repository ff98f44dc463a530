package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestColdResumeAtHeadSkipsTenantDB: a consumer of a cold tenant reconnects to another pod with
// since=<head> (a failover) and the new pod answers from the meta DB's head hint: zero bytes reach
// the tenant DB (counted by a relay), the stream is current (heartbeat at the head) and still gets
// the next write. A reconnect with since < head still replays from the tenant DB (and is the
// relay's negative control: that one does show traffic).
func TestColdResumeAtHeadSkipsTenantDB(t *testing.T) {
	e := newEnv(t, poolDef{id: "cold", role: store.RoleDedicated, count: true})
	a := e.pod("a", nil)
	b := e.pod("b", nil)
	tenant, key := a.provision(t, "cold")
	first := a.subscribe(t, key, 0).start()
	for i := 0; i < 3; i++ {
		a.write(t, key, fmt.Sprintf("/f%d", i), "x")
	}
	if got, ok := first.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/f2" }); !ok {
		t.Fatalf("first subscriber missed the writes: %+v", got)
	}
	head := first.cursor
	first.close() // the consumer's connection breaks (its pod went away)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wait.For(t, 10*time.Second, "the outbox hints and head hint to settle", func() bool {
		h, ok, err := a.srv.Meta().SeqHead(ctx, tenant)
		return a.srv.SignalIdle(ctx) && b.srv.SignalIdle(ctx) && err == nil && ok && h == head
	})
	wait.For(t, 10*time.Second, "the write's lazy sweep to finish", func() bool { return !a.srv.Sweeper().Busy() })
	// Pod a's own passes over the then-active tenant can come late on a loaded machine: the baseline
	// is taken once the DB's traffic settled.
	before := settled(t, &e.counts["cold"].bytes, 500*time.Millisecond, 15*time.Second)

	re := b.subscribe(t, key, head).start()
	got, ok := re.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	if !ok || got[len(got)-1].Seq != head || len(got) != 1 {
		t.Fatalf("resume at head %d: want one heartbeat at the head, got %+v", head, got)
	}
	// Several outbox polls on both pods; the replay below (the control) shows its reads on the relay
	// within the same window.
	const window = time.Second
	wait.Never(t, window, "a byte to the cold tenant's DB after a resume at the head", func() bool {
		return e.counts["cold"].bytes.Load() != before
	})
	if n := counter(t, b, "eventlogd_sse_resumes_at_head_total", nil); n != 1 {
		t.Fatalf("eventlogd_sse_resumes_at_head_total = %v, want 1", n)
	}

	a.write(t, key, "/next", "y") // written on the other pod: reaches b through the outbox
	if got, ok := re.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/next" }); !ok {
		t.Fatalf("resumed stream missed the next write: %+v", got)
	}

	// since < head: the replay must come from the tenant DB, and the relay sees it within window.
	wait.For(t, 10*time.Second, "the lazy sweep of /next to finish", func() bool { return !a.srv.Sweeper().Busy() })
	before = settled(t, &e.counts["cold"].bytes, 500*time.Millisecond, 15*time.Second)
	mid := b.subscribe(t, key, head-1).start()
	wait.For(t, window, "the relay to count a replay's bytes (else the zero-byte check has no teeth)", func() bool {
		return e.counts["cold"].bytes.Load() != before
	})
	got, ok = mid.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/next" })
	if !ok || got[0].Path != "/f2" {
		t.Fatalf("resume at head-1 did not replay /f2 then /next: %+v", got)
	}
}

// TestResumeWithLaggingHeadHint makes the head hint lag on purpose (a 2 s outbox coalescing
// window holds the second write's hint) and resumes at the stale hint: on the writing pod the local
// head shows the newer seq, so it replays from the tenant DB at once; on the other pod the resume
// trusts the hint, and the outbox row that carries the newer hint wakes the stream, whose drain
// delivers the write. Nothing is skipped either way.
func TestResumeWithLaggingHeadHint(t *testing.T) {
	e := newEnv(t, poolDef{id: "cold", role: store.RoleDedicated})
	slow := func(c *api.Config) { c.OutboxCoalesce = 2 * time.Second }
	a := e.pod("a", slow)
	b := e.pod("b", slow)
	tenant, key := a.provision(t, "cold")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a.write(t, key, "/one", "x") // first hint after a quiet spell: written at once
	var seq1 int64
	wait.For(t, 10*time.Second, "the first head hint", func() bool {
		h, ok, err := a.srv.Meta().SeqHead(ctx, tenant)
		seq1 = h
		return err == nil && ok && h > 0 // provisioning wrote 0
	})
	a.write(t, key, "/two", "y") // its hint waits for the coalescing window
	if h, _, err := a.srv.Meta().SeqHead(ctx, tenant); err != nil || h != seq1 {
		t.Fatalf("head hint %d (%v): want it still at %d (the set-up needs a lagging hint)", h, err, seq1)
	}
	// b's poller has read the first hint's outbox row: only the lagging hint's row can wake b now.
	wait.For(t, 10*time.Second, "pod b's poller to pass the first outbox row", func() bool { return b.srv.SignalIdle(ctx) })
	for _, p := range []*pod{a, b} {
		s := p.subscribe(t, key, seq1).start()
		if got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/two" }); !ok {
			t.Fatalf("pod %s: resume at the lagging hint %d missed /two: %+v", p.url, seq1, got)
		}
	}
	if n := counter(t, a, "eventlogd_sse_resumes_at_head_total", nil); n != 0 {
		t.Fatalf("writing pod trusted a hint below its local head (%v resumes at head)", n)
	}
	if n := counter(t, b, "eventlogd_sse_resumes_at_head_total", nil); n != 1 {
		t.Fatalf("other pod: %v resumes at head, want 1 (the lagging-hint path was not exercised)", n)
	}
}

// TestResumeAtHeadFallsBackWhenMetaIsDown: with the meta DB unreachable the head hint cannot be
// read, so a resume at the head queries the tenant DB (bytes on its relay) and answers as before:
// the stream-current heartbeat at the head, no reset.
func TestResumeAtHeadFallsBackWhenMetaIsDown(t *testing.T) {
	e := newEnv(t, poolDef{id: "cold", role: store.RoleDedicated, count: true}).withMetaProxy()
	a := e.pod("a", nil)
	b := e.pod("b", nil)
	tenant, key := a.provision(t, "cold")
	a.write(t, key, "/one", "x")
	a.write(t, key, "/two", "y")
	ctx := testCtx(t)
	var head int64
	// The tenant's fresh database numbers the two events 1 and 2; the hint is raised asynchronously
	// (coalesced signals), so wait for the second write's value, not for any value.
	wait.For(t, 10*time.Second, "the head hint of both writes", func() bool {
		h, _, err := a.srv.Meta().SeqHead(ctx, tenant)
		head = h
		return err == nil && a.srv.SignalIdle(ctx) && h >= 2
	})
	warm := b.subscribe(t, key, 0).start() // caches the key on pod b (auth survives the outage)
	got, ok := warm.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	if !ok || got[0].Seq != head {
		t.Fatalf("initial sync: want reset at the head %d then a heartbeat, got %+v", head, got)
	}
	warm.close()
	e.metaProxy.Stop()
	defer func() { _ = e.metaProxy.Start() }()
	before := e.counts["cold"].bytes.Load()
	fromHint := counter(t, b, "eventlogd_sse_resumes_at_head_total", nil) // the warm-up's initial sync
	re := b.subscribe(t, key, head).start()
	got, ok = re.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	if !ok || len(got) != 1 || got[0].Seq != head {
		t.Fatalf("resume at head %d with the meta DB down: want one heartbeat at the head, got %+v", head, got)
	}
	if e.counts["cold"].bytes.Load() == before {
		t.Fatal("no tenant-DB query: the resume trusted a hint it could not read")
	}
	if n := counter(t, b, "eventlogd_sse_resumes_at_head_total", nil) - fromHint; n != 0 {
		t.Fatalf("%v resumes at head with the meta DB down, want 0", n)
	}
}

// TestNeverWrittenTenantStreamsWithoutTenantDB: provisioning records a head hint of 0, so a
// subscriber of a tenant that never wrote (since=0, the initial sync, and every reconnect at 0 on
// any pod) gets reset(initial_sync, 0) and the heartbeat with zero bytes on the tenant DB, and
// still receives the first write. The control is a tenant whose hint row is deleted: its initial
// sync queries the tenant DB.
func TestNeverWrittenTenantStreamsWithoutTenantDB(t *testing.T) {
	for _, noHint := range []bool{false, true} {
		t.Run(map[bool]string{false: "hint", true: "control-no-hint"}[noHint], func(t *testing.T) {
			e := newEnv(t, poolDef{id: "cold", role: store.RoleDedicated, count: true})
			a := e.pod("a", nil)
			b := e.pod("b", nil)
			tenant, key := a.provision(t, "cold")
			if noHint {
				if _, err := a.srv.Meta().DB.ExecContext(testCtx(t), `DELETE FROM tenant_seq_head WHERE tenant_id = ?`, tenant); err != nil {
					t.Fatal(err)
				}
			}
			before := e.counts["cold"].bytes.Load()
			for _, p := range []*pod{a, b, b} {
				s := p.subscribe(t, key, 0).start()
				got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
				if !ok || len(got) != 2 || got[0].Reason != "initial_sync" || got[0].Seq != 0 {
					t.Fatalf("want reset(initial_sync, 0) then a heartbeat, got %+v", got)
				}
				s.close()
			}
			delta := e.counts["cold"].bytes.Load() - before
			if noHint {
				if delta == 0 {
					t.Fatal("control: no hint, yet no tenant-DB bytes (the relay check has no teeth)")
				}
				return
			}
			if delta != 0 {
				t.Fatalf("three initial syncs of a never-written tenant sent %d bytes to its DB", delta)
			}
			s := b.subscribe(t, key, 0).start()
			s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }) // open before the write
			a.write(t, key, "/first", "x")
			if got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/first" }); !ok {
				t.Fatalf("missed the first write: %+v", got)
			}
		})
	}
}

// TestPodStartDoesNotWakeMigratedPools: a pod starting after the pools were migrated (recorded in
// the meta DB) sends zero bytes to a cold tenant's DB, also while it serves that tenant's resume at
// the head and initial sync (its handle opens lazily); the first write still works through it. The
// pod that wrote before is stopped by then, so every byte counted is the new pod's. The control
// deletes the records: the next pod start migrates the pool again (bytes).
func TestPodStartDoesNotWakeMigratedPools(t *testing.T) {
	e := newEnv(t, poolDef{id: "cold", role: store.RoleDedicated, count: true})
	a := e.pod("a", nil)
	_, key := a.provision(t, "cold")
	a.write(t, key, "/one", "x")
	ctx := testCtx(t)
	wait.For(t, 10*time.Second, "a's hints", func() bool { return a.srv.SignalIdle(ctx) })
	head := int64(0)
	s := a.subscribe(t, key, 0).start()
	if got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); ok {
		head = got[0].Seq
	}
	s.close()
	wait.For(t, 10*time.Second, "the write's lazy sweep to finish", func() bool { return !a.srv.Sweeper().Busy() })
	// Pod a is stopped first, so every byte counted below is the new pod's (a's late passes over the
	// then-active tenant can come late on a loaded machine). The baseline is taken once the DB's
	// traffic settled.
	a.close()
	before := settled(t, &e.counts["cold"].bytes, 500*time.Millisecond, 15*time.Second)

	// A restart: a new pod on the same meta DB. Its initial sync settles the seqs below the head
	// only when the head hint was written less than --sse-horizon-wait ago (a write of the tenant
	// could still be committing below it); the tenant has been quiet for longer than c's.
	c := e.pod("c", func(c *api.Config) { c.Stream.HorizonWait = 200 * time.Millisecond })
	// Its outbox poller starts on its own and then wakes every stream already open to re-read its
	// tenant (hints from before it started are never read): by design, a tenant-DB read, so the
	// streams open once it has started.
	wait.For(t, 10*time.Second, "c's outbox poller to start", func() bool { return c.srv.SignalIdle(ctx) })
	for _, since := range []int64{head, 0} {
		r := c.subscribe(t, key, since).start()
		if got, ok := r.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok || got[len(got)-1].Seq != head {
			t.Fatalf("since=%d on the new pod: %+v", since, got)
		}
		r.close()
	}
	if d := e.counts["cold"].bytes.Load() - before; d != 0 {
		t.Fatalf("a pod start and two streams sent %d bytes to a migrated cold tenant DB (recovery wakes %v)", d,
			counter(t, c, "eventlogd_fanout_recovery_wakes_total", nil))
	}
	c.write(t, key, "/two", "y") // the lazily opened handle works
	if e.counts["cold"].bytes.Load() == before {
		t.Fatal("a write through the new pod sent no bytes: the relay check has no teeth")
	}

	if _, err := c.srv.Meta().DB.ExecContext(ctx, `DELETE FROM pool_schema`); err != nil {
		t.Fatal(err)
	}
	mid := e.counts["cold"].bytes.Load()
	e.pod("d", nil)
	if e.counts["cold"].bytes.Load() == mid {
		t.Fatal("control: with no record, a pod start did not migrate the pool")
	}
}
