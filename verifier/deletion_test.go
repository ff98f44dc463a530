package verifier

import (
	"strings"
	"testing"
)

// Lines of a run in which tenant A is deleted at 5.5 ms (a tenant_delete fault, as seqgate run writes
// it: target the slot name, tenant the service's id). m4 of A was acked before and dropped from a
// retry buffer as tenant_gone (pod p1's counter rises by 1); m5 of A persisted (a hot insert the auth
// cache still let through) but A's consumer, whose stream ended, never got it.
const (
	delRun      = `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.5,"tenants":[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":false}],"pods":["p1","p2"],"target":"eventlogd"}`
	delStart    = `{"k":"fault","id":"f1","kind":"tenant_delete","target":"tenant_1","tenant":"A","phase":"start","t":5500000}`
	delStop     = `{"k":"fault","id":"f1","kind":"tenant_delete","target":"tenant_1","tenant":"A","phase":"stop","t":5600000}`
	delStopErr  = `{"k":"fault","id":"f1","kind":"tenant_delete","target":"tenant_1","tenant":"A","phase":"stop","t":5600000,"err":"delete tenant tenant_1 (A): no pod could: HTTP 503"}`
	delMutA4    = `{"k":"mut","mid":"m4","tenant":"A","op":"write","path":"/x/A/m4","intended_t":5000000,"t":5000000,"done_t":5200000,"res":"ok","pod":"p1"}`
	delMutA5    = `{"k":"mut","mid":"m5","tenant":"A","op":"write","path":"/x/A/m5","intended_t":5300000,"t":5300000,"done_t":5400000,"res":"ok","pod":"p1"}`
	delCnt0     = `{"k":"metric","pod":"p1","t":1000000,"name":"drive9_sse_event_retry_dropped_total","labels":{"tenant_id":"A","reason":"tenant_gone"},"value":0}`
	delCnt1     = `{"k":"metric","pod":"p1","t":8000000,"name":"drive9_sse_event_retry_dropped_total","labels":{"tenant_id":"A","reason":"tenant_gone"},"value":1}`
	delPersA5   = `{"k":"persisted","tenant":"A","seq":3,"op":"write","path":"/x/A/m5"}`
	delMutB4    = `{"k":"mut","mid":"m6","tenant":"B","op":"write","path":"/x/B/m6","intended_t":6000000,"t":6000000,"done_t":6100000,"res":"ok","pod":"p2"}`
	delEvA5Skip = `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":5450000,"seq":3,"op":"write","path":"/x/A/m5","pod":"p1"}`
	delConsA3   = `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":3,"durable":true}`
)

// TestTenantDeletion: what a deleted tenant's consumer could no longer receive is tenant_gone (not
// undelivered), its dropped events are losses the tenant_gone counter explains (never excused, never
// silent), and nothing else changes: a skip before the deletion, a silent loss in a surviving tenant
// and a deletion that failed are judged as before. Each excuse has its control without it.
func TestTenantDeletion(t *testing.T) {
	base := edit{
		replace: map[string]string{"run": delRun},
		after: map[string][]string{
			"openB":  {delCnt0},
			"evA2":   {delMutA4, delMutA5, delStart, delStop, delMutB4, delCnt1},
			"persB3": {delPersA5},
		},
	}
	tests := []struct {
		name    string
		edit    func(e *edit)
		verdict string
		failed  []string
		gone    int64
		undeliv int64
		skipped int64
		silent  int64
		byGone  int64
	}{
		{name: "deleted tenant: gone and counted", verdict: VerdictFail, failed: []string{"silent"}, gone: 1, silent: 1, byGone: 1}, // m6 of the surviving tenant B is acked and never persisted: a real loss, still caught

		{name: "surviving tenant complete", edit: func(e *edit) { e.after["evA2"] = []string{delMutA4, delMutA5, delStart, delStop, delCnt1} },
			verdict: VerdictPass, gone: 1, byGone: 1},
		{name: "control: no deletion record, the same stream stalled", edit: func(e *edit) {
			e.after["evA2"] = []string{delMutA4, delMutA5, delCnt1}
		}, verdict: VerdictFail, failed: []string{"undelivered"}, undeliv: 1, byGone: 1},
		{name: "control: no counter, the dropped event is silent", edit: func(e *edit) {
			e.after["evA2"] = []string{delMutA4, delMutA5, delStart, delStop}
			e.after["openB"] = nil
		}, verdict: VerdictFail, failed: []string{"silent"}, gone: 1, silent: 1},
		{name: "control: a deletion that failed is not taken", edit: func(e *edit) {
			e.after["evA2"] = []string{delMutA4, delMutA5, delStart, delStopErr, delCnt1}
		}, verdict: VerdictFail, failed: []string{"undelivered"}, undeliv: 1, byGone: 1},
		{name: "a skip before the deletion is still a skip", edit: func(e *edit) {
			e.drop = []string{"evA2"}
			e.replace["consA"] = delConsA3
			e.after["evA2"] = nil
			e.after["mutA2"] = []string{delMutA4, delMutA5, delEvA5Skip, delStart, delStop, delCnt1}
		}, verdict: VerdictFail, failed: []string{"skipped"}, skipped: 1, byGone: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := edit{replace: map[string]string{}, after: map[string][]string{}}
			for k, v := range base.replace {
				e.replace[k] = v
			}
			for k, v := range base.after {
				e.after[k] = v
			}
			if tc.edit != nil {
				tc.edit(&e)
			}
			s := verifyText(t, e.build(), Options{})
			if s.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (failed %v)", s.Verdict, tc.verdict, s.FailedChecks)
			}
			for _, f := range tc.failed {
				found := false
				for _, g := range s.FailedChecks {
					found = found || strings.HasPrefix(g, f)
				}
				if !found {
					t.Errorf("failed checks %v, want one for %s", s.FailedChecks, f)
				}
			}
			if s.TenantGone != tc.gone || s.Undelivered != tc.undeliv || s.Skipped != tc.skipped {
				t.Errorf("tenant_gone %d undelivered %d skipped %d, want %d %d %d", s.TenantGone, s.Undelivered, s.Skipped, tc.gone, tc.undeliv, tc.skipped)
			}
			if got := s.LostByReason[ReasonSilent]; got != tc.silent {
				t.Errorf("silent %d, want %d (lost %v)", got, tc.silent, s.LostByReason)
			}
			if got := s.LostByReason["tenant_gone"]; got != tc.byGone {
				t.Errorf("lost_by_reason.tenant_gone %d, want %d", got, tc.byGone)
			}
			if tc.gone > 0 && s.UnrecoveredFaults != 0 {
				t.Errorf("unrecovered faults %d: a deleted tenant's consumer cannot recover and must not count", s.UnrecoveredFaults)
			}
			if tc.silent > 0 && tc.name == "deleted tenant: gone and counted" {
				if pt := s.PerTenant["B"]; pt == nil || pt.LostByReason[ReasonSilent] != 1 {
					t.Errorf("the silent loss is not the surviving tenant B's: %+v", s.PerTenant["B"])
				}
			}
		})
	}
}
