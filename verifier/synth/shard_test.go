package synth_test

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
	"github.com/seqgate/seqgate/verifier/synth"
)

// TestShardedLedgersVerifyLikeOne splits a generated ledger by tenant into three files, as three
// harness shards would write it (run-wide records such as pods and metrics in the first), and checks
// that the merged read gives the verifier the same numbers as the single file.
func TestShardedLedgersVerifyLikeOne(t *testing.T) {
	cfg := synth.Config{Seed: 11, Tenants: 6, ConsumersPerTenant: 2, Events: 6000, Cold: 1, Lost: 2, Silent: 1,
		CrashLoss: 1, Skipped: 2, Undelivered: 1, Duplicates: 2, Leaks: 1, Unexpected: 1, Reorder: 2, Recovered: 1,
		SeqTooOld: 1, SpuriousResets: 1, ColdWakeups: 1}
	var buf bytes.Buffer
	w := ledger.NewWriter(&buf)
	if _, err := synth.Generate(cfg, w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	whole := buf.Bytes()

	const shards = 3
	dir := t.TempDir()
	var ws [shards]*ledger.Writer
	var paths []string
	for i := range ws {
		p := filepath.Join(dir, "shard"+string(rune('a'+i))+".jsonl")
		if i == 1 {
			p += ".gz"
		}
		var err error
		if ws[i], err = ledger.Create(p); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	shardOf := map[string]int{}
	r, _ := ledger.NewReader("whole", bytes.NewReader(whole))
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.K == ledger.KindRun:
			for i, tn := range rec.Tenants {
				shardOf[tn.ID] = i % shards
			}
			for i := range ws {
				hdr := *rec
				hdr.Tenants = nil
				for _, tn := range rec.Tenants {
					if shardOf[tn.ID] == i {
						hdr.Tenants = append(hdr.Tenants, tn)
					}
				}
				ws[i].Write(&hdr)
			}
		case rec.K == ledger.KindEnd:
			for i := range ws {
				ws[i].Write(rec)
			}
		case rec.Tenant != "":
			ws[shardOf[rec.Tenant]].Write(rec)
		default: // pods, faults, metrics, the meta proxy
			ws[0].Write(rec)
		}
	}
	for _, w := range ws {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}

	one, _ := ledger.NewReader("whole", bytes.NewReader(whole))
	s1, err := verifier.Verify(one, verifier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	merged, err := ledger.Open(paths...)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := verifier.Verify(merged, verifier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s2.Warnings) > 0 {
		t.Errorf("warnings: %v", s2.Warnings)
	}
	for _, c := range []struct {
		name string
		a, b int64
	}{
		{"acked", s1.Acked, s2.Acked}, {"lost", s1.Lost, s2.Lost}, {"skipped", s1.Skipped, s2.Skipped},
		{"undelivered", s1.Undelivered, s2.Undelivered}, {"duplicates", s1.Duplicates, s2.Duplicates},
		{"leaks", s1.Leaks, s2.Leaks}, {"unexpected", s1.Unexpected, s2.Unexpected},
		{"reset_covered", s1.ResetCovered, s2.ResetCovered}, {"spurious", s1.SpuriousResets, s2.SpuriousResets},
		{"recovered", s1.Recovered, s2.Recovered}, {"cold", s1.ColdWakeups, s2.ColdWakeups},
		{"overtaken", s1.Reorder.Overtaken, s2.Reorder.Overtaken}, {"silent", s1.LostByReason["silent"], s2.LostByReason["silent"]},
		{"crash", s1.LostByReason["crash"], s2.LostByReason["crash"]},
		{"records (the merge emits one run and one end)", s1.Records, s2.Records},
	} {
		if c.a != c.b {
			t.Errorf("%s: one file %d, merged shards %d", c.name, c.a, c.b)
		}
	}
	if s1.Verdict != s2.Verdict {
		t.Errorf("verdict: one file %s, merged %s", s1.Verdict, s2.Verdict)
	}
}
