package verifier

import (
	"bytes"
	"testing"

	"github.com/seqgate/seqgate/verifier/synth"
)

// TestUnreceivedKeptOrWalkedAgain: skipped's and undelivered's Finish read a consumer's unreceived
// rows from what the first of them kept, or walk the audit again when there were too many to keep.
// Both ways give the same summary, witnesses included, on ledgers with skips, undelivered events and
// resets; and the counts are the planted ones, so neither way can pass by finding nothing.
func TestUnreceivedKeptOrWalkedAgain(t *testing.T) {
	for _, cfg := range []synth.Config{
		{Seed: 3, Tenants: 3, ConsumersPerTenant: 2, Events: 3000, Skipped: 4, Undelivered: 3, SeqTooOld: 2, Lost: 1},
		{Seed: 4, Tenants: 2, ConsumersPerTenant: 2, Events: 3000, Skipped: 2, Undelivered: 2, Resync: true, SeqTooOld: 2, ResyncMissed: 2},
	} {
		text := synthText(t, cfg)
		judge := func(kept int) (*Summary, string) {
			defer func(k int) { unreceivedKept = k }(unreceivedKept)
			unreceivedKept = kept
			s := verifyText(t, text, Options{Witnesses: 1000})
			var out bytes.Buffer
			if err := WriteJSON(&out, s); err != nil {
				t.Fatal(err)
			}
			return s, out.String()
		}
		s, kept := judge(1 << 16)
		if s.Skipped < int64(cfg.Skipped) || s.Undelivered < int64(cfg.Undelivered) {
			t.Fatalf("seed %d: skipped %d, undelivered %d: fewer than planted (%d, %d)", cfg.Seed, s.Skipped, s.Undelivered, cfg.Skipped, cfg.Undelivered)
		}
		if _, walked := judge(0); walked != kept {
			t.Errorf("seed %d: the summary with every consumer walked again differs from the one with its rows kept", cfg.Seed)
		}
	}
}
