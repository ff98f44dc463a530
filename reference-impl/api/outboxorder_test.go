package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestOutboxHintCommittedLateIsNotSkipped: an outbox id is taken at INSERT and
// visible at COMMIT. A hint for tenant X whose transaction is held open while another hint (tenant
// Y) is written must still wake X's stream once it commits: the poller reads id > cursor, so the
// outbox must commit in id order (the same care as fs_events' sequence-row lock). X's event is in
// its tenant DB without any other signal, so only X's outbox hint can deliver it.
func TestOutboxHintCommittedLateIsNotSkipped(t *testing.T) {
	e := newEnv(t)
	b := e.pod("b", nil)
	x, kx := b.provision(t, "")
	y, _ := b.provision(t, "")
	sub := b.subscribe(t, kx, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	ctx := testCtx(t)
	stx, err := b.srv.Store(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := stx.InsertEvent(ctx, store.Event{Path: "/x-late", Op: "write", CreatedAt: time.Now()}, store.GuardLock) // no signal
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "b's poller to be idle", func() bool { return b.srv.SignalIdle(ctx) })
	c0 := b.srv.Poller().Cursor()

	meta := b.srv.Meta()
	tx, err := meta.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := store.InsertNotifyHeadsTx(ctx, tx, "another-pod", []string{x}, map[string]int64{x: seq}); err != nil {
		t.Fatal(err)
	}
	yDone := make(chan error, 1)
	go func() { // a later hint (higher id); with in-order commits it waits for X's transaction
		yDone <- meta.InsertNotifyHeads(ctx, "another-pod", []string{y}, map[string]int64{y: 1})
	}()
	// Give b's poller the chance to read Y's row above X's uncommitted id (it does, without the
	// in-order commit); not an assertion: in-order commits keep the cursor where it is.
	wait.Until(3*time.Second, func() bool { return b.srv.Poller().Cursor() != c0 })
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-yDone:
		if err != nil {
			t.Fatalf("Y's hint: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Y's hint insert did not return")
	}
	if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/x-late" }); !ok {
		t.Fatalf("X's late-committed hint was skipped: /x-late never delivered (frames %v, poller cursor %d from %d)", got, b.srv.Poller().Cursor(), c0)
	}
}

// TestOutboxOrderUnderOnePodsSlowMetaConnection: one pod's meta connection is slow (150 ms per round
// trip through a proxy only that pod uses), so its outbox transactions take their ids long before
// they commit, while another pod keeps committing hints for another tenant. A third pod's stream of
// the slow pod's tenant must still get every event, the last one included, with no later write to
// wake it. Without in-order outbox commits the poller read past the slow pod's open id and its last
// hint was lost.
func TestOutboxOrderUnderOnePodsSlowMetaConnection(t *testing.T) {
	e := newEnv(t)
	b := e.pod("b", nil)
	c := e.pod("c", nil)
	e.withMetaProxy()
	a := e.pod("a", nil) // the only pod behind the meta proxy
	_, kx := c.provision(t, "")
	_, ky := c.provision(t, "")
	a.write(t, kx, "/x/warm", "x") // auth cache warm before the latency
	b.write(t, ky, "/y/warm", "y")
	sub := c.subscribe(t, kx, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	if _, err := e.metaProxy.Toxics.AddToxicJson(strings.NewReader(`{"name":"slow","type":"latency","stream":"downstream","attributes":{"latency":150}}`)); err != nil {
		t.Fatal(err)
	}
	stopY := make(chan struct{})
	yDone := make(chan struct{})
	go func() { // another tenant's hints keep committing on pod b
		defer close(yDone)
		for i := 0; ; i++ {
			select {
			case <-stopY:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if code, m, err := b.try("PUT", fmt.Sprintf("/v1/fs/y/%d", i), ky, strings.NewReader("y"), nil); err != nil || code != 200 {
				t.Errorf("write y/%d: %d %v %v", i, code, m, err)
				return
			}
		}
	}()
	const n = 5
	for i := 0; i < n; i++ {
		a.write(t, kx, fmt.Sprintf("/x/%d", i), "x")
		time.Sleep(200 * time.Millisecond) // paces the load
	}
	time.Sleep(time.Second) // paces the load: b keeps committing while a's last hint is in flight
	close(stopY)
	<-yDone
	last := fmt.Sprintf("/x/%d", n-1)
	if got, ok := sub.until(t, 15*time.Second, func(f frame) bool { return f.Path == last }); !ok {
		t.Fatalf("%s never delivered on pod c (frames %v)", last, got)
	}
}
