package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// changesPage is the decoded answer of GET /v1/events/changes.
type changesPage struct {
	Events []struct {
		Seq   int64  `json:"seq"`
		Path  string `json:"path"`
		Op    string `json:"op"`
		Ts    int64  `json:"ts"`
		Batch string `json:"batch"`
	} `json:"events"`
	NextSince int64  `json:"next_since"`
	HasMore   bool   `json:"has_more"`
	Error     string `json:"error"`
	Reason    string `json:"reason"`
	OldestSeq int64  `json:"oldest_seq"`
}

// pull asks for one page; query is the raw query string.
func (p *pod) pull(t *testing.T, key, query string) (int, changesPage) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), "GET", p.url+"/v1/events/changes?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var pg changesPage
	if err := json.Unmarshal(b, &pg); err != nil {
		t.Fatalf("changes?%s: %d %q: %v", query, resp.StatusCode, b, err)
	}
	return resp.StatusCode, pg
}

// pullAll follows next_since from since until has_more is false; it returns the paths in order.
// next_since is the last event's seq or, under GuardHorizon, a later seq every row up to which was
// judged (another tenant's).
func (p *pod) pullAll(t *testing.T, key string, since int64, limit int) (paths []string, next int64) {
	t.Helper()
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			t.Fatal("pullAll: no end after 10,000 pages")
		}
		code, pg := p.pull(t, key, fmt.Sprintf("since=%d&limit=%d", since, limit))
		if code != 200 {
			t.Fatalf("since=%d: %d %+v", since, code, pg)
		}
		for _, e := range pg.Events {
			if e.Seq <= since {
				t.Fatalf("since=%d returned seq %d", since, e.Seq)
			}
			since = e.Seq
			paths = append(paths, e.Path)
		}
		if pg.NextSince < since {
			t.Fatalf("next_since %d, want at least the last seq %d", pg.NextSince, since)
		}
		since = pg.NextSince // past the last event when other tenants' seqs follow it (GuardHorizon)
		if !pg.HasMore {
			return paths, since
		}
	}
}

func TestChangesPagesLimitsAndErrors(t *testing.T) {
	e := newEnv(t, poolDef{id: "shared", role: store.RoleShared})
	p := e.pod("p", nil)
	_, k := p.provision(t, "shared")
	_, other := p.provision(t, "shared")
	const n = 101
	for i := 0; i < n; i++ {
		p.write(t, k, fmt.Sprintf("/f/%03d", i), "x")
	}
	p.write(t, other, "/other", "x") // same DB, other tenant: never in k's pages
	p.do(t, "POST", "/v1/fs/d?mkdir", k, nil, nil)

	code, pg := p.pull(t, k, "")
	if code != 200 || len(pg.Events) != 100 || !pg.HasMore || pg.NextSince != pg.Events[99].Seq {
		t.Fatalf("default limit: %d, %d events, has_more %v, next %d; want 100 events, has_more", code, len(pg.Events), pg.HasMore, pg.NextSince)
	}
	code, pg = p.pull(t, k, "since=0&limit=1000")
	if code != 200 || len(pg.Events) != n+1 || pg.HasMore {
		t.Fatalf("limit=1000: %d, %d events, has_more %v; want %d, false", code, len(pg.Events), pg.HasMore, n+1)
	}
	if last := pg.Events[n]; last.Path != "/d" || last.Op != "mkdir" {
		t.Fatalf("structural op in a page: %+v, want /d mkdir", last)
	}
	code, pg = p.pull(t, k, fmt.Sprintf("since=%d&limit=1", pg.NextSince))
	if code != 200 || len(pg.Events) != 0 || pg.HasMore || pg.NextSince == 0 {
		t.Fatalf("at the head: %d %+v, want an empty page keeping next_since", code, pg)
	}
	paths, _ := p.pullAll(t, k, 0, 7)
	if len(paths) != n+1 {
		t.Fatalf("pages of 7: %d paths, want %d", len(paths), n+1)
	}
	for i := 0; i < n; i++ {
		if want := fmt.Sprintf("/f/%03d", i); paths[i] != want {
			t.Fatalf("path %d = %s, want %s (order)", i, paths[i], want)
		}
	}
	if got, _ := p.pullAll(t, other, 0, 1000); len(got) != 1 || got[0] != "/other" {
		t.Fatalf("other tenant's pages: %v, want only /other", got)
	}

	for _, c := range []struct{ query, field string }{
		{"limit=0", "limit"}, {"limit=1001", "limit"}, {"limit=-1", "limit"}, {"limit=ten", "limit"},
		{"since=-1", "since"}, {"since=abc", "since"}, {"since=1.5", "since"},
	} {
		code, pg := p.pull(t, k, c.query)
		if code != 400 || !strings.HasPrefix(pg.Error, c.field+":") {
			t.Errorf("%s: %d %q, want 400 naming %s", c.query, code, pg.Error, c.field)
		}
	}
	if code, _ := p.pull(t, "", "since=0"); code != 401 {
		t.Errorf("no key: %d, want 401", code)
	}
	if code, _ := p.pull(t, "not-a-key", "since=0"); code != 401 {
		t.Errorf("wrong key: %d, want 401", code)
	}
}

// TestChangesGoneAfterSweep: a since below the sweep mark is 410 with the oldest retained seq,
// exactly where a stream says seq_too_old; at or above the mark the page is served.
func TestChangesGoneAfterSweep(t *testing.T) {
	for _, role := range []string{store.RoleDedicated, store.RoleShared} {
		t.Run(role, func(t *testing.T) {
			p, tenant, k := sweptTenant(t, role, func(p *pod, k string) {
				if code, pg := p.pull(t, k, "since=1"); code != 200 || len(pg.Events) != 4 {
					t.Fatalf("before the sweep: %d %+v, want 4 events (control)", code, pg)
				}
			})
			for _, c := range []struct {
				since int64
				code  int
				first string
			}{
				{0, 410, ""}, {1, 410, ""}, {4, 410, ""},
				{5, 200, "/new"}, // everything after 5 is retained
				{6, 200, ""},
				{9, 200, ""}, // above the head: an empty page until the tenant gets there
			} {
				code, pg := p.pull(t, k, fmt.Sprintf("since=%d", c.since))
				if code != c.code {
					t.Fatalf("since=%d: %d %+v, want %d", c.since, code, pg, c.code)
				}
				if code == 410 {
					if pg.OldestSeq != 6 || pg.NextSince != 5 || pg.Reason != "seq_too_old" {
						t.Fatalf("since=%d: %+v, want oldest_seq 6, next_since 5, reason seq_too_old", c.since, pg)
					}
					continue
				}
				first := ""
				if len(pg.Events) > 0 {
					first = pg.Events[0].Path
				}
				if first != c.first || (first == "" && pg.NextSince != c.since) {
					t.Fatalf("since=%d: %+v, want first %q", c.since, pg, c.first)
				}
			}
			if n := counter(t, p, "drive9_sse_resets_sent_total", map[string]string{"tenant_id": tenant, "reason": "seq_too_old"}); n != 3 {
				t.Fatalf("seq_too_old counted %v, want 3 (one per 410)", n)
			}
		})
	}
}

// TestChangesNeverPassALateCommit: with an insert's transaction held open, a pull never returns a
// seq past it, under each guard:
//   - lock: the later write waits on the sequence row, and so does a pull's page read (the test
//     commits only once it sees the read waiting): it answers the late row first;
//   - horizon: the later write commits above the open insert; a pull that finds the gap first waits
//     for it inside the request (it reads again and again: the test commits only after it saw two
//     reads), and answers the late row first;
//   - late-commit-skip (no guard): the later write commits first, and a poller that follows
//     next_since never sees the late row.
func TestChangesNeverPassALateCommit(t *testing.T) {
	for _, mode := range []string{"lock", "horizon", "late-commit-skip"} {
		t.Run(mode, func(t *testing.T) {
			skip := mode == "late-commit-skip"
			e, p := defectPod(t, defect.LateCommitSkip, skip, func(c *api.Config) {
				c.EventInsertTimeout = 20 * time.Second
				c.Stream.HorizonWait = 5 * time.Minute // the late commit comes long before: never given up
				c.Guard = store.Guards[mode]
			})
			tenant, k := p.provision(t, "ded")
			p.write(t, k, "/first", "x")
			_, since := p.pullAll(t, k, 0, 100)

			h := holdInsert(t, e, p, tenant, k, mode == "lock")
			var seen []string
			switch mode {
			case "late-commit-skip":
				wait.For(t, 10*time.Second, "the second event in a page", func() bool {
					got, next := p.pullAll(t, k, since, 100)
					seen, since = append(seen, got...), next
					return len(seen) > 0
				})
				h.commit(t)
			default: // lock, horizon: a pull made while the insert is held waits for it
				if mode == "lock" {
					h.awaitWaiting(t)
				} else {
					mustWithin(t, 30*time.Second, "the second write to return", func() { <-h.done })
				}
				reads := func() float64 {
					return counter(t, p, "eventlogd_tenant_db_event_queries_total", map[string]string{"op": "events_since"})
				}
				before := reads()
				type answer struct {
					paths []string
					next  int64
				}
				// Under lock nothing committed above the head while the insert is held, so a pull at
				// the head is answered from the head hint without a read: pull from below it, and
				// /first comes before the late row.
				from, want := since, []string{"/late"}
				if mode == "lock" {
					from, want = since-1, []string{"/first", "/late"}
				}
				ans := make(chan answer, 1)
				go func() {
					got, next := p.pullAll(t, k, from, 100)
					ans <- answer{got, next}
				}()
				if mode == "lock" {
					wait.For(t, 10*time.Second, "the pull's page read to wait on the sequence row", func() bool {
						var n int
						_ = h.direct.QueryRow(`SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND INFO LIKE 'SELECT n FROM fs_event_seq_lock%'`).Scan(&n)
						return n > 0
					})
				} else {
					wait.For(t, 10*time.Second, "the pull request to wait at the gap (two reads)", func() bool { return reads()-before >= 2 })
				}
				h.commit(t)
				var a answer
				mustWithin(t, 30*time.Second, "the held pull request to answer after the late commit", func() { a = <-ans })
				// Under lock the page may be read before /second commits (it waited on the row too).
				if len(a.paths) < len(want) || strings.Join(a.paths[:len(want)], " ") != strings.Join(want, " ") {
					t.Fatalf("the held pull answered %v, want %v first", a.paths, want)
				}
				seen, since = a.paths, a.next
			}
			p.write(t, k, "/third", "x")
			got, _ := p.pullAll(t, k, since, 100)
			seen = append(seen, got...)
			sawLate := strings.Contains(strings.Join(seen, " "), "/late")
			if sawLate == skip || seen[len(seen)-1] != "/third" {
				t.Fatalf("pages %v: late row seen = %v, want %v", seen, sawLate, !skip)
			}
		})
	}
}

// TestChangesGiveUpARolledBackInsert: under GuardHorizon a pull that finds a hole (an insert that
// rolled back) first waits --sse-horizon-wait for it inside the request, then gives it up and
// answers what follows (the held-back direction is the horizon case of
// TestChangesNeverPassALateCommit).
func TestChangesGiveUpARolledBackInsert(t *testing.T) {
	e, p := defectPod(t, defect.LateCommitSkip, false, func(c *api.Config) {
		c.Guard = store.GuardHorizon
		c.Stream.HorizonWait = 300 * time.Millisecond
	})
	tenant, k := p.provision(t, "ded")
	p.write(t, k, "/first", "x")
	_, since := p.pullAll(t, k, 0, 100)
	_, tx := directTx(t, e, "ded")
	hole, err := store.InsertEventTx(testCtx(t), tx, tenant, store.Event{Path: "/never", Op: "write", CreatedAt: time.Now()}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	p.write(t, k, "/after", "x")
	code, pg := p.pull(t, k, fmt.Sprintf("since=%d", since))
	if code != 200 || len(pg.Events) != 1 || pg.Events[0].Path != "/after" || pg.Events[0].Seq != hole+1 || pg.NextSince != hole+1 {
		t.Fatalf("pull past hole %d: %d %+v, want /after at seq %d", hole, code, pg, hole+1)
	}
	if n := counter(t, p, "eventlogd_sse_horizon_gaps_given_up_total", nil); n != 1 {
		t.Fatalf("eventlogd_sse_horizon_gaps_given_up_total = %v, want 1", n)
	}
}
