package verifier

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/seqgate/seqgate/ledger"
)

// FuzzVerify feeds mutated ledgers through the reader and the verifier: whatever the reader accepts,
// the verifier must judge without panicking, and its summary must marshal and carry a valid verdict.
func FuzzVerify(f *testing.F) {
	for _, p := range []string{"testdata/clean.jsonl", "testdata/skipped.jsonl"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, e := range []edit{
		{drop: []string{"evA1"}, after: map[string][]string{"mutA2": {`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":5500000,"seq":2,"reason":"seq_too_old"}`}}},
		{after: map[string][]string{"evA2": {`{"k":"ev","consumer":"cB","tenant":"B","conn":"c2","t":7000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}},
		{drop: []string{"evA1"}, after: map[string][]string{"openB": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":1500000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}},
		// faults and windows, drops, the audit, a seq mismatch
		{replace: map[string]string{"run": withThresholds(`{"latency_ms.p99@steady":["< 5"],"per_tenant.A.seq_mismatch":["== 0"]}`),
			"evA2": `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6000000,"seq":1,"op":"write","path":"/x/A/m2","pod":"p1"}`},
			after: map[string][]string{"evB3": {`{"k":"fault","id":"f1","kind":"k","target":"A","phase":"start","t":2500000}`, `{"k":"drop","tenant":"A","intended_t":3000000}`},
				"mutA2":  {`{"k":"fault","id":"f1","kind":"k","target":"A","phase":"stop","t":5500000}`},
				"persB3": {`{"k":"audit","t":9500000,"ok":false,"tenants":2,"rows":3,"error":"x"}`}}},
	} {
		f.Add([]byte(e.build()))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ledger.NewReader("fuzz.jsonl", bytes.NewReader(data))
		if err != nil {
			return
		}
		s, err := Verify(r, Options{})
		if err != nil {
			return // unusable input is a fine answer; a panic is not
		}
		switch s.Verdict {
		case VerdictPass, VerdictFail, VerdictInconclusive:
		default:
			t.Fatalf("verdict %q", s.Verdict)
		}
		if err := WriteJSON(io.Discard, s); err != nil {
			t.Fatalf("summary does not marshal: %v", err)
		}
		if err := WriteText(io.Discard, s); err != nil {
			t.Fatal(err)
		}
		if err := WriteJUnit(io.Discard, s); err != nil {
			t.Fatal(err)
		}
	})
}
