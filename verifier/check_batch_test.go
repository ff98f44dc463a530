package verifier

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// batchLedger is a run of tenant A with one durable consumer: a batch write of two files (m4.0 and
// m4.1, batch m4) and a single write m5; evs lists the consumer's frames in delivery order, each
// "ev <mid> <seq>" (ev records name the batch of batch files) or "reset <reason> <seq>". seqs maps
// the mids to their audit seqs.
func batchLedger(seqs map[string]int, frames ...string) string {
	var b strings.Builder
	w := func(s string) { b.WriteString(s + "\n") }
	w(`{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1,"tenants":[{"id":"A","mode":"dedicated","cold":false}],"pods":["p1"],"target":"eventlogd"}`)
	w(`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":0,"phase":"open","pod":"p1","since":0}`)
	batchOf := map[string]string{"m4.0": "m4", "m4.1": "m4"}
	for _, m := range []string{"m4.0", "m4.1", "m5"} {
		batch := ""
		if b := batchOf[m]; b != "" {
			batch = `,"batch":"` + b + `"`
		}
		w(`{"k":"mut","mid":"` + m + `","tenant":"A","op":"write","path":"/x/A/` + m + `","intended_t":1000000,"t":1000000,"done_t":2000000,"res":"ok","pod":"p1"` + batch + `}`)
	}
	t := 3000000
	for _, f := range frames {
		p := strings.Fields(f)
		t += 1000000
		switch p[0] {
		case "ev":
			batch := ""
			if b := batchOf[p[1]]; b != "" {
				batch = `,"batch":"` + b + `"`
			}
			w(`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":` + itoaT(t) + `,"seq":` + p[2] + `,"op":"write","path":"/x/A/` + p[1] + `","pod":"p1"` + batch + `}`)
		case "reset":
			w(`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":` + itoaT(t) + `,"seq":` + p[2] + `,"reason":"` + p[1] + `"}`)
		}
	}
	final := 0
	for _, m := range []string{"m4.0", "m4.1", "m5"} {
		w(`{"k":"persisted","tenant":"A","seq":` + itoaT(seqs[m]) + `,"op":"write","path":"/x/A/` + m + `"}`)
		final = max(final, seqs[m])
	}
	w(`{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":90000000,"first_since":0,"final_cursor":` + itoaT(final) + `,"durable":true}`)
	w(`{"k":"end","t":100000000,"drained":true}`)
	return b.String()
}

func itoaT(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestBatchAtomicity(t *testing.T) {
	inOrder := map[string]int{"m4.0": 1, "m4.1": 2, "m5": 3}
	pieces := map[string]int{"m4.0": 1, "m5": 2, "m4.1": 3} // the batch committed in two pieces around m5
	for _, tc := range []struct {
		name   string
		seqs   map[string]int
		frames []string
		torn   int64
		shape  string
		other  string
	}{
		{name: "whole batch, then another write", seqs: inOrder, frames: []string{"ev m4.0 1", "ev m4.1 2", "ev m5 3"}},
		{name: "another write before the whole batch", seqs: map[string]int{"m5": 1, "m4.0": 2, "m4.1": 3},
			frames: []string{"ev m5 1", "ev m4.0 2", "ev m4.1 3"}},
		{name: "batch in pieces around another write", seqs: pieces, frames: []string{"ev m4.0 1", "ev m5 2", "ev m4.1 3"},
			torn: 1, shape: "interleaved", other: "/x/A/m5"},
		{name: "pieces around a structural op", seqs: inOrder,
			frames: []string{"ev m4.0 1", "reset structural_change 2", "ev m4.1 2", "ev m5 3"}, torn: 1, shape: "interleaved"},
		{name: "a resync between the pieces covers the batch", seqs: pieces,
			frames: []string{"ev m4.0 1", "reset seq_too_old 1", "ev m5 2", "ev m4.1 3"}},
		{name: "part of the batch, the rest skipped", seqs: inOrder, frames: []string{"ev m4.0 1", "ev m5 3"},
			torn: 1, shape: "incomplete", other: "/x/A/m5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, batchLedger(tc.seqs, tc.frames...), Options{})
			failed := slices.Contains(s.FailedChecks, CheckBatchAtomicity)
			if s.Batches != 1 || s.BatchTorn != tc.torn || failed != (tc.torn > 0) || s.PerConsumer["cA"].BatchTorn != tc.torn {
				t.Fatalf("batches %d, batch_torn %d (cA %d), failed %v; want 1, %d", s.Batches, s.BatchTorn, s.PerConsumer["cA"].BatchTorn, s.FailedChecks, tc.torn)
			}
			if tc.torn == 0 {
				if len(s.Witnesses[CheckBatchAtomicity]) != 0 {
					t.Fatalf("witnesses %v", s.Witnesses[CheckBatchAtomicity])
				}
				return
			}
			b, _ := json.Marshal(s.Witnesses[CheckBatchAtomicity][0])
			var w map[string]any
			_ = json.Unmarshal(b, &w)
			if w["shape"] != tc.shape || w["batch"] != "m4" || w["consumer"] != "cA" || w["delivered_before_other"] != 1.0 ||
				(tc.other != "" && w["other_path"] != tc.other) {
				t.Fatalf("witness %s, want shape %s, batch m4, 1 delivered before %s", b, tc.shape, tc.other)
			}
		})
	}
}
