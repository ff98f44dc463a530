package verifier

import (
	"errors"
	"io"
	"testing"
)

// runAlone runs one checker, and nothing else, over a ledger: the index it reads plus that checker.
func runAlone(t *testing.T, text string, mk func(ix *index, w *witnessSet) checker) *Summary {
	t.Helper()
	r, err := newTestReader(text)
	if err != nil {
		t.Fatal(err)
	}
	ix, w := newIndex(), newWitnessSet(0)
	c := mk(ix, w)
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.observe(rec); err != nil {
			t.Fatal(err)
		}
		c.Observe(rec)
	}
	s := newSummary()
	c.Finish(s)
	s.Witnesses = w.lists()
	return s
}

// TestCheckersAlone: each checker, composed with nothing but the index, finds its anomaly and reports
// nothing on the clean ledger (its negative control).
func TestCheckersAlone(t *testing.T) {
	cases := []struct {
		name  string
		mk    func(ix *index, w *witnessSet) checker
		bad   edit
		count func(s *Summary) int64
	}{
		{"loss", func(ix *index, w *witnessSet) checker { return newLossCheck(ix, w) },
			edit{drop: []string{"evA2", "persA2"}}, func(s *Summary) int64 { return s.Lost }},
		{"skipped", func(ix *index, w *witnessSet) checker { return newSkippedCheck(ix, w) },
			edit{drop: []string{"evA1"}}, func(s *Summary) int64 { return s.Skipped }},
		{"undelivered", func(ix *index, w *witnessSet) checker { return newUndeliveredCheck(ix, w) },
			edit{drop: []string{"evA2"}, replace: map[string]string{"consA": `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`}},
			func(s *Summary) int64 { return s.Undelivered }},
		{"duplicates", func(ix *index, w *witnessSet) checker { return newDuplicatesCheck(ix, w) },
			edit{after: map[string][]string{"evA2": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p1"}`}}},
			func(s *Summary) int64 { return s.Duplicates }},
		{"leaks", func(ix *index, w *witnessSet) checker { return newLeaksCheck(ix, w) },
			edit{after: map[string][]string{"evA2": {`{"k":"ev","consumer":"cB","tenant":"B","conn":"c2","t":7000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}},
			func(s *Summary) int64 { return s.Leaks }},
		{"unexpected", func(ix *index, w *witnessSet) checker { return newUnexpectedCheck(ix, w) },
			edit{after: map[string][]string{"evA2": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":3,"op":"write","path":"/x/A/zz","pod":"p1"}`}}},
			func(s *Summary) int64 { return s.Unexpected }},
		{"reorder", func(ix *index, w *witnessSet) checker { return newReorderCheck(ix, w) },
			edit{drop: []string{"evA1"}, after: map[string][]string{"evA2": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}},
			func(s *Summary) int64 { return s.Reorder.Overtaken }},
		{"spurious", func(ix *index, w *witnessSet) checker { return newSpuriousCheck(ix, w) },
			edit{after: map[string][]string{"mutB3": {`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":2500000,"seq":2,"reason":"seq_too_old"}`}}},
			func(s *Summary) int64 { return s.SpuriousResets }},
		{"reconnects", func(ix *index, w *witnessSet) checker { return newReconnectCheck(ix, w) },
			edit{after: map[string][]string{"evA2": {`{"k":"conn","consumer":"cA","tenant":"A","conn":"c7","t":6100000,"phase":"open","pod":"p1","since":2}`}}},
			func(s *Summary) int64 { return s.Reconnects.Total }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if n := c.count(runAlone(t, edit{}.build(), c.mk)); n != 0 {
				t.Errorf("clean ledger: %d, want 0", n)
			}
			s := runAlone(t, c.bad.build(), c.mk)
			if n := c.count(s); n != 1 {
				t.Errorf("injected one: found %d", n)
			}
			if len(s.Witnesses) == 0 {
				t.Error("no witness")
			}
		})
	}
}
