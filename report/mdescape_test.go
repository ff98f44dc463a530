package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/internal/printable"
	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// hostile are strings a ledger or a scenario may carry to forge a summary: a heading with a pass
// verdict on a new line, a link elsewhere, an open HTML comment that hides the rest, a code span
// broken out of, an ANSI sequence, a bidi override, block markers. (A | that would split a table
// cell is TestMdCode's.)
var hostile = []string{
	"x\n\n### ✅ seqgate: **PASS**",
	"[Full report](https://evil.example/)",
	"<!-- ",
	"a` [click](https://evil.example) `b",
	"\x1b[2K\x1b[1A✅ PASS",
	"\u202eSSAP",
	"# heading",
	"- item",
	"1. item",
	"<img src=x onerror=alert(1)>",
}

// mdStructure lists what s adds to Markdown outside its code spans: headings after the first line,
// unescaped [ ] < (links, images, HTML and comments), raw control bytes. The summary's own
// structure is its first heading and the report link, which the caller allows.
func mdStructure(s string) []string {
	var out []string
	if strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && printable.Hidden(r) }) {
		out = append(out, "a control or bidi character")
	}
	for i, line := range strings.Split(s, "\n") {
		if i > 0 && strings.HasPrefix(strings.TrimLeft(line, " -"), "#") {
			out = append(out, "a heading: "+line)
		}
		if t := strings.TrimLeft(line, " "); i > 0 && (strings.HasPrefix(t, "- -") || strings.HasPrefix(t, "- 1.")) {
			out = append(out, "a nested list: "+line)
		}
		fence := 0
		for j := 0; j < len(line); j++ {
			c := line[j]
			if c == '\\' && fence == 0 {
				j++
				continue
			}
			if c == '`' {
				n := 1
				for j+n < len(line) && line[j+n] == '`' {
					n++
				}
				switch {
				case fence == 0:
					fence = n
				case fence == n:
					fence = 0
				}
				j += n - 1
				continue
			}
			if fence == 0 && (c == '[' || c == ']' || c == '<') {
				out = append(out, "unescaped "+string(c)+" in: "+line)
			}
		}
	}
	return out
}

// TestSummaryMarkdownHostile: a ledger whose scenario name, run id, fault kinds and targets are
// hostile renders a summary.md with no structure of theirs; the control is the same summary built
// with the strings raw, which mdStructure catches.
func TestSummaryMarkdownHostile(t *testing.T) {
	for _, h := range hostile {
		t.Run(strings.ToValidUTF8(h, "?"), func(t *testing.T) {
			q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
			text := strings.Join([]string{
				`{"k":"run","v":1,"run_id":` + q(h) + `,"scenario":` + q(h) + `,"seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"shared"}],"pods":["p1"],"target":"eventlogd"}`,
				`{"k":"fault","id":"f1","kind":` + q(h) + `,"target":` + q(h) + `,"phase":"start","t":1000000}`,
				`{"k":"fault","id":"f1","kind":` + q(h) + `,"target":` + q(h) + `,"phase":"stop","t":2000000}`,
				`{"k":"mut","mid":"m1","tenant":"A","op":"write","path":"/x/A/m1","intended_t":1000000,"t":1000000,"done_t":2000000,"res":"ok","pod":"p1"}`,
				`{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`,
				`{"k":"end","t":10000000,"drained":true}`,
			}, "\n") + "\n"
			r, err := ledger.NewReader("hostile.jsonl", strings.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			in, err := BuildFrom(r, "hostile.jsonl", nil, nil, verifier.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if in.Summary.Verdict != verifier.VerdictFail {
				t.Fatalf("verdict %s, want fail (the write was lost)", in.Summary.Verdict)
			}
			var md bytes.Buffer
			if err := WriteMarkdown(&md, in.Summary, in.Data, "report.html"); err != nil {
				t.Fatal(err)
			}
			got := md.String()
			if bad := mdStructure(strings.Replace(got, "[report.html](report.html)", "", 1)); len(bad) > 0 {
				t.Errorf("summary.md carries the ledger's structure: %q\n%s", bad, got)
			}
			if !strings.HasPrefix(got, "### ❌ seqgate: **FAIL**") || strings.Count(got, "**PASS**") > 0 && !strings.Contains(got, `\*\*PASS\*\*`) {
				t.Errorf("summary.md does not lead with the real verdict:\n%s", got)
			}
			// The control: the hostile string, raw where the summary puts it, is caught.
			raw := "### ❌ seqgate: **FAIL**, scenario `" + h + "`\n\n- " + h + "\n"
			if len(mdStructure(raw)) == 0 {
				t.Errorf("control: mdStructure misses the raw string %q", h)
			}
		})
	}
}

// TestMdCode: a code span holds any string literally, backticks included.
func TestMdCode(t *testing.T) {
	cases := []struct{ in, cell, want string }{
		{"pod-2", "", "`pod-2`"},
		{"a`b", "", "``a`b``"},
		{"`x", "", "`` `x ``"},
		{"", "", "`  `"},
		{"a|b", "cell", "`a\\|b`"},
		{"a\nb", "", "`a\\x0ab`"},
	}
	for _, c := range cases {
		if got := mdCode(c.in, c.cell != ""); got != c.want {
			t.Errorf("mdCode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzMarkdownEscape: whatever a ledger string holds, escaped as text after a list marker, or as a
// code span in a heading and in a table cell, it adds no structure.
func FuzzMarkdownEscape(f *testing.F) {
	for _, h := range hostile {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Contains(mdText(s)+mdCode(s, false), "\n") {
			t.Fatalf("%q: the escaped forms break the line", s)
		}
		for _, md := range []string{
			"### x\n\n- " + mdText(s) + "\n",
			"### x " + mdCode(s, false) + "\n",
			"### x\n\n| a | " + mdCode(s, true) + " |\n",
		} {
			if bad := mdStructure(md); len(bad) > 0 {
				t.Fatalf("%q renders as %q: %q", s, md, bad)
			}
		}
	})
}
