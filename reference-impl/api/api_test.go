package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

func TestAuthAndIsolation(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded1", role: store.RoleDedicated}, poolDef{id: "shared", role: store.RoleShared})
	p := e.pod("p1", nil)
	ta, ka := p.provision(t, "")       // first free dedicated pool
	tb, kb := p.provision(t, "")       // dedicated taken: shared
	tc, kc := p.provision(t, "shared") // shared again
	if ta == tb || tb == tc {
		t.Fatalf("tenant ids not unique: %s %s %s", ta, tb, tc)
	}
	if code, _ := p.do(t, "POST", "/v1/provision", "", strings.NewReader(`{"pool":"ded1"}`), provisionHdr); code != 409 {
		t.Fatalf("second tenant in a dedicated pool: got %d, want 409", code)
	}
	if code, m := p.do(t, "POST", "/v1/provision", "", strings.NewReader(`{"pool":"nope"}`), provisionHdr); code != 400 || !strings.Contains(m["error"].(string), `unknown "nope"`) || strings.Contains(m["error"].(string), "ded1") {
		t.Fatalf("unknown pool: %d %v", code, m)
	}
	p.write(t, kb, "/"+tb+"/f", "b") // not visible to c, although both live in the shared DB
	cases := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"missing key", nil, 401},
		{"wrong bearer", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"wrong x-api-key", map[string]string{"X-API-Key": "nope"}, 401},
		{"bearer", map[string]string{"Authorization": "Bearer " + kc}, 200},
		{"x-api-key", map[string]string{"X-API-Key": kc}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, m := p.do(t, "PUT", "/v1/fs/x/"+strings.ReplaceAll(c.name, " ", "_"), "", strings.NewReader("x"), c.hdr)
			if code != c.want {
				t.Fatalf("got %d %v, want %d", code, m, c.want)
			}
			if code == 401 && m["error"] == nil {
				t.Fatal("401 without a JSON error")
			}
		})
	}
	// Tenant a cannot read b's file and c's stream never carries b's events.
	if code, _ := p.do(t, "GET", "/v1/fs/"+tb+"/f", ka, nil, nil); code != 404 {
		t.Fatalf("cross-tenant read: got %d, want 404", code)
	}
	sub := p.subscribe(t, kc, 0).start()
	// Written once the stream is open (its first heartbeat follows its reset(initial_sync)): a
	// write committed before the stream read the head would be covered by that reset, not sent.
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	p.write(t, kb, "/b-secret", "x")
	p.write(t, kc, "/c-own", "x")
	got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/c-own" })
	if !ok {
		t.Fatalf("c's own event not delivered: %+v", got)
	}
	for _, f := range got {
		if f.Path == "/b-secret" {
			t.Fatalf("tenant c saw tenant b's event: %+v", got)
		}
	}
}

func TestCrossTenantLeakDefectIsVisible(t *testing.T) {
	// Negative control of the isolation check above: with the defect a shared-pool stream leaks.
	e := newEnv(t)
	p := e.pod("p1", func(c *api.Config) { c.Defects = defect.Set{defect.CrossTenantLeak: true} })
	_, kb := p.provision(t, "")
	_, kc := p.provision(t, "")
	p.write(t, kc, "/c0", "x")
	sub := p.subscribe(t, kc, 1).start()
	p.write(t, kb, "/b-secret", "x")
	p.write(t, kc, "/c-own", "x")
	got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/c-own" })
	if !ok {
		t.Fatalf("no event: %+v", got)
	}
	leaked := false
	for _, f := range got {
		leaked = leaked || f.Path == "/b-secret"
	}
	if !leaked {
		t.Fatalf("cross-tenant-leak defect did not leak: %+v", got)
	}
}

// TestMutationsAndFrames checks drive9's own form (--structural-events=reset); the other modes are
// TestStructuralEventModes.
func TestMutationsAndFrames(t *testing.T) {
	for _, commit := range api.EventCommitModes {
		t.Run(commit, func(t *testing.T) { mutationsAndFrames(t, commit) })
	}
}

// mutationsAndFrames is TestMutationsAndFrames under one --event-commit mode: joined, every
// mutation runs in its event's transaction, and a failed one leaves no event.
func mutationsAndFrames(t *testing.T, commit string) {
	e := newEnv(t)
	p := e.pod("p1", func(c *api.Config) {
		c.Stream.StructuralEvents = "reset"
		c.EventCommit = commit
	})
	_, k := p.provision(t, "")
	sub := p.subscribe(t, k, 0).start()
	if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok || got[0].Type != "reset" || got[0].Reason != "initial_sync" {
		t.Fatalf("want reset(initial_sync) then heartbeat, got %+v", got)
	}
	steps := []struct {
		method, path string
		hdr          map[string]string
		body         string
		code         int
		frame        string // "" = silent
		op           string
	}{
		{"PUT", "/v1/fs/a/b.txt", nil, "one", 200, "file_changed", "write"},
		{"PUT", "/v1/fs/a/b.txt", nil, "two", 200, "file_changed", "write"},
		{"POST", "/v1/fs/a/new.txt?create", nil, "", 200, "file_changed", "create"},
		{"POST", "/v1/fs/a/new.txt?create", nil, "", 409, "", ""},
		{"POST", "/v1/fs/d1?mkdir", nil, "", 200, "reset", "mkdir"},
		{"PUT", "/v1/fs/d1", nil, "x", 409, "", ""}, // a directory: nothing written, no event
		{"POST", "/v1/fs/d1/c.txt?rename", map[string]string{"X-Dat9-Rename-Source": "/a/b.txt"}, "", 200, "reset", "rename"},
		{"POST", "/v1/fs/d1/c2.txt?copy", map[string]string{"X-Dat9-Copy-Source": "/d1/c.txt"}, "", 200, "reset", "copy"},
		{"POST", "/v1/fs/d1/c.txt?chmod&mode=0600", nil, "", 200, "", ""},
		{"POST", "/v1/fs/d1/c.txt?chmod&mode=9z", nil, "", 400, "", ""},
		{"DELETE", "/v1/fs/d1", nil, "", 409, "", ""},
		{"DELETE", "/v1/fs/d1?recursive", nil, "", 200, "reset", "delete"},
		{"DELETE", "/v1/fs/d1", nil, "", 404, "", ""},
		{"POST", "/v1/fs/x?rename", map[string]string{"X-Dat9-Rename-Source": "/missing"}, "", 404, "", ""},
		{"POST", "/v1/fs/x?rename", nil, "", 400, "", ""},
		{"POST", "/v1/fs/x?frobnicate", nil, "", 400, "", ""},
		{"PUT", "/v1/fs/a//b", nil, "", 400, "", ""},
		{"PUT", "/v1/fs/a/./b", nil, "", 400, "", ""},
		{"PUT", "/v1/fs/", nil, "", 400, "", ""},
	}
	for _, s := range steps {
		code, m := p.do(t, s.method, s.path, k, strings.NewReader(s.body), s.hdr)
		if code != s.code {
			t.Fatalf("%s %s: got %d %v, want %d", s.method, s.path, code, m, s.code)
		}
		if code >= 400 && m["error"] == nil {
			t.Fatalf("%s %s: %d without a JSON error", s.method, s.path, code)
		}
		if s.frame == "" {
			continue
		}
		got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Type != "heartbeat" })
		f := got[len(got)-1]
		if !ok || f.Type != s.frame || f.Op != s.op {
			t.Fatalf("%s %s: got %+v, want %s op=%s", s.method, s.path, got, s.frame, s.op)
		}
		if s.frame == "reset" && f.Reason != "structural_change" {
			t.Fatalf("structural op frame: %+v", f)
		}
	}
	// chmod and the failed ops were silent: a final write is the very next frame.
	p.write(t, k, "/last", "x")
	got, _ := sub.until(t, 10*time.Second, func(f frame) bool { return f.Type != "heartbeat" })
	if f := got[len(got)-1]; f.Path != "/last" {
		t.Fatalf("a silent op produced a frame: %+v", got)
	}
}

func TestSinceBoundsAndGarbage(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p1", nil)
	_, k := p.provision(t, "")
	for i := 0; i < 3; i++ {
		p.write(t, k, "/f", "x")
	}
	if code, _ := p.do(t, "GET", "/v1/events?since=abc", k, nil, nil); code != 400 {
		t.Fatalf("garbage since: %d", code)
	}
	cases := []struct {
		since  int64
		reason string
	}{{0, "initial_sync"}, {1000, "server_restart"}}
	for _, c := range cases {
		s := p.subscribe(t, k, c.since).start()
		got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
		if !ok || got[0].Reason != c.reason || got[len(got)-1].Seq != 3 {
			t.Fatalf("since=%d: %+v", c.since, got)
		}
		s.close()
	}
	s := p.subscribe(t, k, 1).start()
	got, _ := s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	if len(got) != 3 || got[0].Seq != 2 || got[1].Seq != 3 {
		t.Fatalf("since=1 replay: %+v", got)
	}
}

func TestCrossPodDeliveryThroughOutbox(t *testing.T) {
	e := newEnv(t)
	a := e.pod("a", nil)
	b := e.pod("b", nil)
	_, k := a.provision(t, "")
	sub := b.subscribe(t, k, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	a.write(t, k, "/x", "1")
	if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/x" }); !ok {
		t.Fatalf("pod b never saw pod a's write: %+v", got)
	}
}

func TestMetricsLint(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p1", nil)
	_, k := p.provision(t, "")
	p.write(t, k, "/x", "1")
	problems, err := testutil.CollectAndLint(p.srv.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range problems {
		if strings.HasPrefix(pr.Metric, "go_") || strings.HasPrefix(pr.Metric, "process_") {
			continue
		}
		t.Errorf("metric lint: %s: %s", pr.Metric, pr.Text)
	}
	code, _ := p.do(t, "GET", "/healthz", "", nil, nil)
	if code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
	if counter(t, p, "drive9_sse_event_retry_buffer_depth", nil) != 0 {
		t.Fatal("buffer depth not 0")
	}
}

// TestCloseWithoutStart: a pod that fails before Start (e.g. its port is taken) still closes.
func TestCloseWithoutStart(t *testing.T) {
	e := newEnv(t)
	cfg := e.testConfig("never-started")
	srv, err := api.New(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}
