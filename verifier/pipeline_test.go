package verifier

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"unsafe"

	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier/synth"
)

// lendingSource gives n records and then err, lending each record's Path and MID over one buffer it
// overwrites on the next call and reusing one Record, as a ledger.Reader with BorrowStrings does.
type lendingSource struct {
	n, i int
	err  error
	buf  []byte
	rec  ledger.Record
}

func (s *lendingSource) Next() (*ledger.Record, error) {
	if s.i >= s.n {
		return nil, s.err
	}
	s.buf = fmt.Appendf(s.buf[:0], "/p/%d", s.i)
	path := unsafe.String(&s.buf[0], len(s.buf))
	s.rec = ledger.Record{K: ledger.KindEv, T: int64(s.i), Path: path, MID: path[3:]}
	s.i++
	return &s.rec, nil
}

// TestPipeGivesTheSourcesRecords: the pipe yields the source's records in order, each with the path
// and mid it had when the source gave it (though the source overwrote them since), then the source's
// error, again on every later call; for sources shorter than a batch, of whole batches, longer than
// all batches in flight, and ending in an error other than EOF.
func TestPipeGivesTheSourcesRecords(t *testing.T) {
	defer goleak.VerifyNone(t)
	bad := errors.New("line 9: broken")
	for _, tc := range []struct {
		name string
		n    int
		err  error
	}{
		{"empty", 0, io.EOF},
		{"one", 1, io.EOF},
		{"one batch", pipeRecords, io.EOF},
		{"every batch in flight, thrice, and some", 3*pipeBatches*pipeRecords + 7, io.EOF},
		{"an error after records", pipeRecords + 3, bad},
		{"an error first", 0, bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPipe(&lendingSource{n: tc.n, err: tc.err})
			defer p.close()
			var got []*ledger.Record // each stays as it was until its batch is handed back
			for i := range tc.n {
				r, err := p.Next()
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if want := fmt.Sprintf("/p/%d", i); r.T != int64(i) || r.Path != want || r.MID != want[3:] {
					t.Fatalf("record %d: t %d path %q mid %q, want %d %q %q", i, r.T, r.Path, r.MID, i, want, want[3:])
				}
				got = append(got, r)
				// The first record of this one's batch is as it was: the source's later calls did
				// not overwrite it.
				if first := got[i-i%pipeRecords]; first.Path != fmt.Sprintf("/p/%d", first.T) {
					t.Fatalf("record %d changed to %q while its batch was read", first.T, first.Path)
				}
			}
			for range 2 {
				if _, err := p.Next(); !errors.Is(err, tc.err) {
					t.Fatalf("after %d records: %v, want %v", tc.n, err, tc.err)
				}
			}
		})
	}
}

// TestPipeStopsEarly: closing the pipe before the source is read through ends its goroutine (the
// verifier stops at the first record it cannot judge).
func TestPipeStopsEarly(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, read := range []int{0, 1, pipeRecords*pipeBatches + 1} {
		p := newPipe(&lendingSource{n: 100 * pipeRecords, err: io.EOF})
		for range read {
			if _, err := p.Next(); err != nil {
				t.Fatal(err)
			}
		}
		p.close()
	}
}

// TestVerifyPipelinedAsSerial: Verify, which reads through the pipe, gives the summary VerifySource
// gives reading the same ledger directly, on a ledger with anomalies of every kind.
func TestVerifyPipelinedAsSerial(t *testing.T) {
	defer goleak.VerifyNone(t)
	text := anomalyLedger(t)
	r, err := newTestReader(text)
	if err != nil {
		t.Fatal(err)
	}
	r.BorrowStrings()
	serial, err := VerifySource(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range r.Warnings() {
		serial.Warnings = append(serial.Warnings, w.String())
	}
	piped := verifyText(t, text, Options{})
	var a, b bytes.Buffer
	if err := WriteJSON(&a, serial); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&b, piped); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("pipelined summary differs from the serial one")
	}
	if serial.Verdict != VerdictFail || len(serial.FailedChecks) < 5 {
		t.Errorf("verdict %s %v: the ledger should fail many checks", serial.Verdict, serial.FailedChecks)
	}
}

// anomalyLedger is a synthetic ledger with every anomaly the generator can plant.
func anomalyLedger(t *testing.T) string {
	t.Helper()
	return synthText(t, synth.Config{Seed: 5, Tenants: 4, ConsumersPerTenant: 2, Events: 4000, Cold: 1,
		Lost: 2, Silent: 2, CrashLoss: 1, Skipped: 2, Undelivered: 2, Duplicates: 2, Leaks: 1, Unexpected: 2,
		Reorder: 2, Recovered: 2, SeqTooOld: 2, SpuriousResets: 1, ColdWakeups: 1, SeqMismatch: 2, MaskedSkips: 1})
}
