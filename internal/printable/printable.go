// Package printable shows strings from untrusted input (ledgers, scenarios) on a terminal or in a
// log without their control characters acting: an ANSI escape sequence could rewrite a verdict
// line, a newline could forge one, a bidirectional override could reorder what a reader sees.
package printable

import (
	"fmt"
	"strings"
	"unicode"
)

// String returns s with every control character (C0 with newline and tab, DEL, C1) written as \xNN
// and every Unicode bidirectional control as \uNNNN, so that s prints as one visible line.
func String(s string) string { return escape(s, false) }

// Text is String for a multi-line text this program composed: newlines and tabs stay, every other
// control character is escaped.
func Text(s string) string { return escape(s, true) }

func escape(s string, lines bool) string {
	act := func(r rune) bool { return Hidden(r) && !(lines && (r == '\n' || r == '\t')) }
	if !strings.ContainsFunc(s, act) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !act(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// Hidden reports whether r acts on a terminal or a text layout instead of showing itself: a control
// character, or a bidirectional mark, embedding, override or isolate.
func Hidden(r rune) bool {
	return unicode.IsControl(r) || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
