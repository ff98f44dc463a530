package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// batchBody renders a batch-write body of the given paths (content "x" each).
func batchBody(id string, paths ...string) string {
	type file struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	b := struct {
		Batch string `json:"batch,omitempty"`
		Files []file `json:"files"`
	}{Batch: id, Files: []file{}}
	for _, p := range paths {
		b.Files = append(b.Files, file{p, "x"})
	}
	out, _ := json.Marshal(b)
	return string(out)
}

func TestBatchWriteEventsShareABatch(t *testing.T) {
	e := newEnv(t, poolDef{id: "shared", role: store.RoleShared})
	p := e.pod("p", nil)
	_, k := p.provision(t, "shared")
	p.write(t, k, "/before", "x")
	_, head := p.pullAll(t, k, 0, 100)
	sub := p.subscribe(t, k, head).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })

	code, m := p.do(t, "POST", "/v1/fs:batch-write", k, strings.NewReader(batchBody("run1.m7", "/b/1", "/b/2", "/b/3")), nil)
	if code != 200 || m["batch"] != "run1.m7" || len(m["revisions"].([]any)) != 3 {
		t.Fatalf("batch write: %d %v", code, m)
	}
	code, m = p.do(t, "POST", "/v1/fs:batch-write", k, strings.NewReader(batchBody("", "/b/4")), nil)
	drawn, _ := m["batch"].(string)
	if code != 200 || !strings.HasPrefix(drawn, "b") || len(drawn) != 17 {
		t.Fatalf("batch without an id: %d %v, want a drawn id", code, m)
	}
	got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/b/4" })
	var seen []string
	for _, f := range got {
		if f.Type == "file_changed" {
			seen = append(seen, f.Path+"@"+f.Batch)
		}
	}
	want := "/b/1@run1.m7 /b/2@run1.m7 /b/3@run1.m7 /b/4@" + drawn
	if !ok || strings.Join(seen, " ") != want {
		t.Fatalf("stream: %v, want %s", seen, want)
	}
	code, pg := p.pull(t, k, fmt.Sprintf("since=%d", head))
	if code != 200 || len(pg.Events) != 4 || pg.Events[0].Batch != "run1.m7" || pg.Events[3].Batch != drawn {
		t.Fatalf("pull: %d %+v", code, pg)
	}
	if code, _ := p.do(t, "GET", "/v1/fs/b/2", k, nil, nil); code != 200 {
		t.Fatalf("read /b/2: %d", code)
	}
	p.write(t, k, "/after", "x")
	if got, _ := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/after" }); got[len(got)-1].Batch != "" {
		t.Fatalf("a single write carries batch %q", got[len(got)-1].Batch)
	}
}

// TestBatchWriteIsAllOrNothing: a file that cannot be written (a directory) fails the whole
// batch: no file of it is written, no event inserted.
func TestBatchWriteIsAllOrNothing(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	p := e.pod("p", nil)
	_, k := p.provision(t, "ded")
	p.do(t, "POST", "/v1/fs/dir?mkdir", k, nil, nil)
	_, head := p.pullAll(t, k, 0, 100)
	code, m := p.do(t, "POST", "/v1/fs:batch-write", k, strings.NewReader(batchBody("x", "/ok/1", "/dir", "/ok/2")), nil)
	if code != 409 {
		t.Fatalf("batch over a directory: %d %v, want 409", code, m)
	}
	if got, _ := p.pullAll(t, k, head, 100); len(got) != 0 {
		t.Fatalf("events of a failed batch: %v", got)
	}
	if code, _ := p.do(t, "GET", "/v1/fs/ok/1", k, nil, nil); code != 404 {
		t.Fatalf("/ok/1 of a failed batch: %d, want 404", code)
	}
	if code, _ := p.do(t, "POST", "/v1/fs:batch-write", k, strings.NewReader(batchBody("x", "/ok/1", "/ok/2")), nil); code != 200 {
		t.Fatalf("control: %d", code)
	}
}

func TestBatchWriteLimits(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	p := e.pod("p", func(c *api.Config) { c.MaxBody = 8 << 10 })
	_, k := p.provision(t, "ded")
	paths := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("/l/%d", i)
		}
		return out
	}
	big := `{"files":[{"path":"/big","content":"` + strings.Repeat("x", 9<<10) + `"}]}`
	for _, c := range []struct {
		name, body string
		code       int
		contain    string
	}{
		{"max files", batchBody("", paths(api.MaxBatchFiles)...), 200, ""},
		{"too many files", batchBody("", paths(api.MaxBatchFiles+1)...), 400, "files: want 1..100 files, got 101"},
		{"no files", `{"files":[]}`, 400, "files: want 1..100"},
		{"body over --max-body", big, 413, "body: larger than 8192 bytes"},
		{"duplicate path", batchBody("", "/d", "/d"), 400, "files[1].path"},
		{"bad path", batchBody("", "/ok", "/a//b"), 400, "files[1].path"},
		{"missing content", `{"files":[{"path":"/a"}]}`, 400, "files[0].content"},
		{"bad batch id", batchBody("a b", "/a"), 400, "batch: want 1..64"},
		{"long batch id", batchBody(strings.Repeat("a", 65), "/a"), 400, "batch: want 1..64"},
		{"unknown field", `{"files":[{"path":"/a","content":""}],"mode":1}`, 400, "unknown field"},
		{"two values", `{"files":[{"path":"/a","content":""}]} {}`, 400, "more than one JSON value"},
		{"not json", `files: /a`, 400, "body: want"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, m := p.do(t, "POST", "/v1/fs:batch-write", k, strings.NewReader(c.body), nil)
			msg, _ := m["error"].(string)
			if code != c.code || !strings.Contains(msg, c.contain) {
				t.Fatalf("%d %q, want %d containing %q", code, msg, c.code, c.contain)
			}
		})
	}
	if code, _ := p.do(t, "POST", "/v1/fs:batch-write", "", strings.NewReader(batchBody("", "/a")), nil); code != 401 {
		t.Fatalf("no key: %d, want 401", code)
	}
}

// TestBatchInPiecesLetsAWriteIn: under the batch-in-pieces defect a write made during the pause
// lands between the batch's events; on the correct build the same write lands before or after the
// whole batch (its events are contiguous).
func TestBatchInPiecesLetsAWriteIn(t *testing.T) {
	for _, pieces := range []bool{false, true} {
		t.Run(map[bool]string{false: "one transaction", true: "batch-in-pieces"}[pieces], func(t *testing.T) {
			_, p := defectPod(t, defect.BatchInPieces, pieces, nil)
			_, k := p.provision(t, "ded")
			done := make(chan struct{})
			go func() {
				defer close(done)
				if code, m, err := p.try("POST", "/v1/fs:batch-write", k, strings.NewReader(batchBody("B", "/b/1", "/b/2", "/b/3", "/b/4")), nil); err != nil || code != 200 {
					t.Errorf("batch: %d %v %v", code, m, err)
				}
			}()
			if pieces {
				wait.For(t, 10*time.Second, "the first piece", func() bool { got, _ := p.pullAll(t, k, 0, 100); return len(got) > 0 })
			}
			p.write(t, k, "/between", "x")
			mustWithin(t, 30*time.Second, "the batch", func() { <-done })
			got, _ := p.pullAll(t, k, 0, 100)
			order := strings.Join(got, " ")
			torn := order == "/b/1 /b/2 /between /b/3 /b/4"
			whole := order == "/between /b/1 /b/2 /b/3 /b/4" || order == "/b/1 /b/2 /b/3 /b/4 /between"
			if torn != pieces || (!pieces && !whole) {
				t.Fatalf("order %q: torn = %v, want %v", order, torn, pieces)
			}
		})
	}
}
