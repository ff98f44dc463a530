package api

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestReadBodyAsReadAll: readBody answers what io.ReadAll(http.MaxBytesReader(...)) answers, for
// bodies of a known length within and past the limit, of an unknown length, empty ones, and a
// body that ends before its Content-Length.
func TestReadBodyAsReadAll(t *testing.T) {
	const limit = readBodyFirst + 100
	for _, c := range []struct {
		name   string
		body   string
		length int64 // the request's ContentLength
		short  bool  // the body ends before length
	}{
		{"empty", "", 0, false},
		{"one byte", "x", 1, false},
		{"at the limit", strings.Repeat("z", limit), limit, false},
		{"past the limit", strings.Repeat("z", limit+1), limit + 1, false},
		{"unknown length within", "abc", -1, false},
		{"unknown length past", strings.Repeat("z", limit+1), -1, false},
		{"ends early", "abc", 5, true},
		{"past the first buffer", strings.Repeat("y", readBodyFirst+100), readBodyFirst + 100, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := func() *http.Request {
				r := httptest.NewRequest("PUT", "/v1/fs/a", nil)
				var body io.Reader = strings.NewReader(c.body)
				if c.short {
					body = io.MultiReader(body, errReader{io.ErrUnexpectedEOF})
				}
				r.Body, r.ContentLength = io.NopCloser(body), c.length
				return r
			}
			got, gerr := readBody(httptest.NewRecorder(), req(), limit)
			want, werr := io.ReadAll(http.MaxBytesReader(httptest.NewRecorder(), req().Body, limit))
			if !bytes.Equal(got, want) || (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) || got == nil {
				t.Fatalf("readBody = %q, %v; ReadAll = %q, %v", got, gerr, want, werr)
			}
		})
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestCheckPathSegments: checkPath's segment walk refuses what splitting on "/" finds (an empty,
// "." or ".." segment anywhere) and accepts the rest. Control: the split's own verdict.
func TestCheckPathSegments(t *testing.T) {
	for _, p := range []string{"/a", "/a/b", "/a/b/c.txt", "/a//b", "/a/", "//", "/.", "/..", "/a/./b", "/a/../b", "/a/..",
		"/.a", "/a..", "/a/.b/..c", "/..."} {
		bad := false
		for _, seg := range strings.Split(p[1:], "/") {
			bad = bad || seg == "" || seg == "." || seg == ".."
		}
		err := checkPath(p)
		if (err != nil) != bad {
			t.Errorf("checkPath(%q) = %v, want refused %v", p, err, bad)
		}
		if bad && (err == nil || !strings.Contains(err.Error(), strconv.Quote(p))) {
			t.Errorf("checkPath(%q): %v does not name the path", p, err)
		}
	}
	if checkPath("/") == nil {
		t.Fatal("the root must be refused")
	}
}
