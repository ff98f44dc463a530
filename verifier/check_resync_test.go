package verifier

import (
	"encoding/json"
	"strings"
	"testing"
)

// resyncLedger is a run whose consumers resync: consumer cA of tenant A subscribes (initial_sync
// at 0, an empty listing), receives seq 1, is sent seq_too_old at seq 3 (passing seqs 2 and 3,
// which it never received), lists both, and receives seq 4. Times are ns (1 ms = 1000000).
var resyncLedger = []line{
	{"run", `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"tenants":[{"id":"A","mode":"dedicated","cold":false}],"pods":["p1"],"target":"eventlogd","resync":true}`},
	{"open", `{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":0,"phase":"open","pod":"p1","since":0}`},
	{"init", `{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":500000,"seq":0,"reason":"initial_sync"}`},
	{"resync0", `{"k":"resync","consumer":"cA","tenant":"A","conn":"c1","t":600000,"t_start":500000,"after_seq":0,"reason":"initial_sync","ok":true,"entries":0}`},
	{"mut1", `{"k":"mut","mid":"m1","tenant":"A","op":"write","path":"/x/A/m1","intended_t":1000000,"t":1000000,"done_t":2000000,"res":"ok","pod":"p1"}`},
	{"ev1", `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":3000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`},
	{"mut2", `{"k":"mut","mid":"m2","tenant":"A","op":"write","path":"/x/A/m2","intended_t":4000000,"t":4000000,"done_t":5000000,"res":"ok","pod":"p1"}`},
	{"mut3", `{"k":"mut","mid":"m3","tenant":"A","op":"write","path":"/x/A/m3","intended_t":4000000,"t":4000000,"done_t":6000000,"res":"ok","pod":"p1"}`},
	{"reset", `{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":3,"reason":"seq_too_old"}`},
	{"list2", `{"k":"listed","consumer":"cA","t":8000000,"path":"/x/A/m2","size":3,"rev":1}`},
	{"list3", `{"k":"listed","consumer":"cA","t":8000000,"path":"/x/A/m3","size":3,"rev":1}`},
	{"resync", `{"k":"resync","consumer":"cA","tenant":"A","conn":"c1","t":8000000,"t_start":7500000,"after_seq":3,"reason":"seq_too_old","ok":true,"entries":2}`},
	{"mut4", `{"k":"mut","mid":"m4","tenant":"A","op":"write","path":"/x/A/m4","intended_t":8500000,"t":8500000,"done_t":9000000,"res":"ok","pod":"p1"}`},
	{"ev4", `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":10000000,"seq":4,"op":"write","path":"/x/A/m4","pod":"p1"}`},
	{"close", `{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":11000000,"phase":"close","pod":"p1","since":0}`},
	{"pers1", `{"k":"persisted","tenant":"A","seq":1,"op":"write","path":"/x/A/m1"}`},
	{"pers2", `{"k":"persisted","tenant":"A","seq":2,"op":"write","path":"/x/A/m2"}`},
	{"pers3", `{"k":"persisted","tenant":"A","seq":3,"op":"write","path":"/x/A/m3"}`},
	{"pers4", `{"k":"persisted","tenant":"A","seq":4,"op":"write","path":"/x/A/m4"}`},
	{"cons", `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":11000000,"first_since":0,"final_cursor":4,"durable":true}`},
	{"end", `{"k":"end","t":12000000,"drained":true}`},
}

func buildFrom(base []line, e edit) string {
	saved := baseLedger
	defer func() { baseLedger = saved }()
	baseLedger = base
	return e.build()
}

// TestResyncChecks: known answers of the resync rules, each anomaly against the clean resync
// ledger, which passes.
func TestResyncChecks(t *testing.T) {
	noResync := strings.Replace(resyncLedger[0].json, `,"resync":true`, "", 1)
	for _, tc := range []struct {
		name    string
		edit    edit
		verdict string
		want    map[string]float64
		failed  []string
		wit     map[string]map[string]any
	}{
		{name: "clean: both events the reset passed are in the listing", verdict: VerdictPass,
			want: map[string]float64{"resync_proven": 2, "reset_covered": 2, "skipped": 0, "resyncs.resets": 2, "resyncs.resets_proven": 2,
				"resyncs.listings": 2, "resyncs.entries": 2, "resyncs.listing_ms": 0.6, "per_consumer.cA.resync_proven": 2}},
		{name: "the listing misses a row", edit: edit{drop: []string{"list3"}, replace: map[string]string{
			"resync": `{"k":"resync","consumer":"cA","tenant":"A","conn":"c1","t":8000000,"t_start":7500000,"after_seq":3,"reason":"seq_too_old","ok":true,"entries":1}`}},
			verdict: VerdictFail, failed: []string{CheckResyncMissed},
			want: map[string]float64{"resync_proven": 1, "resync_missed": 1, "reset_covered": 2, "resyncs.resets_missed": 1, "per_tenant.A.resync_missed": 1},
			wit: map[string]map[string]any{"resync_missed": {"consumer": "cA", "reset_reason": "seq_too_old", "reset_seq": 3.0, "reset_ms": 7.0,
				"cursor_before": 1.0, "listing_start_ms": 7.5, "listing_ms": 8.0, "listing_entries": 1.0, "seq": 3.0, "path": "/x/A/m3", "mid": "m3", "ack_ms": 6.0}}},
		{name: "the listing failed", edit: edit{drop: []string{"list2", "list3"}, replace: map[string]string{
			"resync": `{"k":"resync","consumer":"cA","tenant":"A","conn":"c1","t":8000000,"t_start":7500000,"after_seq":3,"reason":"seq_too_old","ok":false,"entries":0,"error":"list /x/A/: HTTP 503"}`}},
			verdict: VerdictInconclusive, want: map[string]float64{"resync_unproven": 2, "reset_covered": 2, "resyncs.failed": 1, "resyncs.resets_unproven": 1},
			wit: map[string]map[string]any{"resync_unproven": {"seq": 2.0, "why": "the listing failed: list /x/A/: HTTP 503"}}},
		{name: "no listing before the connection closed", edit: edit{drop: []string{"list2", "list3", "resync"}},
			verdict: VerdictInconclusive, want: map[string]float64{"resync_unproven": 2, "reset_covered": 2},
			wit: map[string]map[string]any{"resync_unproven": {"why": "no resync record on the reset's connection before it closed"}}},
		{name: "a listing on another connection proves nothing", edit: edit{replace: map[string]string{
			"resync": `{"k":"resync","consumer":"cA","tenant":"A","conn":"c9","t":8000000,"t_start":7500000,"after_seq":3,"reason":"seq_too_old","ok":true,"entries":2}`}},
			verdict: VerdictInconclusive, want: map[string]float64{"resync_unproven": 2}},
		{name: "a row deleted before the listing ended is proven", edit: edit{drop: []string{"list3"},
			after:   map[string][]string{"reset": {`{"k":"mut","mid":"d3","tenant":"A","op":"delete","path":"/x/A/m3","intended_t":7200000,"t":7200000,"done_t":7300000,"res":"err","pod":"p1"}`}},
			replace: map[string]string{"resync": `{"k":"resync","consumer":"cA","tenant":"A","conn":"c1","t":8000000,"t_start":7500000,"after_seq":3,"reason":"seq_too_old","ok":true,"entries":1}`}},
			verdict: VerdictPass, want: map[string]float64{"resync_proven": 2}},
		{name: "a folder above it renamed before the listing ended", edit: edit{drop: []string{"list3"},
			after: map[string][]string{"reset": {`{"k":"mut","mid":"r9","tenant":"A","op":"rename","src":"/x/A","path":"/x/B","intended_t":7200000,"t":7200000,"done_t":7300000,"res":"ok","pod":"p1"}`}}},
			verdict: VerdictPass, want: map[string]float64{"resync_proven": 2}},
		{name: "a delete sent after the listing ended proves nothing", edit: edit{drop: []string{"list3"},
			after: map[string][]string{"resync": {`{"k":"mut","mid":"d3","tenant":"A","op":"delete","path":"/x/A/m3","intended_t":8200000,"t":8200000,"done_t":8300000,"res":"ok","pod":"p1"}`}}},
			verdict: VerdictFail, failed: []string{CheckResyncMissed}, want: map[string]float64{"resync_missed": 1}},
		{name: "server_restart passes rows too", edit: edit{replace: map[string]string{
			"reset": `{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":3,"reason":"server_restart"}`}},
			verdict: VerdictPass, want: map[string]float64{"resync_proven": 2, "reset_covered": 2, "skipped": 0}},
		{name: "server_restart missing a row fails", edit: edit{drop: []string{"list2"}, replace: map[string]string{
			"reset": `{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":3,"reason":"server_restart"}`}},
			verdict: VerdictFail, failed: []string{CheckResyncMissed}, want: map[string]float64{"resync_missed": 1, "resync_proven": 1}},
		{name: "a reset that passes nothing needs no listing", edit: edit{drop: []string{"list2", "list3", "resync"},
			after: map[string][]string{"ev1": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6500000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p1"}`,
				`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6600000,"seq":3,"op":"write","path":"/x/A/m3","pod":"p1"}`}}},
			verdict: VerdictPass, want: map[string]float64{"reset_covered": 0, "resyncs.resets_proven": 2, "resync_unproven": 0}},
		{name: "a structural reset obliges no listing", edit: edit{drop: []string{"list2", "list3", "resync"}, replace: map[string]string{
			"reset": `{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":3,"reason":"structural_change","path":"/x/A/m9","op":"delete"}`}},
			verdict: VerdictFail, failed: []string{CheckSkipped}, want: map[string]float64{"skipped": 2, "reset_covered": 0, "resyncs.resets": 1}},
		{name: "the cursor before a reset is the highest seq received on any connection", edit: edit{
			replace: map[string]string{"reset": `{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":6900000,"phase":"close","pod":"p1","since":0}`},
			after: map[string][]string{"mut3": {`{"k":"conn","consumer":"cA","tenant":"A","conn":"c2","t":6950000,"phase":"open","pod":"p1","since":0}`,
				`{"k":"reset","consumer":"cA","tenant":"A","conn":"c2","t":7000000,"seq":3,"reason":"seq_too_old"}`},
				"resync": {`{"k":"conn","consumer":"cA","tenant":"A","conn":"c2","t":8100000,"phase":"close","pod":"p1","since":0}`}},
			drop: []string{"list2", "list3", "resync"}},
			// since 0 on c2, but cA had received seq 1 on c1: only seqs 2 and 3 are unproven (not 1).
			verdict: VerdictInconclusive, want: map[string]float64{"resync_unproven": 2, "reset_covered": 2},
			wit: map[string]map[string]any{"resync_unproven": {"cursor_before": 1.0, "conn": "c2"}}},
		// Old ledgers keep their verdicts: without run.resync a seq_too_old covers what it passed
		// whatever the listing says, and a server_restart covers nothing.
		{name: "without run.resync, seq_too_old covers as before", edit: edit{drop: []string{"list2", "list3"}, replace: map[string]string{"run": noResync}},
			verdict: VerdictPass, want: map[string]float64{"reset_covered": 2, "resync_proven": 0, "resync_missed": 0, "resync_unproven": 0, "resyncs.resets": 0}},
		{name: "without run.resync, a server_restart's rows are skipped", edit: edit{replace: map[string]string{"run": noResync,
			"reset": `{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":3,"reason":"server_restart"}`}},
			verdict: VerdictFail, failed: []string{CheckSkipped}, want: map[string]float64{"skipped": 2, "reset_covered": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := buildFrom(resyncLedger, tc.edit)
			s := verifyText(t, text, Options{})
			doc := summaryDoc(s)
			for path, want := range tc.want {
				if got := measure(doc, path); got != want {
					t.Errorf("%s = %g, want %g", path, got, want)
				}
			}
			if s.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (failed %v, inconclusive %v)", s.Verdict, tc.verdict, s.FailedChecks, s.InconclusiveBecause)
			}
			if tc.failed != nil && strings.Join(s.FailedChecks, ",") != strings.Join(tc.failed, ",") {
				t.Errorf("failed %v, want %v", s.FailedChecks, tc.failed)
			}
			if tc.failed == nil && len(s.FailedChecks) > 0 {
				t.Errorf("failed %v, want none", s.FailedChecks)
			}
			if got, want := s.ResyncProven+s.ResyncMissed+s.ResyncUnproven, s.ResetCovered; s.Resyncs.Resets > 0 && got != want {
				t.Errorf("proven+missed+unproven = %d, reset_covered %d: they must agree", got, want)
			}
			for check, fields := range tc.wit {
				list := s.Witnesses[check]
				if len(list) == 0 {
					t.Fatalf("no %s witness (witnesses %v)", check, s.Witnesses)
				}
				b, _ := json.Marshal(list[0])
				var got map[string]any
				_ = json.Unmarshal(b, &got)
				for k, v := range fields {
					if got[k] != v {
						t.Errorf("%s witness %s = %v, want %v (%s)", check, k, got[k], v, b)
					}
				}
			}
		})
	}
}

// TestColdRiseDuringAListing: a cold tenant's DB traffic in a sampling interval that overlaps a
// listing of that tenant is the listing's, not a wakeup; without the listing, or in an interval
// too long to tell, it is a wakeup.
func TestColdRiseDuringAListing(t *testing.T) {
	run := `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":true}],"pods":["p1","p2"],"target":"eventlogd","resync":true}`
	proxy := func(t int64, conns int) string {
		return `{"k":"proxy","name":"tenant_B","tenant":"B","t":` + itoa(int(t)) + `,"conns":` + itoa(conns) + `,"bytes_up":0,"bytes_down":0}`
	}
	listing := func(from, to int64) string {
		return `{"k":"resync","consumer":"cB","tenant":"B","conn":"c2","t":` + itoa(int(to)) + `,"t_start":` + itoa(int(from)) + `,"after_seq":0,"reason":"initial_sync","ok":true,"entries":0}`
	}
	const sec = 1_000_000_000
	for _, tc := range []struct {
		name  string
		lines []string
		want  int64
	}{
		{"a rise while cB listed", []string{proxy(0, 1), listing(sec+sec/5, sec+2*sec/5), proxy(sec, 1), proxy(2*sec, 2), proxy(3*sec, 2)}, 0},
		{"a rise just after a listing", []string{proxy(0, 1), listing(sec/5, sec/2), proxy(sec, 1), proxy(2*sec, 2), proxy(3*sec, 2)}, 0},
		{"the same rise with no listing", []string{proxy(0, 1), proxy(sec, 1), proxy(2*sec, 2), proxy(3*sec, 2)}, 1},
		{"a rise long after the listing", []string{proxy(0, 1), listing(sec/5, sec/2), proxy(sec, 1), proxy(2*sec, 1), proxy(3*sec, 2)}, 1},
		{"an interval too long to tell", []string{proxy(0, 1), listing(sec+sec/5, sec+2*sec/5), proxy(sec, 1), proxy(6*sec, 2)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := edit{replace: map[string]string{"run": run}, after: map[string][]string{"openB": tc.lines}}
			s := verifyText(t, e.build(), Options{})
			if s.ColdWakeups != tc.want {
				t.Errorf("cold_wakeups = %d, want %d", s.ColdWakeups, tc.want)
			}
		})
	}
}
