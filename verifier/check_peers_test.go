package verifier

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/verifier/synth"
)

// TestPeersEvidence: a seq one consumer received and its peer passed is skipped with or without an
// audit; two paths at one seq are seq_mismatch for both; clean runs pass.
func TestPeersEvidence(t *testing.T) {
	peerOpen := `{"k":"conn","consumer":"cP","tenant":"A","conn":"c3","t":0,"phase":"open","pod":"p2","since":0}`
	peerEv := func(seq int, path string) string {
		return `{"k":"ev","consumer":"cP","tenant":"A","conn":"c3","t":6500000,"seq":` + itoa(seq) + `,"op":"write","path":"` + path + `","pod":"p2"}`
	}
	peerCons := `{"k":"consumer","consumer":"cP","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":2,"durable":true}`
	noAudit := []string{"persA1", "persA2", "persB3"}
	for _, tc := range []struct {
		name    string
		edit    edit
		verdict string
		want    map[string]float64
		wit     map[string]any // fields of the first seq_mismatch or skipped witness
		witOf   string
	}{
		{name: "no audit, both peers received everything", verdict: VerdictPass,
			edit: edit{drop: noAudit, after: map[string][]string{"openB": {peerOpen}, "evA1": {peerEv(1, "/x/A/m1")}, "evA2": {peerEv(2, "/x/A/m2")}, "consA": {peerCons}}},
			want: map[string]float64{"skipped": 0, "seq_mismatch": 0}},
		{name: "no audit, a peer received what cA passed", verdict: VerdictFail,
			edit: edit{drop: append([]string{"evA2"}, noAudit...), after: map[string][]string{"openB": {peerOpen}, "evA1": {peerEv(1, "/x/A/m1")},
				"mutA2": {peerEv(2, "/x/A/m2"), `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":3,"op":"write","path":"/x/A/m9","pod":"p1"}`},
				"consA": {peerCons}}},
			want: map[string]float64{"skipped": 1, "per_consumer.cA.skipped": 1, "per_consumer.cP.skipped": 0}, witOf: "skipped",
			wit: map[string]any{"consumer": "cA", "seq": 2.0, "path": "/x/A/m2"}},
		{name: "with an audit that lost the row, the peer's frame still counts", verdict: VerdictFail,
			edit: edit{drop: []string{"evA2", "persA2"}, after: map[string][]string{"openB": {peerOpen}, "evA1": {peerEv(1, "/x/A/m1")},
				"mutA2": {peerEv(2, "/x/A/m2"), `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":3,"op":"write","path":"/x/A/m9","pod":"p1"}`},
				"consA": {peerCons}}},
			want: map[string]float64{"skipped": 1}},
		{name: "two paths at one seq", verdict: VerdictFail,
			edit: edit{drop: noAudit, after: map[string][]string{"openB": {peerOpen}, "evA1": {peerEv(1, "/x/A/m1")}, "evA2": {peerEv(2, "/x/A/m3x")},
				"mutA2": {`{"k":"mut","mid":"m3x","tenant":"A","op":"write","path":"/x/A/m3x","intended_t":4000000,"t":4000000,"done_t":5000000,"res":"ok","pod":"p1"}`},
				"consA": {peerCons}}},
			// Each path is then expected of the consumer that did not get it, at seq 2, which both
			// cursors passed: skipped for both as well.
			want: map[string]float64{"seq_mismatch": 2, "per_consumer.cA.seq_mismatch": 1, "per_consumer.cP.seq_mismatch": 1}, witOf: "seq_mismatch",
			wit: map[string]any{"frame_seq": 2.0, "other_source": "a peer's frame"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, tc.edit.build(), Options{})
			doc := summaryDoc(s)
			for path, want := range tc.want {
				if got := measure(doc, path); got != want {
					t.Errorf("%s = %g, want %g", path, got, want)
				}
			}
			if s.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (failed %v, inconclusive %v)", s.Verdict, tc.verdict, s.FailedChecks, s.InconclusiveBecause)
			}
			if tc.witOf != "" {
				list := s.Witnesses[tc.witOf]
				if len(list) == 0 {
					t.Fatalf("no %s witness", tc.witOf)
				}
				b, _ := json.Marshal(list[0])
				var got map[string]any
				_ = json.Unmarshal(b, &got)
				for k, v := range tc.wit {
					if got[k] != v {
						t.Errorf("%s witness %s = %v, want %v (%s)", tc.witOf, k, got[k], v, b)
					}
				}
			}
		})
	}
}

// TestSpuriousOnAGivenCursor: a server_restart or seq_too_old on a connection resumed from a cursor
// the service gave, with every row still audited and no pod change between, is spurious; a crash
// between, a since the service never gave, or a swept row below it makes it not.
func TestSpuriousOnAGivenCursor(t *testing.T) {
	reopen := func(since int, reason string) []string {
		return []string{
			`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":6100000,"phase":"close","pod":"p1","since":0}`,
			`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1b","t":6200000,"phase":"open","pod":"p1","since":` + itoa(since) + `}`,
			`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1b","t":6300000,"seq":2,"reason":"` + reason + `"}`,
		}
	}
	for _, tc := range []struct {
		name  string
		extra []string
		after string
		want  float64
	}{
		{name: "server_restart on the cursor it gave", extra: reopen(2, "server_restart"), after: "evA2", want: 1},
		{name: "a resume from a cursor the service never gave", extra: reopen(1, "server_restart"), after: "evA2", want: 0},
		{name: "a pod crashed in between", extra: append([]string{`{"k":"pod","pod":"p1","phase":"crash","t":6150000}`}, reopen(2, "server_restart")...), after: "evA2", want: 0},
		{name: "a pull connection's final cursor above the head", after: "evA2", want: 1, extra: []string{
			`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":6100000,"phase":"close","pod":"p1","since":0,"final_cursor":9}`,
			`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1b","t":6200000,"phase":"open","pod":"p1","since":9}`,
			`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1b","t":6300000,"seq":9,"reason":"server_restart"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := edit{after: map[string][]string{tc.after: tc.extra}}
			s := verifyText(t, e.build(), Options{})
			if float64(s.SpuriousResets) != tc.want {
				t.Errorf("spurious_resets = %d, want %g (witnesses %v)", s.SpuriousResets, tc.want, s.Witnesses["spurious_resets"])
			}
			if tc.want > 0 {
				b, _ := json.Marshal(s.Witnesses["spurious_resets"][0])
				if !strings.Contains(string(b), "a cursor the service gave") {
					t.Errorf("witness %s does not give the rule", b)
				}
			}
		})
	}
	// A row swept below the cursor: the same server_restart is not spurious.
	e := edit{after: map[string][]string{"evA2": reopen(2, "server_restart")}, replace: map[string]string{
		"persA1": `{"k":"persisted","tenant":"A","seq":1,"op":"write","path":"/x/A/m1","absent":true}`}}
	if s := verifyText(t, e.build(), Options{}); s.SpuriousResets != 0 {
		t.Errorf("with a swept row below the cursor: spurious_resets = %d, want 0", s.SpuriousResets)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestPeersWithoutAuditIsDeterministic: with no audit rows, the peers check is the only source of
// seq_mismatch evidence, and the same ledger must give the same summary (witness order included)
// on every pass. The control is the ledger itself: it has seq_mismatch witnesses of several tenants
// and seqs, so an order taken from a map's iteration differs between passes.
func TestPeersWithoutAuditIsDeterministic(t *testing.T) {
	var kept []string
	for _, line := range strings.Split(synthText(t, synth.Config{Seed: 7, Tenants: 4, ConsumersPerTenant: 3, Events: 4000, SeqMismatch: 8, Duplicates: 2}), "\n") {
		if !strings.Contains(line, `"k":"persisted"`) {
			kept = append(kept, line)
		}
	}
	text := strings.Join(kept, "\n")
	var first string
	for pass := range 8 {
		s := verifyText(t, text, Options{Witnesses: 1000})
		if s.SeqMismatch < 4 {
			t.Fatalf("seq_mismatch %d: the ledger lacks the evidence this test needs", s.SeqMismatch)
		}
		var out bytes.Buffer
		if err := WriteJSON(&out, s); err != nil {
			t.Fatal(err)
		}
		if pass == 0 {
			first = out.String()
		} else if out.String() != first {
			t.Fatalf("pass %d's summary differs from the first pass's", pass)
		}
	}
}
