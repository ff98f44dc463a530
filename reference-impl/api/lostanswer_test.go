package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestLostInsertAnswerIsNotStoredTwice: the tenant DB's answers come 1.5 s late (a latency toxic on
// the proxy's downstream) while a hot event insert waits at most 1 s, so a write's event row
// commits and its insert still fails: the event is buffered although it is stored. That is the
// condition under which a blind retry stores it twice, and the test asserts it holds (the row is
// there while the entry waits in the buffer). The flush looks the row up (store.FindEvent) and
// inserts nothing: one row, flushed ok, and the subscriber gets the path once.
func TestLostInsertAnswerIsNotStoredTwice(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
	p := e.pod("p", func(c *api.Config) {
		c.EventInsertTimeout = time.Second
		c.Buffer.BackoffMin = 2 * time.Second // the row is looked at below before the first flush
		c.Buffer.BackoffMax = 2 * time.Second
	})
	_, k := p.provision(t, "ded")
	sub := p.subscribe(t, k, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	p.write(t, k, "/first", "x")
	if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/first" }); !ok {
		t.Fatalf("/first not delivered: %+v", got)
	}
	px := e.proxies["ded"]
	if _, err := px.Toxics.AddToxicJson(strings.NewReader(`{"name":"late","type":"latency","stream":"downstream","attributes":{"latency":1500}}`)); err != nil {
		t.Fatal(err)
	}
	p.write(t, k, "/late", "x") // the upsert answers after 1.5 s; the event insert gives up after 1 s
	if got := counter(t, p, "eventlogd_event_insert_results_total", map[string]string{"path": "hot", "result": "error"}); got != 1 {
		t.Fatalf("hot insert errors = %v, want 1 (the insert whose answer came too late)", got)
	}
	if d := p.srv.Buffer().Depth(); d != 1 {
		t.Fatalf("retry buffer depth %d, want 1", d)
	}
	if n := fsEventsCount(t, e, "ded", "/late"); n != 1 {
		t.Fatalf("%d rows for /late while its event is buffered, want 1: the insert committed although it failed (the condition this test is about)", n)
	}
	if err := px.Toxics.RemoveToxic(testCtx(t), "late"); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, "the flush", func() bool { return p.srv.Buffer().Depth() == 0 })
	if n := fsEventsCount(t, e, "ded", "/late"); n != 1 {
		t.Fatalf("%d rows for /late after the flush, want 1 (stored twice)", n)
	}
	if got := counter(t, p, "drive9_sse_event_retry_flush_total", map[string]string{"result": "ok"}); got != 1 {
		t.Fatalf("flushes ok = %v, want 1", got)
	}
	p.write(t, k, "/after", "x")
	got, ok := sub.until(t, 20*time.Second, func(f frame) bool { return f.Path == "/after" })
	if !ok {
		t.Fatalf("/after not delivered: %+v", got)
	}
	n := 0
	for _, f := range got {
		if f.Path == "/late" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("/late delivered %d times, want once: %+v", n, got)
	}
}
