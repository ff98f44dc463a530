package api

import (
	"strings"
	"testing"
)

// FuzzParseBatch: whatever the body, parseBatch never panics, and what it accepts is what the
// endpoint promises: 1..MaxBatchFiles files with valid, distinct paths and a well-formed batch id.
func FuzzParseBatch(f *testing.F) {
	for _, s := range []string{
		`{"files":[{"path":"/a","content":"x"}]}`,
		`{"batch":"run.m1","files":[{"path":"/a/","content":""},{"path":"/b","content":"y"}]}`,
		`{"files":[{"path":"/a","content":"x"},{"path":"/a","content":"x"}]}`,
		`{"files":[{"path":"/a//b","content":"x"}]}`,
		`{"batch":"a b","files":[]}`,
		`{"files":[{"path":"/\u00e9","content":"\u0000"}]} {}`,
		`[`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		files, batch, err := parseBatch(strings.NewReader(body))
		if err != nil {
			return
		}
		if len(files) == 0 || len(files) > MaxBatchFiles || !batchIDPattern.MatchString(batch) {
			t.Fatalf("accepted %d files, batch %q", len(files), batch)
		}
		seen := map[string]bool{}
		for _, fw := range files {
			if checkPath(fw.Path) != nil || seen[fw.Path] {
				t.Fatalf("accepted path %q (seen %v)", fw.Path, seen[fw.Path])
			}
			seen[fw.Path] = true
		}
	})
}

// FuzzIntParam: a parameter is accepted only as an integer within its bounds, and a refusal
// names the parameter.
func FuzzIntParam(f *testing.F) {
	for _, s := range []string{"", "0", "1000", "1001", "-1", "abc", "1e3", " 5", "+7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, err := intParam(v, "limit", 100, 1, 1000)
		switch {
		case err != nil && !strings.HasPrefix(err.Error(), "limit: "):
			t.Fatalf("%q: error %q does not name the parameter", v, err)
		case err == nil && v == "" && n != 100:
			t.Fatalf("absent: %d, want the default", n)
		case err == nil && (n < 1 || n > 1000):
			t.Fatalf("%q accepted as %d", v, n)
		}
	})
}
