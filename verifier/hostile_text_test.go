package verifier

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/internal/printable"
)

// TestTextOutputHostile: a ledger whose run id, scenario, fault, tenant, pod and consumer names carry
// ANSI sequences, newlines and bidi controls prints a text summary without any of them acting: no
// escape byte reaches the terminal, the first line is the real verdict, no line forges another; and
// the JUnit stays well-formed XML without the escape byte. The control writes the same ledger's
// names raw, which the check catches.
func TestTextOutputHostile(t *testing.T) {
	const forge = "\x1b[1A\x1b[2Kverdict: PASS (exit 0)\nverdict: PASS\u202e"
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	tenant, pod, cons := q("A"+forge), q("p"+forge), q("c"+forge)
	text := strings.Join([]string{
		`{"k":"run","v":1,"run_id":` + q("r"+forge) + `,"scenario":` + q("s"+forge) + `,"seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":` + tenant + `,"mode":"shared"}],"pods":[` + pod + `],"target":"eventlogd"}`,
		`{"k":"fault","id":` + q("f"+forge) + `,"kind":` + q("k"+forge) + `,"target":` + q("t"+forge) + `,"phase":"start","t":1000000}`,
		`{"k":"conn","consumer":` + cons + `,"tenant":` + tenant + `,"conn":"c1","t":0,"phase":"open","pod":` + pod + `,"since":0}`,
		`{"k":"mut","mid":` + q("m"+forge) + `,"tenant":` + tenant + `,"op":"write","path":` + q("/x"+forge) + `,"intended_t":1000000,"t":1000000,"done_t":2000000,"res":"ok","pod":` + pod + `}`,
		`{"k":"mut","mid":"m2","tenant":` + tenant + `,"op":"write","path":"/y","intended_t":1000000,"t":1000000,"done_t":2000000,"res":"ok","pod":` + pod + `}`,
		`{"k":"ev","consumer":` + cons + `,"tenant":` + tenant + `,"conn":"c1","t":3000000,"seq":1,"op":"write","path":"/y","pod":` + pod + `}`,
		`{"k":"persisted","tenant":` + tenant + `,"seq":1,"op":"write","path":"/y"}`,
		`{"k":"consumer","consumer":` + cons + `,"tenant":` + tenant + `,"from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`,
		`{"k":"end","t":10000000,"drained":true}`,
	}, "\n") + "\n"
	s := verifyText(t, text, Options{})
	if s.Verdict != VerdictFail {
		t.Fatalf("verdict %s, want fail (a write was lost)", s.Verdict)
	}
	var out bytes.Buffer
	if err := WriteText(&out, s); err != nil {
		t.Fatal(err)
	}
	forged := func(text string) []string {
		var bad []string
		if strings.ContainsFunc(text, func(r rune) bool { return printable.Hidden(r) && r != '\n' && r != '\t' }) {
			bad = append(bad, "a control or bidi character")
		}
		lines := strings.Split(text, "\n")
		if !strings.HasPrefix(lines[0], "verdict: FAIL") {
			bad = append(bad, "first line: "+lines[0])
		}
		for _, l := range lines[1:] {
			if strings.HasPrefix(strings.TrimSpace(l), "verdict:") {
				bad = append(bad, "a forged line: "+l)
			}
		}
		return bad
	}
	if bad := forged(out.String()); len(bad) > 0 {
		t.Errorf("text summary acts on the ledger's names: %q\n%s", bad, out.String())
	}
	if raw := "verdict: FAIL (exit 1)  run r" + forge + "\n"; len(forged(raw)) == 0 {
		t.Error("control: the raw run id is not caught")
	}
	var junit bytes.Buffer
	if err := WriteJUnit(&junit, s); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsRune(junit.Bytes(), 0x1b) {
		t.Errorf("JUnit carries an escape byte:\n%s", junit.String())
	}
	var doc struct{}
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Errorf("JUnit is not well-formed: %v", err)
	}
}
