package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestPathsAreStoredExactlyOrRefused: a path is either refused with a 400 naming the problem before
// anything is acknowledged, or stored and delivered byte for byte; a path the event table could not
// hold must never be acknowledged (its event would fail every insert and block the tenant's retry
// queue). Valid UTF-8 (non-ASCII included) round-trips; invalid UTF-8 and a doubled trailing slash
// are refused; one trailing slash is normalised away.
func TestPathsAreStoredExactlyOrRefused(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", nil)
	_, k := p.provision(t, "")
	sub := p.subscribe(t, k, 0).start()
	if _, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok {
		t.Fatal("no initial heartbeat")
	}
	cases := []struct {
		name     string
		method   string
		urlPath  string // after /v1/fs, percent-encoded as sent
		hdr      map[string]string
		wantCode int
		wantErr  string // substring of the 400's error
		stored   string // the path the event and the file carry (wantCode 200)
	}{
		{"non-ASCII", "PUT", "/%E6%97%A5%E6%9C%AC", nil, 200, "", "/日本"},
		{"non-ASCII raw", "PUT", "/dir/caf%C3%A9/%F0%9F%98%80", nil, 200, "", "/dir/café/😀"},
		{"one trailing slash normalised", "PUT", "/trail/", nil, 200, "", "/trail"},
		{"invalid UTF-8", "PUT", "/bad%FFname", nil, 400, "not valid UTF-8", ""},
		{"truncated UTF-8", "PUT", "/x%E6%97", nil, 400, "not valid UTF-8", ""},
		{"doubled trailing slash", "PUT", "/a//", nil, 400, "empty", ""},
		{"invalid UTF-8 rename source", "POST", "/dst?rename", map[string]string{"X-Dat9-Rename-Source": "/src\xff"}, 400, "not valid UTF-8", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body *strings.Reader
			if c.method == "PUT" {
				body = strings.NewReader("content of " + c.name)
			}
			var code int
			var m map[string]any
			if body != nil {
				code, m = p.do(t, c.method, "/v1/fs"+c.urlPath, k, body, c.hdr)
			} else {
				code, m = p.do(t, c.method, "/v1/fs"+c.urlPath, k, nil, c.hdr)
			}
			if code != c.wantCode {
				t.Fatalf("%s %s: %d %v, want %d", c.method, c.urlPath, code, m, c.wantCode)
			}
			if c.wantCode != 200 {
				if msg, _ := m["error"].(string); !strings.Contains(msg, c.wantErr) {
					t.Fatalf("error %q does not name the problem (%q)", msg, c.wantErr)
				}
				return
			}
			got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "file_changed" })
			if !ok {
				t.Fatalf("no event for %s (frames %v)", c.urlPath, got)
			}
			if last := got[len(got)-1]; last.Path != c.stored {
				t.Fatalf("event path %q, want %q exactly", last.Path, c.stored)
			}
			req, _ := http.NewRequestWithContext(testCtx(t), "GET", p.url+"/v1/fs"+c.urlPath, nil)
			req.Header.Set("X-API-Key", k)
			resp, err := p.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d", c.urlPath, resp.StatusCode)
			}
		})
	}
	// Nothing refused was acknowledged, so nothing waits in the retry buffer.
	if d := p.srv.Buffer().Depth(); d != 0 {
		t.Fatalf("retry buffer holds %d entries after the path cases", d)
	}
	p.write(t, k, "/after", "x")
	if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/after" }); !ok {
		t.Fatalf("a later write's event was not delivered (frames %v)", got)
	}
}

// TestRefusedEventIsDroppedAsRejectedAndNeverBlocksTheQueue: when the tenant DB refuses an event row
// for good (here an fs_events.path column an old schema left in latin1, so /日本 fails with 1366),
// the event drops as rejected, counted, both on the hot path and in a retry flush, and the
// tenant's later events are still delivered without waiting for the retry max age. Under both
// --event-commit modes the write itself is kept (joined: rolled back to the savepoint before the
// event's insert, then committed alone).
func TestRefusedEventIsDroppedAsRejectedAndNeverBlocksTheQueue(t *testing.T) {
	for _, commit := range api.EventCommitModes {
		for _, viaBuffer := range []bool{false, true} {
			t.Run(commit+"/"+map[bool]string{false: "hot path", true: "retry flush"}[viaBuffer], func(t *testing.T) {
				refusedCase(t, commit, viaBuffer)
			})
		}
	}
}

func refusedCase(t *testing.T, commit string, viaBuffer bool) {
	e := newEnv(t)
	p := e.pod("p", func(c *api.Config) {
		c.EventCommit = commit
		c.Buffer.BackoffMin = 20 * time.Millisecond
		c.Buffer.BackoffMax = 50 * time.Millisecond
	})
	tenant, k := p.provision(t, "")
	sub := p.subscribe(t, k, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	sdb, err := store.OpenDB(testCtx(t), dsnDirect(e, "shared"))
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	if _, err := sdb.ExecContext(testCtx(t), `ALTER TABLE fs_events MODIFY COLUMN path VARCHAR(1024) CHARACTER SET latin1 NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if viaBuffer {
		if code, _ := p.do(t, "POST", "/v1/admin/failpoint/event-insert?for=1m&tenant="+tenant, "", nil, nil); code != 200 {
			t.Fatalf("arm failpoint: %d", code)
		}
	}
	p.write(t, k, "/%E6%97%A5%E6%9C%AC", "refused by the event table")
	p.write(t, k, "/after", "x")
	if viaBuffer {
		if code, _ := p.do(t, "POST", "/v1/admin/failpoint/event-insert?for=0s", "", nil, nil); code != 200 {
			t.Fatalf("disarm failpoint: %d", code)
		}
	}
	if got, ok := sub.until(t, 20*time.Second, func(f frame) bool { return f.Path == "/after" }); !ok {
		t.Fatalf("/after not delivered behind the refused event (frames %v)", got)
	}
	wait.For(t, 10*time.Second, "the rejected drop", func() bool {
		return counter(t, p, "drive9_sse_event_retry_dropped_total", map[string]string{"tenant_id": tenant, "reason": "rejected"}) == 1
	})
	if d := p.srv.Buffer().Depth(); d != 0 {
		t.Fatalf("retry buffer depth %d, want 0", d)
	}
	if code, _, body := p.raw(t, "GET", "/v1/fs/%E6%97%A5%E6%9C%AC", k, nil, nil); code != 200 || body != "refused by the event table" {
		t.Fatalf("the write whose event was refused: GET %d %q, want it kept", code, body)
	}
}
