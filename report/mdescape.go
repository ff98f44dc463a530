package report

import (
	"strings"

	"github.com/seqgate/seqgate/internal/printable"
)

// Escaping for summary.md. Every string there may come from a ledger or a scenario (run ids,
// scenario names, fault kinds and targets, check and threshold names, reasons), so none may add
// Markdown or HTML structure: a forged heading or verdict, a link, an open comment that hides the
// rest of the summary.

// visible shows control characters and bidi controls escaped (a newline could start a heading).
func visible(s string) string { return printable.String(s) }

// mdText makes s literal text in Markdown: control characters shown escaped, and the characters
// that can start emphasis, code, a link or image, an HTML tag or comment, an entity, a table cell,
// strikethrough, math or a heading backslash-escaped (CommonMark allows it for any ASCII
// punctuation). A leading character that could open a block (a list, a quote, a setext underline,
// an ordered list's "1.") is escaped too, so s is inline text wherever it starts.
func mdText(s string) string {
	s = visible(s)
	var b strings.Builder
	digits := true // only digits so far: a "." or ")" now would make an ordered list marker
	for i, r := range s {
		esc := strings.ContainsRune(mdInline, r) || (i == 0 && strings.ContainsRune(mdLeading, r)) || (digits && i > 0 && (r == '.' || r == ')'))
		if r == '_' && i > 0 && alnum(s[i-1]) && i+1 < len(s) && alnum(s[i+1]) {
			esc = false // inside a word (loss_budget) an underscore never starts emphasis
		}
		if esc {
			b.WriteByte('\\')
		}
		digits = digits && r >= '0' && r <= '9'
		b.WriteRune(r)
	}
	return b.String()
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

const (
	mdInline  = "\\`*_[]<>&|~!#$"
	mdLeading = "-+=.)"
)

// mdCode makes s a Markdown code span, whose content is literal (no links, HTML or emphasis): its
// fence is one backtick longer than the longest run of backticks in s, and control characters are
// shown escaped so that s stays on its line. In a table cell (cell true) a | is escaped as well,
// which GFM tables require even inside a code span.
func mdCode(s string, cell bool) string {
	s = visible(s)
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if s == "" || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	return fence + s + fence
}
