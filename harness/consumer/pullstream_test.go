package consumer

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
)

// TestPullThenStreamHandsOverOneCursor: the consumer pulls up to the head, streams from the pull's
// cursor, and after a server_restart reset lists, pulls again from the reset's seq and streams
// from where that pull ended; its records make one cursor (every seq above the last).
func TestPullThenStreamHandsOverOneCursor(t *testing.T) {
	pulls := &pullScript{answers: []pullAnswer{
		{200, `{"events":[{"seq":1,"path":"/sg/r/ten/a","op":"write"}],"next_since":1,"has_more":true}`},
		{200, `{"events":[{"seq":2,"path":"/sg/r/ten/b","op":"write"}],"next_since":2,"has_more":false}`},
		{200, `{"events":[{"seq":6,"path":"/sg/r/ten/c","op":"write"}],"next_since":6,"has_more":false}`},
	}}
	restart := "event: reset\ndata: {\"seq\":5,\"reason\":\"server_restart\"}\n\n"
	ev3 := "event: file_changed\ndata: {\"seq\":3,\"path\":\"/sg/r/ten/x\",\"op\":\"write\"}\n\n"
	ev7 := "event: file_changed\ndata: {\"seq\":7,\"path\":\"/sg/r/ten/y\",\"op\":\"write\"}\n\n"
	streams := &script{frames: [][]string{{ev3, restart}, {ev7}}, hold: true}
	tr := &tree{dirs: map[string][]listEntry{"/sg/r/ten/": {file("a", 1)}}}
	mux := http.NewServeMux()
	mux.Handle("/v1/events/changes", pulls)
	mux.Handle("/v1/events", streams)
	mux.Handle("/v1/fs/", tr)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := Config{Durable: true, PullFirst: true, PageSize: 1, Resync: true, ListDir: "/sg/r/ten/"}
	c, s := run(t, []Endpoint{{"pod-1", srv.URL}}, cfg, func(c *Consumer) bool { return c.Cursor() == 7 })
	if got := pulls.seen(); len(got) < 3 || got[0] != "since=0&limit=1" || got[1] != "since=1&limit=1" || got[2] != "since=5&limit=1" {
		t.Errorf("pulls %v, want since 0, 1, then 5 (the reset's seq)", got)
	}
	if got := streams.sinces(); len(got) < 2 || got[0] != "2" || got[1] != "6" {
		t.Errorf("stream sinces %v, want 2 (the first pull's cursor) then 6 (the second's)", got)
	}
	var seqs []string
	var last int64
	for _, r := range s.Records() {
		switch r.K {
		case ledger.KindEv, ledger.KindReset:
			if r.Seq <= last {
				t.Errorf("seq %d after %d: the handoff broke the cursor", r.Seq, last)
			}
			last = r.Seq
			seqs = append(seqs, fmt.Sprintf("%s:%d@%s", r.K, r.Seq, r.Conn))
		case ledger.KindResync:
			seqs = append(seqs, fmt.Sprintf("resync:%d@%s", int64(r.AfterSeq), r.Conn))
		case ledger.KindConn:
			if strings.HasSuffix(r.Conn, ".pull") != (r.Kind == KindPull) {
				t.Errorf("conn record %+v: pull connections, and only they, are kind pull", r)
			}
		}
	}
	want := "[ev:1@c1.1.pull ev:2@c1.1.pull ev:3@c1.1 reset:5@c1.1 resync:5@c1.1 ev:6@c1.2.pull ev:7@c1.2]"
	if fmt.Sprint(seqs) != want {
		t.Errorf("records %v, want %s", seqs, want)
	}
	if sum := c.Summary(); sum.Kind != KindPullThenStream || sum.FirstSince != 0 || sum.FinalCursor != 7 {
		t.Errorf("summary %+v", sum)
	}
}

// TestPullThenStreamOnAnEmptyTenant: a pull that ends at 0 makes the stream a fresh subscription;
// its initial_sync is listed and streamed on, not pulled again (else the consumer would loop
// between pull and stream until the tenant's first write).
func TestPullThenStreamOnAnEmptyTenant(t *testing.T) {
	pulls := &pullScript{}
	ev1 := "event: file_changed\ndata: {\"seq\":1,\"path\":\"/sg/r/ten/a\",\"op\":\"write\"}\n\n"
	streams := &script{frames: [][]string{{initSync, ev1}}, hold: true}
	tr := &tree{dirs: map[string][]listEntry{}}
	mux := http.NewServeMux()
	mux.Handle("/v1/events/changes", pulls)
	mux.Handle("/v1/events", streams)
	mux.Handle("/v1/fs/", tr)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := Config{Durable: true, PullFirst: true, PageSize: 10, Resync: true, ListDir: "/sg/r/ten/"}
	c, s := run(t, []Endpoint{{"pod-1", srv.URL}}, cfg, func(c *Consumer) bool { return c.Cursor() == 1 })
	if got := pulls.seen(); len(got) != 1 {
		t.Errorf("pulls %v, want one (before the first stream only)", got)
	}
	if got := streams.sinces(); len(got) != 1 {
		t.Errorf("streams %v, want one", got)
	}
	if made, failed := c.Resyncs(); made != 1 || failed != 0 {
		t.Errorf("resyncs %d (failed %d), want the initial_sync's listing", made, failed)
	}
	_ = s
}
