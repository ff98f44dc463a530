package verifier

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// writeManyPodsLedger writes a run of n+2 pods: p1 acks a delivered write, n filler pods each answer
// one failed write (so that they only take pod indices), and pX acks a write that never persisted.
// crashed names the pod that crashes after that ack. With 65,535 fillers pX is pod index 65,537:
// a 16-bit index wraps it onto p1. The budget (0.5) holds one crash loss in two acked writes.
func writeManyPodsLedger(w io.Writer, fillers int, crashed string) error {
	pods := []string{`"p1"`, `"pX"`}
	for i := range fillers {
		pods = append(pods, fmt.Sprintf(`"f%d"`, i))
	}
	lines := []string{
		`{"k":"run","v":1,"run_id":"pods","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.5,"tenants":[{"id":"A","mode":"shared","cold":false}],"pods":[` + strings.Join(pods, ",") + `],"target":"eventlogd"}`,
		`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":0,"phase":"open","pod":"p1","since":0}`,
		`{"k":"mut","mid":"m1","tenant":"A","op":"write","path":"/x/A/m1","intended_t":1000000,"t":1000000,"done_t":2000000,"res":"ok","pod":"p1"}`,
		`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":3000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`,
	}
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return err
		}
	}
	for i := range fillers {
		if _, err := fmt.Fprintf(w, `{"k":"mut","mid":"f%d","tenant":"A","op":"write","path":"/x/A/f%d","intended_t":3000000,"t":3000000,"done_t":3500000,"res":"err","status":500,"pod":"f%d"}`+"\n", i, i, i); err != nil {
			return err
		}
	}
	lines = []string{
		`{"k":"mut","mid":"m2","tenant":"A","op":"write","path":"/x/A/m2","intended_t":4000000,"t":4000000,"done_t":5000000,"res":"ok","pod":"pX"}`,
		`{"k":"pod","pod":"` + crashed + `","phase":"crash","t":6000000}`,
		`{"k":"persisted","tenant":"A","seq":1,"op":"write","path":"/x/A/m1"}`,
		`{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`,
		`{"k":"end","t":10000000,"drained":true}`,
	}
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// TestMoreThan65536Pods: pod indices do not wrap. The write pX acked and lost is charged to pX, so
// p1's crash does not explain it: a silent loss, FAIL (with 16-bit indices pX was p1, the loss was a
// crash within the budget, and the run passed). The control crashes pX itself: the same loss is then
// explained by its own pod's crash.
func TestMoreThan65536Pods(t *testing.T) {
	cases := []struct {
		name    string
		crashed string
		verdict string
		reason  string
	}{
		{"another pod crashed", "p1", VerdictFail, ReasonSilent},
		{"the acking pod crashed", "pX", VerdictPass, ReasonCrash},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeManyPodsLedger(&b, 65_535, tc.crashed); err != nil {
				t.Fatal(err)
			}
			s := verifyText(t, b.String(), Options{})
			if s.Verdict != tc.verdict || s.Lost != 1 || s.LostByReason[tc.reason] != 1 {
				t.Errorf("verdict %s lost %d by reason %v; want %s and one %s loss", s.Verdict, s.Lost, s.LostByReason, tc.verdict, tc.reason)
			}
		})
	}
}

// TestPodIndexRoundTrip: every pod index an entry stores comes back unchanged, in its arena
// record's byte or in the side table, around the 8-bit boundary, also when a mid of its own
// moves the record.
func TestPodIndexRoundTrip(t *testing.T) {
	tab := newMutTable(&[]string{"t"})
	for i, pod := range []int32{0, 1, podEsc - 1, podEsc, podEsc + 1, 1 << 16, 1 << 20, maxNames - 1} {
		path := fmt.Sprintf("/d/m%d", i)
		_, h := tab.find("t", path)
		m := tab.at(tab.add("t", 0, path, h, blankEntry))
		tab.setPod(m, pod)
		if got := tab.pod(m); got != pod {
			t.Errorf("setPod(%d): pod() = %d", pod, got)
		}
		tab.setMid(m, "another mid")
		if got := tab.pod(m); got != pod || tab.mid(m) != "another mid" || tab.path(m) != path {
			t.Errorf("setPod(%d), then a mid of its own: pod() = %d, mid %q, path %q", pod, got, tab.mid(m), tab.path(m))
		}
	}
}
