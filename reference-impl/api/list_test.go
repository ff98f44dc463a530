package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// listed is one entry of a listing as a drive9 client decodes it.
type listed struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	IsDir    bool   `json:"isDir"`
	Mtime    int64  `json:"mtime"`
	Revision int64  `json:"revision"`
	Mode     uint32 `json:"mode"`
}

// listPage is one answer of GET ?list, decoded strictly: an unknown top-level key fails the test.
type listPage struct {
	Entries []listed `json:"entries"`
	Next    *string  `json:"next"`
	Error   string   `json:"error"`
	ReqID   string   `json:"request_id"`
}

// list asks for one page of dir's listing; query is added after list=1 (e.g. "&limit=2").
func (p *pod) list(t *testing.T, key, dir, query string) (int, listPage) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", p.url+"/v1/fs"+dir+"?list=1"+query, nil)
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
	var pg listPage
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pg); err != nil {
		t.Fatalf("list %s%s: %d %q: %v", dir, query, resp.StatusCode, b, err)
	}
	if resp.StatusCode != 200 && pg.Error == "" {
		t.Fatalf("list %s%s: %d without a JSON error: %q", dir, query, resp.StatusCode, b)
	}
	return resp.StatusCode, pg
}

// listAll follows next from the start with pages of limit (0: the default) and returns every name.
func (p *pod) listAll(t *testing.T, key, dir string, limit int) (names []string, pages int) {
	t.Helper()
	after := ""
	for {
		q := "&after=" + url.QueryEscape(after)
		if limit > 0 {
			q += fmt.Sprintf("&limit=%d", limit)
		}
		code, pg := p.list(t, key, dir, q)
		if code != 200 {
			t.Fatalf("list %s after %q: %d %s", dir, after, code, pg.Error)
		}
		pages++
		for _, e := range pg.Entries {
			names = append(names, e.Name)
		}
		if pg.Next == nil {
			return names, pages
		}
		if len(pg.Entries) == 0 || *pg.Next != pg.Entries[len(pg.Entries)-1].Name {
			t.Fatalf("next %q is not the page's last name (%d entries)", *pg.Next, len(pg.Entries))
		}
		after = *pg.Next
	}
}

func TestListDirectory(t *testing.T) {
	e := newEnv(t, poolDef{id: "shared", role: store.RoleShared})
	p := e.pod("p", nil)
	_, ka := p.provision(t, "shared")
	_, kb := p.provision(t, "shared") // same DB, other tenant
	for path, content := range map[string]string{
		"/d/f1": "hello", "/d/f1x": "", "/d/a-b": "x", "/d/a/deep/er": "x", // "a" only from its descendants
		"/d/" + url.PathEscape("日本"): "ü", "/d/100%25_x": "x", "/d/back%5Cslash": "x",
		"/p_q/f": "x", "/pxq/g": "x", "/p%25/h": "x", "/pa/i": "x", // LIKE wildcards in the directory itself
		"/file": "x",
	} {
		p.write(t, ka, path, content)
	}
	p.write(t, ka, "/d/f1", "hello!") // revision 2
	if code, m := p.do(t, "POST", "/v1/fs/d/sub?mkdir", ka, nil, nil); code != 200 {
		t.Fatalf("mkdir: %d %v", code, m)
	}
	if code, m := p.do(t, "POST", "/v1/fs/empty?mkdir", ka, nil, nil); code != 200 {
		t.Fatalf("mkdir: %d %v", code, m)
	}
	p.write(t, kb, "/d/b-secret", "x")
	p.write(t, kb, "/onlyb/x", "x")

	wantD := []listed{ // byte order of the names: "a" before "a-b" although "/d/a-b" < "/d/a/deep/er"
		{Name: "100%_x", Size: 1, Revision: 1, Mode: 0o644},
		{Name: "a", IsDir: true, Mode: 0o755},
		{Name: "a-b", Size: 1, Revision: 1, Mode: 0o644},
		{Name: `back\slash`, Size: 1, Revision: 1, Mode: 0o644},
		{Name: "f1", Size: 6, Revision: 2, Mode: 0o644},
		{Name: "f1x", Size: 0, Revision: 1, Mode: 0o644},
		{Name: "sub", IsDir: true, Mode: 0o755},
		{Name: "日本", Size: 2, Revision: 1, Mode: 0o644},
	}
	cases := []struct {
		name, key, dir, query string
		code                  int
		want                  []string // names, in order (nil: don't care)
		errHas                string
	}{
		{"folder", ka, "/d", "", 200, names(wantD), ""},
		{"trailing slash", ka, "/d/", "", 200, names(wantD), ""},
		{"root", ka, "/", "", 200, []string{"d", "empty", "file", "p%", "p_q", "pa", "pxq"}, ""},
		{"root without slash", ka, "", "", 200, []string{"d", "empty", "file", "p%", "p_q", "pa", "pxq"}, ""},
		{"implicit folder", ka, "/d/a", "", 200, []string{"deep"}, ""},
		{"empty folder", ka, "/empty", "", 200, []string{}, ""},
		{"underscore is not a wildcard", ka, "/p_q", "", 200, []string{"f"}, ""},
		{"percent is not a wildcard", ka, "/p%25", "", 200, []string{"h"}, ""},
		{"page", ka, "/d", "&limit=3", 200, []string{"100%_x", "a", "a-b"}, ""},
		{"after", ka, "/d", "&after=a&limit=2", 200, []string{"a-b", `back\slash`}, ""},
		{"after a missing name", ka, "/d", "&after=b", 200, []string{`back\slash`, "f1", "f1x", "sub", "日本"}, ""},
		{"after the last", ka, "/d", "&after=" + url.QueryEscape("日本"), 200, []string{}, ""},
		{"other tenant's folder", kb, "/d", "", 200, []string{"b-secret"}, ""},
		{"not this tenant's", ka, "/onlyb", "", 404, nil, "no such file"},
		{"missing", ka, "/nope", "", 404, nil, "no such file"},
		{"a file", ka, "/file", "", 409, nil, "not a directory"},
		{"a file deeper", ka, "/d/f1", "", 409, nil, "not a directory"},
		{"no key", "", "/d", "", 401, nil, ""},
		{"wrong key", "nope", "/d", "", 401, nil, ""},
		{"limit zero", ka, "/d", "&limit=0", 400, nil, "limit: want an integer in 1..10000"},
		{"limit huge", ka, "/d", "&limit=10001", 400, nil, "limit"},
		{"limit text", ka, "/d", "&limit=x", 400, nil, "limit"},
		{"after a path", ka, "/d", "&after=a%2Fb", 400, nil, "after: a name, not a path"},
		{"after NUL", ka, "/d", "&after=a%00", 400, nil, "after:"},
		{"after bad UTF-8", ka, "/d", "&after=%FF", 400, nil, "after: not valid UTF-8"},
		{"unknown key", ka, "/d", "&recursive", 400, nil, `"recursive" is not a list parameter`},
		{"dot segment", ka, "/d/../d", "", 400, nil, "segment"},
		{"empty segment", ka, "/d//", "", 400, nil, "segment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, pg := p.list(t, c.key, c.dir, c.query)
			if code != c.code {
				t.Fatalf("got %d %+v, want %d", code, pg, c.code)
			}
			if c.errHas != "" && !strings.Contains(pg.Error, c.errHas) {
				t.Fatalf("error %q, want it to contain %q", pg.Error, c.errHas)
			}
			if c.want != nil {
				if got := names(pg.Entries); !slices.Equal(got, c.want) {
					t.Fatalf("names %q, want %q", got, c.want)
				}
			}
		})
	}

	t.Run("fields", func(t *testing.T) {
		_, pg := p.list(t, ka, "/d", "")
		if pg.Next != nil {
			t.Fatalf("complete listing with next %q", *pg.Next)
		}
		now := time.Now().Unix()
		for i, got := range pg.Entries {
			w := wantD[i]
			mt := got.Mtime
			got.Mtime = 0
			if got != w {
				t.Errorf("entry %d: %+v, want %+v", i, got, w)
			}
			hasRow := w.Name != "a"
			if hasRow != (mt > now-3600 && mt <= now+60) {
				t.Errorf("entry %s: mtime %d (now %d), want one only for a row of its own", w.Name, mt, now)
			}
		}
	})
	t.Run("next only when more remain", func(t *testing.T) {
		for _, c := range []struct {
			query string
			next  string // "" = absent
		}{{"&limit=3", "a-b"}, {"&limit=7", "sub"}, {"&limit=8", ""}, {"&limit=9", ""}, {"&after=sub&limit=1", ""}} {
			_, pg := p.list(t, ka, "/d", c.query)
			got := ""
			if pg.Next != nil {
				got = *pg.Next
			}
			if got != c.next {
				t.Errorf("%s: next %q, want %q", c.query, got, c.next)
			}
		}
	})
	t.Run("paging visits every name once", func(t *testing.T) {
		for _, limit := range []int{1, 2, 5} {
			got, pages := p.listAll(t, ka, "/d", limit)
			if !slices.Equal(got, names(wantD)) || pages != (len(wantD)+limit-1)/limit {
				t.Errorf("limit %d: %q in %d pages, want %q", limit, got, pages, names(wantD))
			}
		}
	})
}

// TestListLargeFolder: a folder past the default page is truncated with next, and following next
// lists every file exactly once, in byte order.
func TestListLargeFolder(t *testing.T) {
	e := newEnv(t, poolDef{id: "shared", role: store.RoleShared})
	p := e.pod("p", nil)
	_, k := p.provision(t, "shared")
	const n = 2500
	var want []string
	for b := 0; b < n/100; b++ {
		paths := make([]string, 100)
		for i := range paths {
			name := fmt.Sprintf("f%d", b*100+i)
			paths[i] = "/big/" + name
			want = append(want, name)
		}
		if code, m := p.do(t, "POST", "/v1/fs:batch-write", k, strings.NewReader(batchBody("", paths...)), nil); code != 200 {
			t.Fatalf("batch write: %d %v", code, m)
		}
	}
	p.write(t, k, "/big/sub/x", "x") // a directory among the files
	want = append(want, "sub")
	slices.Sort(want)

	code, pg := p.list(t, k, "/big", "")
	if code != 200 || len(pg.Entries) != 1000 || pg.Next == nil || *pg.Next != want[999] {
		t.Fatalf("default page: %d, %d entries, next %v; want 1000 and next %q", code, len(pg.Entries), pg.Next, want[999])
	}
	got, pages := p.listAll(t, k, "/big", 0)
	if !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("following next: %d names in %d pages, want %d in 3", len(got), pages, len(want))
	}
}

func names(es []listed) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out
}

// TestListDeepSubtree: a child whose descendants fill a whole page's scan, a name that extends an
// implicit directory's with a byte below '/' ("big" only from big/..., "big-x" and "big.txt" files):
// every page size lists each child once, in byte order of the names.
func TestListDeepSubtree(t *testing.T) {
	e := newEnv(t, poolDef{id: "shared", role: store.RoleShared})
	p := e.pod("p", nil)
	_, k := p.provision(t, "shared")
	paths := []string{"/r/a", "/r/big-x", "/r/big.txt", "/r/c", "/r/sub/x"}
	for i := range 12 {
		paths = append(paths, fmt.Sprintf("/r/big/d%02d", i))
	}
	for _, path := range paths {
		p.write(t, k, path, "x")
	}
	want := []string{"a", "big", "big-x", "big.txt", "c", "sub"}
	for _, limit := range []int{1, 2, 3, 7, 100} {
		got, _ := p.listAll(t, k, "/r", limit)
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: %q, want %q", limit, got, want)
		}
	}
	_, pg := p.list(t, k, "/r", "")
	if len(pg.Entries) != len(want) || !pg.Entries[1].IsDir || pg.Entries[2].IsDir || pg.Next != nil {
		t.Fatalf("one page: %+v", pg)
	}
}
