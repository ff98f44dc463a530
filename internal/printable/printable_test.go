package printable

import "testing"

func TestString(t *testing.T) {
	cases := []struct{ in, str, text string }{
		{"run-1", "run-1", "run-1"},
		{"\x1b[2K\x1b[1AVERDICT: PASS", `\x1b[2K\x1b[1AVERDICT: PASS`, `\x1b[2K\x1b[1AVERDICT: PASS`},
		{"a\nverdict: PASS", `a\x0averdict: PASS`, "a\nverdict: PASS"},
		{"a\tb\rc", `a\x09b\x0dc`, "a\tb\\x0dc"},
		{"\u202eSSAP", `\u202eSSAP`, `\u202eSSAP`},
		{"\u009b31m", `\x9b31m`, `\x9b31m`},
		{"Ünïcode ✅", "Ünïcode ✅", "Ünïcode ✅"},
		{"bad \xff utf8", "bad \xff utf8", "bad \xff utf8"},
	}
	for _, c := range cases {
		if got := String(c.in); got != c.str {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.str)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("\x1b[31mred\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range String(s) {
			if Hidden(r) {
				t.Fatalf("String(%q) keeps %U", s, r)
			}
		}
		for _, r := range Text(s) {
			if Hidden(r) && r != '\n' && r != '\t' {
				t.Fatalf("Text(%q) keeps %U", s, r)
			}
		}
	})
}
