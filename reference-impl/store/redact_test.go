package store

import (
	"strings"
	"testing"
)

// TestRedact: no message shows a DSN's password, whether the driver can parse the DSN or not; a DSN
// without one is shown as it is (the honest case: the address stays readable).
func TestRedact(t *testing.T) {
	cases := []struct{ dsn, want string }{
		{"root@tcp(127.0.0.1:3306)/meta", "root@tcp(127.0.0.1:3306)/meta"},
		{"root:s3cret@tcp(127.0.0.1:3306)/meta", "root:xxx@tcp(127.0.0.1:3306)/meta"},
		{"root:s3cret@tcp(127.0.0.1:3306)/meta?timeout=soon", "xxx@tcp(127.0.0.1:3306)/meta?timeout=soon"}, // bad duration: unparsable
		{"root:s3cret@tcp(127.0.0.1:3306)", "xxx@tcp(127.0.0.1:3306)"},                                     // no slash: unparsable
		{"root:s3cr@t@tcp(127.0.0.1:3306", "xxx@tcp(127.0.0.1:3306"},
		{"root:s3cret", "xxx (unparsable, hidden)"},
		{"garbage", "garbage"},
	}
	for _, c := range cases {
		got := redact(c.dsn)
		if got != c.want {
			t.Errorf("redact(%q) = %q, want %q", c.dsn, got, c.want)
		}
		if strings.Contains(got, "s3cr") {
			t.Errorf("redact(%q) = %q shows the password", c.dsn, got)
		}
	}
}
