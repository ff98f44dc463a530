package verifier

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier/synth"
)

// TestVerifySynthExactly generates ledgers with the LEDGER engineer's synth package (random anomalies,
// known truth) and checks that the verifier reports exactly the injected instances — the same sets of
// mutations, (consumer, event) pairs, paths and resets — and the truth's verdict.
func TestVerifySynthExactly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tenants := rapid.IntRange(1, 5).Draw(t, "tenants")
		cold := rapid.IntRange(0, tenants-1).Draw(t, "cold")
		cfg := synth.Config{
			Seed:               rapid.Int64().Draw(t, "seed"),
			Tenants:            tenants,
			ConsumersPerTenant: rapid.IntRange(1, 3).Draw(t, "consumers"),
			Pods:               rapid.IntRange(1, 3).Draw(t, "pods"),
			Cold:               cold,
			Lost:               rapid.IntRange(0, 3).Draw(t, "lost"),
			Silent:             rapid.IntRange(0, 2).Draw(t, "silent"),
			CrashLoss:          rapid.IntRange(0, 3).Draw(t, "crash"),
			Skipped:            rapid.IntRange(0, 3).Draw(t, "skipped"),
			Undelivered:        rapid.IntRange(0, 2).Draw(t, "undelivered"),
			Duplicates:         rapid.IntRange(0, 3).Draw(t, "duplicates"),
			Leaks:              rapid.IntRange(0, 2).Draw(t, "leaks"),
			Unexpected:         rapid.IntRange(0, 2).Draw(t, "unexpected"),
			Reorder:            rapid.IntRange(0, 3).Draw(t, "reorder"),
			Recovered:          rapid.IntRange(0, 2).Draw(t, "recovered"),
			SeqTooOld:          rapid.IntRange(0, 2).Draw(t, "seq_too_old"),
			SpuriousResets:     rapid.IntRange(0, 2).Draw(t, "spurious"),
			ColdWakeups:        rapid.IntRange(0, cold).Draw(t, "cold_wakeups"),
			SeqMismatch:        rapid.IntRange(0, 3).Draw(t, "seq_mismatch"),
			MaskedSkips:        rapid.IntRange(0, 2).Draw(t, "masked_skips"),
			Events:             rapid.IntRange(400, 1000).Draw(t, "events"),
			Resync:             rapid.Bool().Draw(t, "resync"),
		}
		if cfg.Resync {
			cfg.ResyncMissed = rapid.IntRange(0, 2).Draw(t, "resync_missed")
		}
		if cfg.CrashLoss > 0 && cfg.Pods < 2 {
			cfg.Pods = 2
		}
		if cfg.Tenants-cfg.Cold < 2 {
			cfg.Leaks = 0
		}
		if cfg.Skipped+cfg.Undelivered+cfg.MaskedSkips > 0 && cfg.SeqTooOld+cfg.SpuriousResets+cfg.ResyncMissed > 0 && (cfg.Tenants-cfg.Cold)*cfg.ConsumersPerTenant < 2 {
			cfg.ConsumersPerTenant = 2 // a seq_too_old reset on the same consumer would excuse its skip
		}
		if err := cfg.Validate(); err != nil {
			t.Skip(err)
		}
		var buf bytes.Buffer
		w := ledger.NewWriter(&buf)
		truth, err := synth.Generate(cfg, w)
		if err != nil {
			t.Skip(err) // the generator could not place everything; not the verifier's business
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r, err := ledger.NewReader("synth.jsonl", bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		s, err := Verify(r, Options{Witnesses: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		compareTruth(t, s, truth)
	})
}

func compareTruth(t *rapid.T, s *Summary, tr synth.Truth) {
	counts := []struct {
		name      string
		got, want int64
	}{
		{"acked", s.Acked, int64(tr.Acked)}, {"lost", s.Lost, int64(tr.Lost)},
		{"skipped", s.Skipped, int64(tr.Skipped)}, {"undelivered", s.Undelivered, int64(tr.Undelivered)},
		{"duplicates", s.Duplicates, int64(tr.Duplicates)}, {"unexpected", s.Unexpected, int64(tr.Unexpected)},
		{"leaks", s.Leaks, int64(tr.Leaks)}, {"recovered", s.Recovered, int64(tr.Recovered)},
		{"seq_mismatch", s.SeqMismatch, int64(tr.SeqMismatch)},
		{"reset_covered", s.ResetCovered, int64(tr.ResetCovered)}, {"spurious_resets", s.SpuriousResets, int64(tr.SpuriousResets)},
		{"cold_wakeups", s.ColdWakeups, int64(tr.ColdWakeups)}, {"reorder.overtaken", s.Reorder.Overtaken, int64(tr.Reorder.Overtaken)},
		{"records", s.Records, tr.Records},
		{"resync_proven", s.ResyncProven, int64(tr.ResyncProven)}, {"resync_missed", s.ResyncMissed, int64(tr.ResyncMissed)},
		{"resync_unproven", s.ResyncUnproven, 0},
	}
	for _, c := range counts {
		if c.got != c.want {
			t.Errorf("%s = %d, truth %d", c.name, c.got, c.want)
		}
	}
	for reason, n := range tr.LostByReason {
		if got := s.LostByReason[reason]; got != int64(n) {
			t.Errorf("lost_by_reason.%s = %d, truth %d", reason, got, n)
		}
	}
	in := tr.Instances
	// Which counter reason explains which loss is only decidable when the reasons' increases are seen
	// in different scrapes; synth may raise several in one, so sets compare the class (counter, crash,
	// silent) and lost_by_reason above compares the counts per reason.
	class := func(reason string) string {
		if reason == ReasonCrash || reason == ReasonSilent {
			return reason
		}
		return "counter"
	}
	var gotLost []string
	for _, w := range s.Witnesses["lost"] {
		l := w.(lostWitness)
		gotLost = append(gotLost, join(l.MID, l.Tenant, l.Pod, class(l.Reason)))
	}
	slices.Sort(gotLost)
	sameSet(t, "lost", gotLost, keys(in.Lost, func(l synth.LostMut) string {
		return join(l.MID, l.Tenant, l.Pod, class(l.Reason))
	}))
	ev := func(e synth.ConsumerEv) string { return join(e.Consumer, e.Tenant, e.Seq, e.Path) }
	sameSet(t, "skipped", witnessKeys(s, "skipped", "consumer", "tenant", "seq", "path"), keys(in.Skipped, ev))
	sameSet(t, "undelivered", witnessKeys(s, "undelivered", "consumer", "tenant", "seq", "path"), keys(in.Undelivered, ev))
	sameSet(t, "reset_covered", witnessKeys(s, "reset_covered", "consumer", "tenant", "seq", "path"), keys(in.ResetCovered, ev))
	cp := func(c synth.ConsumerPath) string { return join(c.Consumer, c.Path) }
	sameSet(t, "seq_mismatch", witnessKeys(s, "seq_mismatch", "consumer", "path", "frame_seq", "row_seq"), keys(in.SeqMismatch, func(m synth.SeqMismatch) string {
		return join(m.Consumer, m.Path, m.FrameSeq, m.RowSeq)
	}))
	sameSet(t, "duplicates", witnessKeys(s, "duplicates", "consumer", "path"), keys(in.Duplicates, cp))
	sameSet(t, "unexpected", witnessKeys(s, "unexpected", "consumer", "path"), keys(in.Unexpected, cp))
	sameSet(t, "leaks", witnessKeys(s, "leaks", "consumer", "consumer_tenant", "path", "owner_tenant"), keys(in.Leaks, func(l synth.Leak) string {
		return join(l.Consumer, l.Tenant, l.Path, l.Owner)
	}))
	sameSet(t, "reorder", witnessKeys(s, "reorder", "consumer", "path", "overtaken_by_path"), keys(in.Reorder, func(o synth.Overtaken) string {
		return join(o.Consumer, o.Path, o.By)
	}))
	sameSet(t, "recovered", witnessKeys(s, "recovered", "mid"), keys(in.Recovered, func(m string) string { return join(m) }))
	sameSet(t, "spurious_resets", witnessKeys(s, "spurious_resets", "consumer", "cursor_before", "reset_seq"), keys(in.SpuriousResets, func(sp synth.Spurious) string {
		return join(sp.Consumer, sp.From, sp.To)
	}))
	sameSet(t, "cold_wakeups", witnessKeys(s, "cold_wakeups", "tenant"), keys(in.ColdWakeups, func(x string) string { return join(x) }))
	if s.Verdict != tr.Verdict {
		t.Errorf("verdict %s, truth %s (failed %v, truth because %v)", s.Verdict, tr.Verdict, s.FailedChecks, tr.FailedBecause)
	}
}

func join(parts ...any) string { return fmt.Sprint(parts...) }

func keys[T any](xs []T, key func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, key(x))
	}
	slices.Sort(out)
	return out
}

// witnessKeys reads fields of every witness of check through their JSON form (what operators see).
func witnessKeys(s *Summary, check string, fields ...string) []string {
	var out []string
	for _, w := range s.Witnesses[check] {
		b, _ := json.Marshal(w)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		parts := make([]any, len(fields))
		for i, f := range fields {
			v := m[f]
			if fv, ok := v.(float64); ok {
				v = int64(fv)
			}
			parts[i] = v
		}
		out = append(out, join(parts...))
	}
	slices.Sort(out)
	return out
}

func sameSet(t *rapid.T, name string, got, want []string) {
	if !slices.Equal(got, want) {
		t.Errorf("%s: verifier found %v\ninjected %v", name, got, want)
	}
}
