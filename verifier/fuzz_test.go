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
