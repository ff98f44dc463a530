package consumer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// tree serves GET /v1/fs/<dir>?list=1 in drive9's shape over a map of folder -> children, pageSize
// entries per answer (0: one answer, no next), and counts the requests it answered.
type tree struct {
	mu       sync.Mutex
	dirs     map[string][]listEntry // folder path ending in "/" -> children in name order
	pageSize int
	status   int           // when set, every answer is this status
	delay    chan struct{} // when set, answers wait for it to close (or the request to end)
	asked    []string
}

func (tr *tree) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer key" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	tr.mu.Lock()
	tr.asked = append(tr.asked, r.URL.RequestURI())
	tr.mu.Unlock()
	if tr.delay != nil {
		select {
		case <-tr.delay:
		case <-r.Context().Done():
			return
		}
	}
	if tr.status != 0 {
		w.WriteHeader(tr.status)
		return
	}
	if r.URL.Query().Get("list") != "1" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	dir := strings.TrimPrefix(r.URL.Path, "/v1/fs")
	kids, ok := tr.dirs[dir]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	after := r.URL.Query().Get("after")
	i := sort.Search(len(kids), func(i int) bool { return kids[i].Name > after })
	if after == "" {
		i = 0
	}
	end := len(kids)
	if tr.pageSize > 0 && i+tr.pageSize < end {
		end = i + tr.pageSize
	}
	out := map[string]any{"entries": kids[i:end], "ignored": map[string]any{"deep": []any{1, "x", nil}}}
	if end < len(kids) {
		out["next"] = kids[end-1].Name
	}
	_ = json.NewEncoder(w).Encode(out)
}

func file(name string, size int64) listEntry {
	return listEntry{Name: name, Size: size, Revision: size + 1}
}
func folder(name string) listEntry { return listEntry{Name: name, IsDir: true} }

func listAll(t *testing.T, url, dir string) ([]Entry, error) {
	t.Helper()
	var got []Entry
	_, err := Lister{Client: http.DefaultClient, URL: url, Key: "key"}.List(context.Background(), dir, func(e Entry) error {
		got = append(got, e)
		return nil
	})
	return got, err
}

func TestListWalksPagesAndFolders(t *testing.T) {
	dirs := map[string][]listEntry{
		"/sg/r/t/":       {file("a", 1), file("b", 2), file("c", 3), folder("d")},
		"/sg/r/t/d/":     {file("e", 4), folder("f g")},
		"/sg/r/t/d/f g/": {file("h", 5)},
	}
	want := []string{"/sg/r/t/a", "/sg/r/t/b", "/sg/r/t/c", "/sg/r/t/d/e", "/sg/r/t/d/f g/h"}
	for _, tc := range []struct {
		name     string
		pageSize int
	}{{"one answer per folder", 0}, {"pages of one", 1}, {"pages of two", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tree{dirs: dirs, pageSize: tc.pageSize}
			srv := httptest.NewServer(tr)
			defer srv.Close()
			got, err := listAll(t, srv.URL, "/sg/r/t/")
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, e := range got {
				paths = append(paths, e.Path)
				if e.Rev != e.Size+1 {
					t.Errorf("%s: size %d rev %d", e.Path, e.Size, e.Rev)
				}
			}
			sort.Strings(paths)
			if fmt.Sprint(paths) != fmt.Sprint(want) {
				t.Errorf("listed %v, want %v", paths, want)
			}
			if tc.pageSize == 1 && len(tr.asked) < 7 {
				t.Errorf("pages of one asked only %v", tr.asked)
			}
		})
	}
}

func TestListMissingFolderIsEmpty(t *testing.T) {
	srv := httptest.NewServer(&tree{dirs: map[string][]listEntry{}})
	defer srv.Close()
	got, err := listAll(t, srv.URL, "/sg/r/t/")
	if err != nil || len(got) != 0 {
		t.Errorf("got %v, %v; want nothing and no error", got, err)
	}
}

func TestListFailures(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
		status           int
	}{
		{name: "server error", status: 500, want: "HTTP 500"},
		{name: "not an object", body: `[1]`, want: `want "{"`},
		{name: "no entries", body: `{"next":"x"}`, want: `no "entries"`},
		{name: "entries not a list", body: `{"entries":{}}`, want: "entries"},
		{name: "entry of wrong type", body: `{"entries":[{"name":"a","size":"big"}]}`, want: "entries[0]"},
		{name: "name with slash", body: `{"entries":[{"name":"a/b"}]}`, want: "not one path segment"},
		{name: "name dot-dot", body: `{"entries":[{"name":".."}]}`, want: "not one path segment"},
		{name: "torn", body: `{"entries":[{"name":"a"}`, want: "body"},
		{name: "next repeats", body: `{"entries":[],"next":""}`, want: ""},
		{name: "value too long", body: `{"entries":[{"name":"` + strings.Repeat("x", 2*maxListValue) + `"}]}`, want: "longer than"},
		{name: "unknown member too long", body: `{"x":"` + strings.Repeat("y", 2*maxListValue) + `","entries":[]}`, want: "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.status != 0 {
					w.WriteHeader(tc.status)
					return
				}
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			_, err := listAll(t, srv.URL, "/sg/r/t/")
			if tc.want == "" {
				if err != nil {
					t.Errorf("err %v, want none", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "/sg/r/t/") {
				t.Errorf("err %v, want one naming the folder and %q", err, tc.want)
			}
		})
	}
}

func TestListNextThatDoesNotMoveFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"entries":[{"name":"a"}],"next":"a"}`)
	}))
	defer srv.Close()
	if _, err := listAll(t, srv.URL, "/sg/r/t/"); err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Errorf("err %v, want a next that repeats", err)
	}
}

func TestListRejectsRelativeFolder(t *testing.T) {
	if _, err := listAll(t, "http://127.0.0.1:1", "sg/r"); err == nil {
		t.Error("a folder without its slashes was listed")
	}
}

// TestListOfManyEntriesStaysInBoundedMemory lists one folder of 100,000 files in a single answer
// (about 9 MB of JSON, generated as it is sent) and samples the heap while the entries arrive: a
// lister that held the answer or the entries whole would grow with them.
func TestListOfManyEntriesStaysInBoundedMemory(t *testing.T) {
	const n = 100_000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := bufio.NewWriter(w)
		bw.WriteString(`{"entries":[`)
		for i := range n {
			if i > 0 {
				bw.WriteByte(',')
			}
			fmt.Fprintf(bw, `{"name":"t1.b0.%012d","size":%d,"isDir":false,"mtime":1767225600,"revision":%d,"mode":420}`, i, i, i+1)
		}
		bw.WriteString(`]}`)
		bw.Flush()
	}))
	defer srv.Close()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	var count int64
	s := sinkFunc(func(r *ledger.Record) error {
		count++
		if count%5000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	})
	c := New(Config{Name: "c1", Tenant: "ten", Key: "key", Durable: true, Resync: true, ListDir: "/sg/r/t/",
		Start: time.Now(), Sink: s, Client: http.DefaultClient})
	c.resync(context.Background(), Endpoint{"pod-1", srv.URL}, "c1.1", 7, "seq_too_old")
	if count != n+1 || c.Listed() != n {
		t.Fatalf("records %d, listed %d; want %d listed and one resync", count, c.Listed(), n)
	}
	// The live heap during the listing: the decoder's buffer and a few entries, never the ~9 MB
	// answer nor 100,000 records (which would be over 20 MB as Go values).
	if grew := int64(peak) - int64(base); grew > 8<<20 {
		t.Errorf("heap grew by %d bytes while listing %d entries: the listing is held, not streamed", grew, n)
	}
}

func TestResyncRecordsAfterReset(t *testing.T) {
	tr := &tree{dirs: map[string][]listEntry{"/sg/r/ten/": {file("m1", 3), file("m2", 4)}}}
	lsrv := httptest.NewServer(tr)
	defer lsrv.Close()
	for _, tc := range []struct {
		name       string
		frame      string
		resync     bool
		structural bool
		status     int
		want       string // the records after the reset, by kind
		ok         bool
	}{
		{name: "seq_too_old lists", frame: "event: reset\ndata: {\"seq\":9,\"reason\":\"seq_too_old\"}\n\n", resync: true,
			want: "listed listed resync", ok: true},
		{name: "server_restart lists", frame: "event: reset\ndata: {\"seq\":9,\"reason\":\"server_restart\"}\n\n", resync: true,
			want: "listed listed resync", ok: true},
		{name: "a failed listing is not ok", frame: "event: reset\ndata: {\"seq\":9,\"reason\":\"seq_too_old\"}\n\n", resync: true,
			status: 503, want: "resync"},
		{name: "structural does not list", frame: "event: reset\ndata: {\"seq\":9,\"reason\":\"structural_change\",\"path\":\"/x\",\"op\":\"delete\"}\n\n",
			resync: true, want: ""},
		{name: "structural lists when asked", frame: "event: reset\ndata: {\"seq\":9,\"reason\":\"structural_change\",\"path\":\"/x\",\"op\":\"delete\"}\n\n",
			resync: true, structural: true, want: "listed listed resync", ok: true},
		{name: "resync off", frame: "event: reset\ndata: {\"seq\":9,\"reason\":\"seq_too_old\"}\n\n", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr.status = tc.status
			sc := &script{frames: [][]string{{initSync, tc.frame, "event: file_changed\ndata: {\"seq\":10,\"path\":\"/sg/r/ten/m3\",\"op\":\"write\"}\n\n"}}, hold: true}
			mux := http.NewServeMux()
			mux.Handle("/v1/events", sc)
			mux.Handle("/v1/fs/", tr)
			srv := httptest.NewServer(mux)
			defer srv.Close()
			_, s := run(t, []Endpoint{{"pod-1", srv.URL}}, Config{Durable: true, Resync: tc.resync, ResyncStructural: tc.structural,
				ListDir: "/sg/r/ten/"}, func(c *Consumer) bool { return c.Cursor() == 10 })
			var after []string
			var res *ledger.Record
			seen := 0
			for _, r := range s.Records() {
				if r.K == ledger.KindReset && r.Seq == 9 {
					seen = 1
					continue
				}
				if seen == 1 && r.K == ledger.KindEv {
					seen = 2
				}
				if seen == 1 && (r.K == ledger.KindListed || r.K == ledger.KindResync) {
					after = append(after, r.K)
					if r.K == ledger.KindResync {
						res = &r
					}
				}
			}
			if strings.Join(after, " ") != tc.want {
				t.Fatalf("records between the reset and the next event: %v, want %q", after, tc.want)
			}
			if res == nil {
				return
			}
			wantEntries := int64(0)
			if tc.ok {
				wantEntries = 2
			}
			if res.OK != tc.ok || int64(res.Entries) != wantEntries || int64(res.AfterSeq) != 9 || res.Conn != "c1.2" && res.Conn != "c1.1" ||
				int64(res.TStart) > res.T || res.Consumer != "c1" || res.Tenant != "ten" || (tc.ok != (res.Error == "")) {
				t.Errorf("resync record %+v", *res)
			}
		})
	}
}

func TestResyncTimesOut(t *testing.T) {
	tr := &tree{dirs: map[string][]listEntry{"/sg/r/ten/": {file("m1", 3)}}, delay: make(chan struct{})}
	defer close(tr.delay)
	srv := httptest.NewServer(tr)
	defer srv.Close()
	s := &ledger.Memory{}
	c := New(Config{Name: "c1", Tenant: "ten", Key: "key", Durable: true, Resync: true, ListDir: "/sg/r/ten/",
		ListTimeout: 50 * time.Millisecond, Start: time.Now(), Sink: s, Client: http.DefaultClient})
	c.resync(context.Background(), Endpoint{"pod-1", srv.URL}, "c1.1", 4, "server_restart")
	recs := s.Records()
	if len(recs) != 1 || recs[0].K != ledger.KindResync || recs[0].OK || !strings.Contains(recs[0].Error, "timed out") {
		t.Fatalf("records %+v, want one resync that timed out", recs)
	}
	if made, failed := c.Resyncs(); made != 1 || failed != 1 {
		t.Errorf("resyncs %d failed %d", made, failed)
	}
}

func FuzzDecodeListing(f *testing.F) {
	for _, s := range []string{`{"entries":[{"name":"a","size":1,"isDir":false,"revision":2}],"next":"a"}`,
		`{"entries":[],"x":{"y":[1,2,{"z":null}]}}`, `{"entries":[{"name":"d","isDir":true}]}`, `[]`, `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		n := 0
		next, err := decodeListing(strings.NewReader(body), func(e listEntry) error {
			n++
			if e.Name == "" || strings.Contains(e.Name, "/") {
				t.Fatalf("entry %q passed", e.Name)
			}
			return nil
		})
		if err != nil && next != "" {
			t.Fatalf("next %q with error %v", next, err)
		}
		_ = strconv.Itoa(n)
	})
}
