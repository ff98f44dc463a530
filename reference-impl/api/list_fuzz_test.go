package api

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckName: a listing's after is accepted only as one valid path segment (or empty), and
// checkName never panics on hostile input.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"", "a", "a/b", "a\x00", "\xff", "日本", strings.Repeat("x", 1025), "..", "%2F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, n string) {
		err := checkName(n)
		valid := len(n) <= 1024 && !strings.ContainsAny(n, "/\x00") && utf8.ValidString(n)
		if (err == nil) != valid {
			t.Fatalf("checkName(%q) = %v, want valid=%v", n, err, valid)
		}
	})
}
