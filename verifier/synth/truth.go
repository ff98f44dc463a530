package synth

import "sort"

// Truth is what a correct verifier must report for a generated ledger: the counts under the summary
// JSON's names (docs/ledger-v1.md) and, under Instances, exactly which mutations, events and
// consumers make up each count, so tests can compare sets rather than totals.
type Truth struct {
	Acked          int            `json:"acked"`
	Lost           int            `json:"lost"`
	LostByReason   map[string]int `json:"lost_by_reason"` // counter reasons..., "crash", "silent"
	Skipped        int            `json:"skipped"`
	Undelivered    int            `json:"undelivered"`
	Duplicates     int            `json:"duplicates"`
	Unexpected     int            `json:"unexpected"`
	SeqMismatch    int            `json:"seq_mismatch"`
	Leaks          int            `json:"leaks"`
	Recovered      int            `json:"recovered"`
	ResetCovered   int            `json:"reset_covered"`
	ResyncProven   int            `json:"resync_proven"`
	ResyncMissed   int            `json:"resync_missed"`
	SpuriousResets int            `json:"spurious_resets"`
	ColdWakeups    int            `json:"cold_wakeups"`
	Reorder        ReorderTruth   `json:"reorder"`
	Budget         float64        `json:"budget"`
	Verdict        string         `json:"verdict"`        // pass | fail (thresholds aside: synth sets none)
	FailedBecause  []string       `json:"failed_because"` // summary fields that make the verdict fail
	Records        int64          `json:"records"`        // ledger lines written
	Instances      Instances      `json:"instances"`
	tooOld         []tooOldReset  // resolved into SpuriousResets by finish
	misses         []missCand     // resolved into ResyncMissed (or ResyncProven) by finish
}

// missCand is an event a listing ending at t did not show: missed, unless a rename moved its path
// away before t (then the listing owed nothing: proven).
type missCand struct {
	ev    ConsumerEv
	t     int64
	moved bool
}

// ReorderTruth mirrors the summary's reorder object (max_ms is not fixed by the generator).
type ReorderTruth struct {
	Overtaken int `json:"overtaken"`
}

// Instances lists every injected anomaly.
type Instances struct {
	Lost           []LostMut      `json:"lost"`
	Skipped        []ConsumerEv   `json:"skipped"`
	Undelivered    []ConsumerEv   `json:"undelivered"`
	ResetCovered   []ConsumerEv   `json:"reset_covered"`
	ResyncProven   []ConsumerEv   `json:"resync_proven"`
	ResyncMissed   []ConsumerEv   `json:"resync_missed"`
	Duplicates     []ConsumerPath `json:"duplicates"`
	Unexpected     []ConsumerPath `json:"unexpected"`
	SeqMismatch    []SeqMismatch  `json:"seq_mismatch"`
	Leaks          []Leak         `json:"leaks"`
	Reorder        []Overtaken    `json:"reorder"`
	Recovered      []string       `json:"recovered"` // mids
	SpuriousResets []Spurious     `json:"spurious_resets"`
	ColdWakeups    []string       `json:"cold_wakeups"` // tenant ids
}

// LostMut is an acked event mutation that never persisted; Reason is the counter reason that
// explains it, "crash" or "silent".
type LostMut struct {
	MID    string `json:"mid"`
	Tenant string `json:"tenant"`
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
	ack    int64  // done_t: a loss acked before a seq_too_old reset means something may have been swept
}

// tooOldReset is a seq_too_old reset sent at the consumer's cursor (no jump): spurious by the
// decision of 2026-11-30 unless an acked mutation of its tenant acked before it is missing from the
// audit (synth sweeps nothing; only its losses are missing).
type tooOldReset struct {
	consumer, tenant string
	cursor, t        int64
}

// ConsumerEv is one expected event of one consumer.
type ConsumerEv struct {
	Consumer string `json:"consumer"`
	Tenant   string `json:"tenant"`
	Seq      int64  `json:"seq"`
	Path     string `json:"path"`
}

// ConsumerPath is one (consumer, delivered path) pair.
type ConsumerPath struct {
	Consumer string `json:"consumer"`
	Path     string `json:"path"`
}

// Leak is an ev delivered to Consumer (of Tenant) carrying the path of Owner's mutation.
type Leak struct {
	Consumer string `json:"consumer"`
	Tenant   string `json:"tenant"`
	Path     string `json:"path"`
	Owner    string `json:"owner"`
}

// Overtaken is an event delivered after By, whose mutation was sent after this one's ack.
type Overtaken struct {
	Consumer string `json:"consumer"`
	Path     string `json:"path"`
	By       string `json:"by"`
}

// SeqMismatch is a delivery of Path to Consumer in a frame whose seq is not its row's.
type SeqMismatch struct {
	Consumer string `json:"consumer"`
	Path     string `json:"path"`
	FrameSeq int64  `json:"frame_seq"`
	RowSeq   int64  `json:"row_seq"`
}

// Spurious is a seq_too_old reset that moved Consumer's cursor From -> To over a row still audited.
type Spurious struct {
	Consumer string `json:"consumer"`
	From     int64  `json:"from"`
	To       int64  `json:"to"`
}

// finish derives the counts and the expected verdict from the instances (spec "Verdict").
func (t *Truth) finish() {
	t.Lost = len(t.Instances.Lost)
	t.LostByReason = map[string]int{"crash": 0, "silent": 0}
	for _, l := range t.Instances.Lost {
		t.LostByReason[l.Reason]++
	}
	t.Skipped = len(t.Instances.Skipped)
	t.Undelivered = len(t.Instances.Undelivered)
	for _, m := range t.misses {
		if m.moved {
			t.Instances.ResyncProven = append(t.Instances.ResyncProven, m.ev)
		} else {
			t.Instances.ResyncMissed = append(t.Instances.ResyncMissed, m.ev)
		}
	}
	t.misses = nil
	t.ResetCovered = len(t.Instances.ResetCovered)
	t.ResyncProven = len(t.Instances.ResyncProven)
	t.ResyncMissed = len(t.Instances.ResyncMissed)
	t.Duplicates = len(t.Instances.Duplicates)
	t.Unexpected = len(t.Instances.Unexpected)
	t.SeqMismatch = len(t.Instances.SeqMismatch)
	t.Leaks = len(t.Instances.Leaks)
	t.Recovered = len(t.Instances.Recovered)
	for _, r := range t.tooOld {
		swept := false
		for _, l := range t.Instances.Lost {
			swept = swept || (l.Tenant == r.tenant && l.ack < r.t)
		}
		if !swept {
			t.Instances.SpuriousResets = append(t.Instances.SpuriousResets, Spurious{Consumer: r.consumer, From: r.cursor, To: r.cursor})
		}
	}
	t.tooOld = nil
	t.SpuriousResets = len(t.Instances.SpuriousResets)
	t.ColdWakeups = len(t.Instances.ColdWakeups)
	t.Reorder.Overtaken = len(t.Instances.Reorder)
	sort.Strings(t.Instances.ColdWakeups)

	t.FailedBecause = nil
	if t.Acked > 0 && float64(t.Lost)/float64(t.Acked) > t.Budget {
		t.FailedBecause = append(t.FailedBecause, "event_loss_fraction")
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"lost_by_reason.silent", t.LostByReason["silent"]}, {"skipped", t.Skipped}, {"leaks", t.Leaks},
		{"undelivered", t.Undelivered}, {"cold_wakeups", t.ColdWakeups}, {"resync_missed", t.ResyncMissed}} {
		if c.n > 0 {
			t.FailedBecause = append(t.FailedBecause, c.name)
		}
	}
	switch {
	case t.Acked == 0:
		t.Verdict = "inconclusive"
	case len(t.FailedBecause) > 0:
		t.Verdict = "fail"
	default:
		t.Verdict = "pass"
	}
}
