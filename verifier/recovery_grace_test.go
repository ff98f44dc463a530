package verifier

import (
	"strconv"
	"strings"
	"testing"
)

// TestRecoveryAcrossTheStopBoundary: the audit's created_unix_ns is the service's clock before the commit
// (whole seconds on some servers), so two rows committed just
// after a fault's stop can count as persisted before it, and the head at the stop is then the later
// of them. The first frame of a post-stop mutation (seq 1) is below that head; the consumer reaches
// it one frame later. Recovery must follow the cursor past that first frame (a gate run with seed
// 777 reported three faults "not recovered by the end" with nothing undelivered). Control: without
// the second frame the consumer never reaches the head and the fault stays unrecovered.
func TestRecoveryAcrossTheStopBoundary(t *testing.T) {
	const start = 1700000000000000000
	lines := []string{
		`{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1700000000000000000,"tenants":[{"id":"A","mode":"dedicated","cold":false}],"pods":["p1"],"target":"eventlogd","thresholds":{"unrecovered_faults":["== 0"]}}`,
		`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":1000,"phase":"open","pod":"p1","since":0}`,
		`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":2000,"seq":0,"reason":"initial_sync"}`,
		`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"A","phase":"start","t":1000000}`,
		`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"A","phase":"stop","t":2000000000}`,
		`{"k":"mut","mid":"m1","tenant":"A","op":"write","path":"/r/A/m1","intended_t":2001000000,"t":2001000000,"done_t":2002000000,"res":"ok","pod":"p1"}`,
		`{"k":"mut","mid":"m2","tenant":"A","op":"write","path":"/r/A/m2","intended_t":2003000000,"t":2003000000,"done_t":2004000000,"res":"ok","pod":"p1"}`,
		`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":2010000000,"seq":1,"op":"write","path":"/r/A/m1","pod":"p1"}`,
		`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":2020000000,"seq":2,"op":"write","path":"/r/A/m2","pod":"p1"}`,
		`{"k":"persisted","tenant":"A","seq":1,"op":"write","path":"/r/A/m1","created_unix_ns":` + strconv.FormatInt(start+1_000_000_000, 10) + `}`,
		`{"k":"persisted","tenant":"A","seq":2,"op":"write","path":"/r/A/m2","created_unix_ns":` + strconv.FormatInt(start+1_000_000_000, 10) + `}`,
		`{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":3000000000,"first_since":0,"final_cursor":2,"durable":true}`,
		`{"k":"end","t":3000000000,"drained":true}`,
	}
	s := verifyText(t, strings.Join(lines, "\n")+"\n", Options{})
	if s.UnrecoveredFaults != 0 || s.Verdict != VerdictPass || s.RecoveryMaxMs != 20 {
		t.Errorf("verdict %s failed %v, unrecovered %d, recovery max %v ms; want pass, 0, 20", s.Verdict, s.FailedChecks, s.UnrecoveredFaults, s.RecoveryMaxMs)
	}
	// Control: the second frame never comes (the consumer's cursor stops at 1, below the head 2).
	var ctl []string
	for _, l := range lines {
		if strings.Contains(l, `"k":"ev"`) && strings.Contains(l, "m2") {
			continue
		}
		ctl = append(ctl, strings.Replace(l, `"final_cursor":2`, `"final_cursor":1`, 1))
	}
	s = verifyText(t, strings.Join(ctl, "\n")+"\n", Options{})
	if s.UnrecoveredFaults != 1 || s.Verdict != VerdictFail {
		t.Errorf("control: verdict %s, unrecovered %d; want fail with the fault unrecovered", s.Verdict, s.UnrecoveredFaults)
	}
}
