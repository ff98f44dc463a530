package verifier

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier/synth"
)

// synthText is the ledger the generator writes for cfg.
func synthText(t testing.TB, cfg synth.Config) string {
	t.Helper()
	var buf bytes.Buffer
	w := ledger.NewWriter(&buf)
	if _, err := synth.Generate(cfg, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// line is one named line of a hand-written ledger, so cases can drop or replace lines by name.
type line struct{ name, json string }

// baseLedger is a tiny clean run: tenants A and B, one durable consumer each, three writes, all
// delivered and audited. Times are ns since the run started (1 ms = 1000000).
var baseLedger = []line{
	{"run", `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":false}],"pods":["p1","p2"],"target":"eventlogd"}`},
	{"openA", `{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":0,"phase":"open","pod":"p1","since":0}`},
	{"openB", `{"k":"conn","consumer":"cB","tenant":"B","conn":"c2","t":0,"phase":"open","pod":"p1","since":0}`},
	{"mutA1", `{"k":"mut","mid":"m1","tenant":"A","op":"write","path":"/x/A/m1","intended_t":1000000,"t":1000000,"done_t":2000000,"res":"ok","pod":"p1"}`},
	{"mutB3", `{"k":"mut","mid":"m3","tenant":"B","op":"write","path":"/x/B/m3","intended_t":1000000,"t":1000000,"done_t":2000000,"res":"ok","pod":"p2"}`},
	{"evA1", `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":3000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`},
	{"evB3", `{"k":"ev","consumer":"cB","tenant":"B","conn":"c2","t":4000000,"seq":1,"op":"write","path":"/x/B/m3","pod":"p1"}`},
	{"mutA2", `{"k":"mut","mid":"m2","tenant":"A","op":"write","path":"/x/A/m2","intended_t":4000000,"t":4000000,"done_t":5000000,"res":"ok","pod":"p1"}`},
	{"evA2", `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6000000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p1"}`},
	{"persA1", `{"k":"persisted","tenant":"A","seq":1,"op":"write","path":"/x/A/m1"}`},
	{"persA2", `{"k":"persisted","tenant":"A","seq":2,"op":"write","path":"/x/A/m2"}`},
	{"persB3", `{"k":"persisted","tenant":"B","seq":1,"op":"write","path":"/x/B/m3"}`},
	{"consA", `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":2,"durable":true}`},
	{"consB", `{"k":"consumer","consumer":"cB","tenant":"B","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`},
	{"end", `{"k":"end","t":10000000,"drained":true}`},
}

// edit describes a variant of baseLedger: lines dropped, lines replaced, lines inserted after a name.
type edit struct {
	drop    []string
	replace map[string]string
	after   map[string][]string
}

func (e edit) build() string {
	var b strings.Builder
	for _, l := range baseLedger {
		drop := false
		for _, d := range e.drop {
			drop = drop || d == l.name
		}
		if !drop {
			j := l.json
			if r, ok := e.replace[l.name]; ok {
				j = r
			}
			b.WriteString(j + "\n")
		}
		for _, x := range e.after[l.name] {
			b.WriteString(x + "\n")
		}
	}
	return b.String()
}

func verifyText(t testing.TB, text string, opts Options) *Summary {
	t.Helper()
	r, err := ledger.NewReader("test.jsonl", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Verify(r, opts)
	if err != nil {
		t.Fatalf("verify: %v\nledger:\n%s", err, text)
	}
	return s
}

func newTestReader(text string) (*ledger.Reader, error) {
	return ledger.NewReader("test.jsonl", strings.NewReader(text))
}

func ptrF(f float64) *float64 { return &f }
