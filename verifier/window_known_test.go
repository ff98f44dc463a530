package verifier

import (
	"math"
	"strings"
	"testing"
)

// TestWindowAndRecoveryKnownAnswers works the window and recovery arithmetic out by hand on a small
// ledger (times in ms since the ledger's origin; faults count from it, not from the load's start).
// A 200 ms stall of tenant A (100-300 ms):
//
//	m1 sent at 80, acked at 90 (10 ms before the stall), delivered at 310: its arrival is steady
//	   (placed by its intended time), but its delivery waited out the stall, so its 220 ms latency
//	   is the fault window's, never the steady window's max;
//	m2 sent at 150 (inside the stall), acked at 320, delivered at 330: fault window, latency 10 ms;
//	m3 sent at 400, acked at 405, delivered at 410: steady (after the recovery ended), latency 5 ms.
//
// Recovery: the consumer owes, at the stop, every row persisted by then and every acked write the
// stall held back (sent before the stop, answered after its start): m2's row, seq 2, delivered at
// 330, so recovery is 30 ms. When m1's event is delivered before the stall (at 95) the recovery is
// still 30 ms: a stall that held m2 back has not recovered until m2 arrives, though nothing that
// had committed before the stop was missing (the old reading said 0 ms).
func TestWindowAndRecoveryKnownAnswers(t *testing.T) {
	base := []string{
		`{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1700000000000000000,"tenants":[{"id":"A","mode":"dedicated","cold":false}],"pods":["p1"],"target":"eventlogd","thresholds":{"latency_ms.max@steady":["< 1e9"]}}`,
		`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":1000000,"phase":"open","pod":"p1","since":0}`,
		`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":2000000,"seq":0,"reason":"initial_sync"}`,
		`{"k":"mut","mid":"m1","tenant":"A","op":"write","path":"/r/A/m1","intended_t":80000000,"t":80000000,"done_t":90000000,"res":"ok","pod":"p1"}`,
		`EV1`,
		`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"A","phase":"start","t":100000000}`,
		`{"k":"mut","mid":"m2","tenant":"A","op":"write","path":"/r/A/m2","intended_t":150000000,"t":150000000,"done_t":320000000,"res":"ok","pod":"p1"}`,
		`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"A","phase":"stop","t":300000000}`,
		`EV1LATE`,
		`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":330000000,"seq":2,"op":"write","path":"/r/A/m2","pod":"p1"}`,
		`{"k":"mut","mid":"m3","tenant":"A","op":"write","path":"/r/A/m3","intended_t":400000000,"t":400000000,"done_t":405000000,"res":"ok","pod":"p1"}`,
		`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":410000000,"seq":3,"op":"write","path":"/r/A/m3","pod":"p1"}`,
		`{"k":"persisted","tenant":"A","seq":1,"op":"write","path":"/r/A/m1","created_unix_ns":1700000000085000000}`,
		`{"k":"persisted","tenant":"A","seq":2,"op":"write","path":"/r/A/m2","created_unix_ns":1700000000315000000}`,
		`{"k":"persisted","tenant":"A","seq":3,"op":"write","path":"/r/A/m3","created_unix_ns":1700000000402000000}`,
		`{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":900000000,"first_since":0,"final_cursor":3,"durable":true}`,
		`{"k":"end","t":1000000000,"drained":true}`,
	}
	ev1 := `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":T,"seq":1,"op":"write","path":"/r/A/m1","pod":"p1"}`
	for _, c := range []struct {
		name                   string
		ev1At                  string // when m1's event is delivered
		recoveryMs             float64
		steadyN, faultN, recN  int64
		steadyMaxMs, faultMaxs float64
	}{
		{name: "delivery waits out the stall", ev1At: "310000000", recoveryMs: 30, steadyN: 2, faultN: 1, steadyMaxMs: 5, faultMaxs: 220},
		{name: "delivered before the stall", ev1At: "95000000", recoveryMs: 30, steadyN: 2, faultN: 1, steadyMaxMs: 5, faultMaxs: 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			var lines []string
			for _, l := range base {
				switch {
				case l == "EV1" && c.ev1At == "95000000", l == "EV1LATE" && c.ev1At != "95000000":
					lines = append(lines, strings.Replace(ev1, "T", c.ev1At, 1))
				case l == "EV1", l == "EV1LATE":
				default:
					lines = append(lines, l)
				}
			}
			s := verifyText(t, strings.Join(lines, "\n")+"\n", Options{})
			if s.Verdict != VerdictPass || len(s.Faults) != 1 {
				t.Fatalf("verdict %s failed %v faults %+v", s.Verdict, s.FailedChecks, s.Faults)
			}
			f := s.Faults[0]
			if f.StartMs != 100 || f.StopMs == nil || *f.StopMs != 300 {
				t.Errorf("fault span %v-%v ms, want 100-300 (ms since the ledger's origin)", f.StartMs, f.StopMs)
			}
			if f.RecoveryMs == nil || *f.RecoveryMs != c.recoveryMs || s.RecoveryMaxMs != c.recoveryMs || !f.Recovered {
				t.Errorf("recovery %v ms (max %v, recovered %v), want %v", deref(f.RecoveryMs), s.RecoveryMaxMs, f.Recovered, c.recoveryMs)
			}
			near := func(got, want float64) bool { return math.Abs(got-want) <= 0.005*want+0.01 }
			w := s.Windows
			if w["steady"] == nil || w["fault"] == nil || w["recovery"] == nil {
				t.Fatalf("windows %v", w)
			}
			if w["steady"].Mutations != c.steadyN || w["fault"].Mutations != c.faultN || w["recovery"].Mutations != c.recN {
				t.Errorf("mutations steady/fault/recovery %d/%d/%d, want %d/%d/%d", w["steady"].Mutations, w["fault"].Mutations, w["recovery"].Mutations, c.steadyN, c.faultN, c.recN)
			}
			if !near(w["steady"].LatencyMs.Max, c.steadyMaxMs) || !near(w["fault"].LatencyMs.Max, c.faultMaxs) {
				t.Errorf("latency max steady %v fault %v ms, want %v and %v", w["steady"].LatencyMs.Max, w["fault"].LatencyMs.Max, c.steadyMaxMs, c.faultMaxs)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
