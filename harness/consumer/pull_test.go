package consumer

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// pullScript answers poll i (0-based) with answers[i] (status and body), then empty pages at the
// last next_since it served.
type pullScript struct {
	mu      sync.Mutex
	n       int
	queries []string
	answers []pullAnswer
}

type pullAnswer struct {
	code int
	body string
}

func (s *pullScript) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer key" || r.URL.Path != "/v1/events/changes" {
		w.WriteHeader(401)
		return
	}
	s.mu.Lock()
	i := s.n
	s.n++
	s.queries = append(s.queries, r.URL.RawQuery)
	s.mu.Unlock()
	a := pullAnswer{200, `{"events":[],"next_since":` + r.URL.Query().Get("since") + `,"has_more":false}`}
	if i < len(s.answers) {
		a = s.answers[i]
	}
	w.WriteHeader(a.code)
	fmt.Fprint(w, a.body)
}

func (s *pullScript) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

func pullCfg() Config {
	return Config{Durable: true, Pull: true, PollInterval: time.Millisecond, PageSize: 2, IdleTimeout: 5 * time.Second}
}

func TestPullFollowsNextSinceAndMapsAnswers(t *testing.T) {
	sc := &pullScript{answers: []pullAnswer{
		{200, `{"events":[{"seq":1,"path":"/a","op":"write"},{"seq":2,"path":"/d","op":"mkdir"}],"next_since":2,"has_more":true}`},
		{200, `{"events":[{"seq":3,"path":"/b","op":"write"}],"next_since":3,"has_more":false}`},
		{410, `{"error":"swept","reason":"seq_too_old","oldest_seq":9,"next_since":8}`},
		{200, `{"events":[{"seq":9,"path":"/c","op":"write"}],"next_since":9,"has_more":false}`},
	}}
	srv := httptest.NewServer(sc)
	defer srv.Close()
	c, s := run(t, []Endpoint{{"pod-1", srv.URL}}, pullCfg(), func(c *Consumer) bool { return c.Cursor() == 9 && c.Events() == 3 })
	q := sc.seen()
	if len(q) < 4 || q[0] != "since=0&limit=2" || q[1] != "since=2&limit=2" || q[2] != "since=3&limit=2" || q[3] != "since=8&limit=2" {
		t.Fatalf("queries %q: want since to follow next_since (0, 2, 3, then 8 after the 410)", q)
	}
	want := []string{"conn:open", "ev:1", "reset:2", "ev:3", "reset:8", "ev:9"}
	if got := kinds(s.Records()); len(got) < len(want) || fmt.Sprint(got[:len(want)]) != fmt.Sprint(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	var reasons []string
	for _, r := range s.Records() {
		switch r.K {
		case ledger.KindReset:
			reasons = append(reasons, r.Reason+" "+r.Path+" "+r.Op)
		case ledger.KindConn:
			if r.Kind != KindPull || r.Pod != "pod-1" {
				t.Errorf("conn %+v: want kind pull on pod-1", r)
			}
		}
	}
	if strings.Join(reasons, ",") != "structural_change /d mkdir,seq_too_old  " {
		t.Errorf("resets %q", reasons)
	}
	if sum := c.Summary(); sum.Kind != KindPull || sum.FinalCursor != 9 || sum.FirstSince != 0 || !sum.Durable {
		t.Errorf("summary %+v", sum)
	}
}

// TestPullFailsOverAndKeepsItsCheckpoint: a pod that answers 503 is a failed "connection"; the
// consumer moves on and resumes at its checkpoint, never at 0.
func TestPullFailsOverAndKeepsItsCheckpoint(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer bad.Close()
	sc := &pullScript{answers: []pullAnswer{{200, `{"events":[{"seq":4,"path":"/a","op":"write"}],"next_since":4,"has_more":false}`}}}
	good := httptest.NewServer(sc)
	defer good.Close()
	cfg := pullCfg()
	cfg.Resume, cfg.Since = true, 3
	_, s := run(t, []Endpoint{{"bad", bad.URL}, {"good", good.URL}}, cfg, func(c *Consumer) bool { return c.Cursor() == 4 })
	recs := s.Records()
	if len(recs) < 2 || recs[0].Phase != "fail" || recs[0].Pod != "bad" || recs[0].Err != "HTTP 503" || recs[0].Since != 3 ||
		recs[1].Phase != "open" || recs[1].Pod != "good" {
		t.Fatalf("records %+v: want a fail on bad at since 3, then an open on good", recs)
	}
	if q := sc.seen(); q[0] != "since=3&limit=2" {
		t.Fatalf("first poll of the good pod: %q, want since=3", q[0])
	}
}

// TestPullRefusesBrokenAnswers: answers a consumer cannot act on fail the poll (a conn fail naming
// why), never move the checkpoint.
func TestPullRefusesBrokenAnswers(t *testing.T) {
	for _, a := range []pullAnswer{
		{200, `{"events":[{"path":"/a","op":"write"}],"next_since":1}`},
		{200, `not json`},
		{410, `{"error":"gone"}`},
		{500, `{}`},
	} {
		t.Run(a.body, func(t *testing.T) {
			sc := &pullScript{answers: []pullAnswer{a, a, a}}
			srv := httptest.NewServer(sc)
			defer srv.Close()
			c, s := run(t, []Endpoint{{"p", srv.URL}}, pullCfg(), func(*Consumer) bool { return len(sc.seen()) >= 2 })
			recs := s.Records()
			if len(recs) == 0 || recs[0].K != ledger.KindConn || recs[0].Phase != "fail" || recs[0].Err == "" || c.Cursor() != 0 {
				t.Fatalf("records %+v cursor %d: want a conn fail and the checkpoint at 0", recs, c.Cursor())
			}
		})
	}
}

// TestPullDisconnectClosesAndResumes: Disconnect ends the current run of polls with a close; the
// next one opens a new conn from the checkpoint.
func TestPullDisconnectClosesAndResumes(t *testing.T) {
	sc := &pullScript{answers: []pullAnswer{{200, `{"events":[{"seq":1,"path":"/a","op":"write"}],"next_since":1,"has_more":false}`}}}
	srv := httptest.NewServer(sc)
	defer srv.Close()
	var once sync.Once
	_, s := run(t, []Endpoint{{"p", srv.URL}}, pullCfg(), func(c *Consumer) bool {
		if c.Cursor() == 1 {
			once.Do(func() { _ = c.Disconnect() })
		}
		opens := 0
		for _, r := range c.cfg.Sink.(*ledger.Memory).Records() {
			if r.K == ledger.KindConn && r.Phase == "open" {
				opens++
			}
		}
		return opens == 2
	})
	got := kinds(s.Records())
	if len(got) < 4 || fmt.Sprint(got[:4]) != "[conn:open ev:1 conn:close conn:open]" {
		t.Fatalf("records %v", got)
	}
	if q := sc.seen(); !strings.HasPrefix(q[len(q)-1], "since=1&") {
		t.Fatalf("after the disconnect: %q, want since=1", q[len(q)-1])
	}
}

// FuzzDecodePage: whatever a target answers, decoding never panics, and what it accepts is what the
// consumer acts on without checking again: every event of a page has a seq, a 410 has a next_since.
func FuzzDecodePage(f *testing.F) {
	for _, s := range []string{
		`{"events":[{"seq":1,"path":"/a","op":"write","batch":"b1"}],"next_since":1,"has_more":true}`,
		`{"events":[{"path":"/a"}]}`, `{"oldest_seq":9}`, `{"next_since":8}`, `{}`, `null`, `[1]`,
	} {
		f.Add(200, s)
		f.Add(410, s)
	}
	f.Fuzz(func(t *testing.T, status int, body string) {
		pg, gone, err := decodePage(status, strings.NewReader(body))
		if err != nil {
			return
		}
		if status != 200 && status != 410 || gone != (status == 410) || (gone && pg.NextSince == nil) {
			t.Fatalf("status %d accepted: gone %v next_since %v", status, gone, pg.NextSince)
		}
		for i, e := range pg.Events {
			if !gone && e.Seq == nil {
				t.Fatalf("events[%d] accepted without a seq", i)
			}
		}
	})
}
