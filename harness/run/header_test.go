package run

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// TestHeaderTenantRecords: a run of more than TenantRecordsAbove tenants gets a run record without
// "tenants" and one tenant record per tenant right after it, before the records held back; one of
// TenantRecordsAbove tenants (the control) lists them in the run record. Either ledger reads back
// with every tenant, and a clean run on it (a write to the first tenant, delivered and persisted;
// the others idle, half of them cold) verifies as a pass; with a tenant record out of place it is
// refused.
func TestHeaderTenantRecords(t *testing.T) {
	for _, c := range []struct {
		tenants     int
		wantRecords bool
	}{
		{tenants: TenantRecordsAbove, wantRecords: false},
		{tenants: TenantRecordsAbove + 1, wantRecords: true},
		{tenants: 10_000, wantRecords: true},
	} {
		t.Run(fmt.Sprint(c.tenants), func(t *testing.T) {
			var buf bytes.Buffer
			w := ledger.NewWriter(&buf)
			h := &headedSink{w: w}
			// A pod record written before the header is held back until after it.
			if err := h.Write(&ledger.Record{K: ledger.KindConn, Consumer: "c1", Tenant: "t1", Conn: "c1.1", T: 0, Phase: "open", Pod: "p1"}); err != nil {
				t.Fatal(err)
			}
			budget := 1e-4
			run := &ledger.Record{K: ledger.KindRun, V: ledger.Version, RunID: "r1", Scenario: "many", Seed: 1, StartUnixNs: 1e12,
				Budget: &budget, Pods: []string{"p1"}, Target: "eventlogd"}
			for i := 1; i <= c.tenants; i++ {
				run.Tenants = append(run.Tenants, ledger.Tenant{ID: fmt.Sprintf("t%d", i), Mode: "dedicated", Cold: i%2 == 0, Name: fmt.Sprintf("tenant_%d", i)})
			}
			if err := h.header(run); err != nil {
				t.Fatal(err)
			}
			if len(run.Tenants) != c.tenants {
				t.Fatal("header changed the caller's run record")
			}
			for _, r := range []*ledger.Record{
				{K: ledger.KindMut, MID: "m1", Tenant: "t1", Op: "write", Path: "/x/t1/m1", IntendedT: 1e6, T: 1e6, DoneT: 2e6, Res: "ok", Pod: "p1"},
				{K: ledger.KindEv, Consumer: "c1", Tenant: "t1", Conn: "c1.1", T: 3e6, Seq: 1, Op: "write", Path: "/x/t1/m1", Pod: "p1"},
				{K: ledger.KindPersisted, Tenant: "t1", Seq: 1, Op: "write", Path: "/x/t1/m1"},
				{K: ledger.KindConsumer, Consumer: "c1", Tenant: "t1", FromT: 0, ToT: 9e6, FinalCursor: 1, Durable: true},
				{K: ledger.KindEnd, T: 10e6, Drained: true, Reason: "completed"},
			} {
				if err := h.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
			sc.Buffer(nil, 1<<30)
			var lines []string
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			records := 0
			for _, l := range lines {
				if strings.HasPrefix(l, `{"k":"tenant",`) {
					records++
				}
			}
			listed := strings.Contains(lines[0], `"tenants":[`)
			if c.wantRecords {
				if listed || records != c.tenants || !strings.HasPrefix(lines[c.tenants+1], `{"k":"conn",`) {
					t.Fatalf("run record lists tenants: %v, %d tenant records (want %d, right after it, then the held-back conn)", listed, records, c.tenants)
				}
			} else if !listed || records != 0 {
				t.Fatalf("run record lists tenants: %v, %d tenant records; want them listed and no records", listed, records)
			}
			rd, err := ledger.NewReader("many.jsonl", bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if first, err := rd.Next(); err != nil || first.K != ledger.KindRun || len(first.Tenants) != c.tenants {
				t.Fatalf("the reader's first record: %v, %v; want the run record with %d tenants", first, err, c.tenants)
			}
			if rd, err = ledger.NewReader("many.jsonl", bytes.NewReader(buf.Bytes())); err != nil {
				t.Fatal(err)
			}
			sum, err := verifier.Verify(rd, verifier.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Verdict != "pass" || len(sum.Tenants) != c.tenants {
				t.Fatalf("verdict %s with %d tenants, want pass with %d; failures %v", sum.Verdict, len(sum.Tenants), c.tenants, sum.Failures)
			}
			if !c.wantRecords {
				return
			}
			// The negative control: the tenant records must come right after the run record; with the
			// last one moved after the first other record, the ledger is refused.
			var moved bytes.Buffer
			for i, l := range lines {
				if i == c.tenants {
					continue
				}
				moved.WriteString(l + "\n")
				if i == c.tenants+1 {
					moved.WriteString(lines[c.tenants] + "\n")
				}
			}
			if rd, err = ledger.NewReader("moved.jsonl", &moved); err == nil {
				_, err = verifier.Verify(rd, verifier.Options{})
			}
			if err == nil || !strings.Contains(err.Error(), "tenant records come right after the run record") {
				t.Fatalf("a tenant record after a conn record: err = %v, want the ledger refused", err)
			}
		})
	}
}
