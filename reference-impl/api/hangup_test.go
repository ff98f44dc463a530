package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// A client that hangs up while its mutation's statement is on its way: the statement can commit on
// the server while the pod's driver, whose context the hang-up cancelled, returns an error. The
// mutation happened, so its event must be published; and a transaction the hang-up cut short after
// its events took their seqs would leave a hole every stream of the pool waits on.

// hangUp sends method path with body and gives up after d (the client hangs up); the answer never
// comes in time because every DB answer is held back by the proxy's latency.
func hangUp(t *testing.T, p *pod, key, method, path, body string, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, p.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := p.client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("%s %s answered %d before the client hung up: the test's latency did not hold it", method, path, resp.StatusCode)
	}
}

// TestHungUpMutationStillPublishesItsEvent: under --event-commit separate a PUT, create or mkdir
// whose client hangs up while the mutation's autocommit statement is in flight still commits it (the
// server ran it), and its event is published: a consumer sees the change.
func TestHungUpMutationStillPublishesItsEvent(t *testing.T) {
	for _, tc := range []struct {
		op, method, query, body string // no body for a POST: the server notices the hang-up once it read the body
	}{{"write", "PUT", "", "x"}, {"create", "POST", "?create", ""}, {"mkdir", "POST", "?mkdir", ""}} {
		t.Run(tc.op, func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
			p := e.pod("p", nil)
			_, k := p.provision(t, "ded")
			p.write(t, k, "/warm", "x")
			_, head := p.pullAll(t, k, 0, 100)
			px := e.proxies["ded"]
			if _, err := px.Toxics.AddToxicJson(strings.NewReader(`{"name":"late","type":"latency","stream":"downstream","attributes":{"latency":1000}}`)); err != nil {
				t.Fatal(err)
			}
			path := "/hung-" + tc.op
			handled := func() float64 {
				return counter(t, p, "eventlogd_mutations_total", map[string]string{"op": tc.op, "result": "ok"}) +
					counter(t, p, "eventlogd_mutations_total", map[string]string{"op": tc.op, "result": "error"})
			}
			before := handled()
			hangUp(t, p, k, tc.method, "/v1/fs"+path+tc.query, tc.body, 300*time.Millisecond)
			wait.For(t, 20*time.Second, "the pod to finish the hung-up request", func() bool { return handled() > before })
			if err := px.Toxics.RemoveToxic(testCtx(t), "late"); err != nil {
				t.Fatal(err)
			}
			wait.For(t, 20*time.Second, "the hung-up mutation in the tenant's files", func() bool {
				code, _, _ := p.raw(t, "GET", "/v1/fs"+path, k, nil, nil)
				return code == 200
			})
			var seen []string
			wait.For(t, 20*time.Second, "its event in a pull", func() bool {
				code, pg := p.pull(t, k, fmt.Sprintf("since=%d", head))
				seen = seen[:0]
				for _, ev := range pg.Events {
					seen = append(seen, ev.Op+" "+ev.Path)
				}
				return code == 200 && strings.Contains(strings.Join(seen, ","), tc.op+" "+path)
			})
		})
	}
}

// TestHungUpBatchLeavesNoHole: a batch write whose client hangs up in the middle of its transaction
// (every DB answer held back 500 ms: the hang-up lands between its events' INSERT and its COMMIT)
// still commits whole, so its events reach the stream and no stream of the pool waits on a
// rolled-back hole (no gap given up).
func TestHungUpBatchLeavesNoHole(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
	p := e.pod("p", nil)
	_, k := p.provision(t, "ded")
	p.write(t, k, "/warm", "x")
	sub := p.subscribe(t, k, 0).start()
	defer sub.close()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	px := e.proxies["ded"]
	if _, err := px.Toxics.AddToxicJson(strings.NewReader(`{"name":"late","type":"latency","stream":"downstream","attributes":{"latency":500}}`)); err != nil {
		t.Fatal(err)
	}
	// START TRANSACTION, two statements per file, the events' INSERT (sent after 7 answers, at
	// 3.5 s), COMMIT (sent at 4 s): the client gives up at 3.75 s.
	hangUp(t, p, k, "POST", "/v1/fs:batch-write", batchBody("hung", "/b/1", "/b/2", "/b/3"), 3750*time.Millisecond)
	if err := px.Toxics.RemoveToxic(testCtx(t), "late"); err != nil {
		t.Fatal(err)
	}
	p.write(t, k, "/after", "x")
	got, ok := sub.until(t, 30*time.Second, func(f frame) bool { return f.Path == "/after" })
	var batch []string
	for _, f := range got {
		if f.Batch == "hung" {
			batch = append(batch, f.Path)
		}
	}
	if !ok || strings.Join(batch, " ") != "/b/1 /b/2 /b/3" {
		t.Fatalf("stream: the hung-up batch's events %v (frames %+v), want all three before /after", batch, got)
	}
	if n := counter(t, p, "eventlogd_sse_horizon_gaps_given_up_total", nil); n != 0 {
		t.Fatalf("streams gave %v gaps up as holes, want 0", n)
	}
}
