package synth_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"pgregory.net/rapid"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
	"github.com/seqgate/seqgate/verifier/synth"
)

// TestMain lowers rapid's default of 100 cases to 25 (each generates and verifies a few thousand
// events; under -race on two cores 100 take minutes); -rapid.checks=N still overrides.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if !set {
		_ = flag.Set("rapid.checks", "25")
	}
	os.Exit(m.Run())
}

// TestVerifierAgreesWithTruth runs the real verifier over ledgers with random anomaly counts and
// compares every count and the verdict with the generator's truth. A disagreement is a bug in one
// of the two (they were written independently from the spec).
func TestVerifierAgreesWithTruth(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := synth.Config{
			Seed:               rapid.Int64().Draw(t, "seed"),
			Tenants:            rapid.IntRange(2, 5).Draw(t, "tenants"),
			ConsumersPerTenant: rapid.IntRange(1, 3).Draw(t, "consumers"),
			Events:             rapid.IntRange(1500, 4000).Draw(t, "events"),
			Pods:               rapid.IntRange(2, 4).Draw(t, "pods"),
			Lost:               rapid.IntRange(0, 3).Draw(t, "lost"),
			Silent:             rapid.IntRange(0, 2).Draw(t, "silent"),
			CrashLoss:          rapid.IntRange(0, 2).Draw(t, "crash"),
			Skipped:            rapid.IntRange(0, 3).Draw(t, "skipped"),
			Undelivered:        rapid.IntRange(0, 3).Draw(t, "undelivered"),
			Duplicates:         rapid.IntRange(0, 3).Draw(t, "duplicates"),
			Leaks:              rapid.IntRange(0, 2).Draw(t, "leaks"),
			Unexpected:         rapid.IntRange(0, 2).Draw(t, "unexpected"),
			Reorder:            rapid.IntRange(0, 3).Draw(t, "reorder"),
			Recovered:          rapid.IntRange(0, 2).Draw(t, "recovered"),
			SeqTooOld:          rapid.IntRange(0, 2).Draw(t, "seqtooold"),
			SpuriousResets:     rapid.IntRange(0, 2).Draw(t, "spurious"),
		}
		cfg.Cold = rapid.IntRange(0, cfg.Tenants-2).Draw(t, "cold")
		cfg.ColdWakeups = rapid.IntRange(0, cfg.Cold).Draw(t, "wakeups")
		if err := cfg.Validate(); err != nil {
			t.Skip(err)
		}
		var buf bytes.Buffer
		w := ledger.NewWriter(&buf)
		tr, err := synth.Generate(cfg, w)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		r, err := ledger.NewReader("synth", &buf)
		if err != nil {
			t.Fatal(err)
		}
		s, err := verifier.Verify(r, verifier.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name      string
			got, want int64
		}{
			{"acked", s.Acked, int64(tr.Acked)},
			{"lost", s.Lost, int64(tr.Lost)},
			{"silent", s.LostByReason["silent"], int64(tr.LostByReason["silent"])},
			{"crash", s.LostByReason["crash"], int64(tr.LostByReason["crash"])},
			{"tenant_cap", s.LostByReason["tenant_cap"], int64(tr.LostByReason["tenant_cap"])},
			{"global_cap", s.LostByReason["global_cap"], int64(tr.LostByReason["global_cap"])},
			{"expired", s.LostByReason["expired"], int64(tr.LostByReason["expired"])},
			{"skipped", s.Skipped, int64(tr.Skipped)},
			{"undelivered", s.Undelivered, int64(tr.Undelivered)},
			{"reset_covered", s.ResetCovered, int64(tr.ResetCovered)},
			{"spurious_resets", s.SpuriousResets, int64(tr.SpuriousResets)},
			{"duplicates", s.Duplicates, int64(tr.Duplicates)},
			{"unexpected", s.Unexpected, int64(tr.Unexpected)},
			{"leaks", s.Leaks, int64(tr.Leaks)},
			{"recovered", s.Recovered, int64(tr.Recovered)},
			{"cold_wakeups", s.ColdWakeups, int64(tr.ColdWakeups)},
			{"overtaken", s.Reorder.Overtaken, int64(tr.Reorder.Overtaken)},
			{"records", s.Records, tr.Records},
		} {
			if c.got != c.want {
				t.Errorf("%s: verifier %d, truth %d", c.name, c.got, c.want)
			}
		}
		if s.Verdict != tr.Verdict {
			t.Errorf("verdict: verifier %s (%v), truth %s (%v)", s.Verdict, s.FailedChecks, tr.Verdict, tr.FailedBecause)
		}
	})
}

// TestVerifierCountsOvertakerDeliveredBeforeAck pins one case the property test found: the
// overtaking event is delivered before its own mutation's ack, so its mut record (written at done_t)
// comes after the ev in the ledger. Per the spec the earlier event is still overtaken.
func TestVerifierCountsOvertakerDeliveredBeforeAck(t *testing.T) {
	cfg := synth.Config{Seed: -1, Tenants: 5, ConsumersPerTenant: 3, Events: 3000, Pods: 4, Silent: 1, Skipped: 3,
		Undelivered: 1, Leaks: 1, Unexpected: 1, Reorder: 2, Recovered: 2, SeqTooOld: 1, SpuriousResets: 2}
	var buf bytes.Buffer
	w := ledger.NewWriter(&buf)
	tr, err := synth.Generate(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, _ := ledger.NewReader("synth", &buf)
	s, err := verifier.Verify(r, verifier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Reorder.Overtaken != int64(tr.Reorder.Overtaken) {
		t.Errorf("overtaken: verifier %d, truth %d %+v", s.Reorder.Overtaken, tr.Reorder.Overtaken, tr.Instances.Reorder)
	}
}
