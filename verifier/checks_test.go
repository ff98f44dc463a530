package verifier

import (
	"encoding/json"
	"slices"
	"testing"
)

// anomalyPaths are the counters every case asserts: zero unless the case says otherwise, so each case
// is also a negative control for every checker it does not target. They are the numbers of the
// checks whose descriptor counts anomalies, and the crash losses among the lost.
var anomalyPaths = func() []string {
	out := []string{"lost_by_reason.crash"}
	for _, d := range checks {
		if d.Anomaly {
			out = append(out, d.Path)
		}
	}
	return out
}()

func TestCheckers(t *testing.T) {
	cases := []struct {
		name    string
		edit    edit
		want    map[string]float64
		failed  []string
		verdict string
		wit     map[string]map[string]any // check -> fields of its first witness
		quiet   bool                      // no warnings expected
	}{
		{name: "clean", verdict: VerdictPass,
			want: map[string]float64{"acked": 3, "latency_ms.max": 2, "latency_ms.p50": 1, "deliveries": 3,
				"reconnects.total": 0, "reconnects.max_per_s": 2, "projection.fraction": 0}},
		{name: "lost silent", edit: edit{drop: []string{"evA2", "persA2"}}, verdict: VerdictFail,
			want:   map[string]float64{"lost": 1, "lost_by_reason.silent": 1, "event_loss_fraction": 1.0 / 3},
			failed: []string{CheckLossBudget, CheckSilent},
			wit: map[string]map[string]any{
				"lost":   {"mid": "m2", "path": "/x/A/m2", "pod": "p1", "reason": "silent", "sent_ms": 4.0, "ack_ms": 5.0},
				"silent": {"mid": "m2"}}},
		{name: "lost explained by counter", verdict: VerdictFail,
			edit: edit{drop: []string{"evA2", "persA2"}, after: map[string][]string{
				"openB": {`{"k":"metric","pod":"p1","t":0,"name":"drive9_sse_event_retry_dropped_total","labels":{"tenant_id":"A","reason":"buffer_full"},"value":0}`},
				"mutA2": {`{"k":"metric","pod":"p1","t":5500000,"name":"drive9_sse_event_retry_dropped_total","labels":{"tenant_id":"A","reason":"buffer_full"},"value":1}`}}},
			want:   map[string]float64{"lost": 1, "lost_by_reason.buffer_full": 1},
			failed: []string{CheckLossBudget},
			wit:    map[string]map[string]any{"lost": {"mid": "m2", "reason": "buffer_full"}}},
		// Tenants named by the scenario (every ledger the harness writes): drop counters are labelled
		// with the service's id, and still explain the loss of the tenant the summary calls tenant_1.
		{name: "lost explained by counter, tenants named", verdict: VerdictFail,
			edit: edit{drop: []string{"evA2", "persA2"}, replace: map[string]string{
				"run": `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false,"name":"tenant_1"},{"id":"B","mode":"shared","cold":false,"name":"tenant_2"}],"pods":["p1","p2"],"target":"eventlogd"}`},
				after: map[string][]string{
					"openB": {`{"k":"metric","pod":"p1","t":0,"name":"drive9_sse_event_retry_dropped_total","labels":{"tenant_id":"A","reason":"buffer_full"},"value":0}`},
					"mutA2": {`{"k":"metric","pod":"p1","t":5500000,"name":"drive9_sse_event_retry_dropped_total","labels":{"tenant_id":"A","reason":"buffer_full"},"value":1}`}}},
			want:   map[string]float64{"lost": 1, "lost_by_reason.buffer_full": 1, "per_tenant.tenant_1.lost_by_reason.buffer_full": 1},
			failed: []string{CheckLossBudget},
			wit:    map[string]map[string]any{"lost": {"mid": "m2", "reason": "buffer_full", "tenant": "tenant_1"}}},
		{name: "counter of another pod explains nothing", verdict: VerdictFail,
			edit: edit{drop: []string{"evA2", "persA2"}, after: map[string][]string{
				"openB": {`{"k":"metric","pod":"p2","t":0,"name":"drive9_sse_event_retry_dropped_total","labels":{"tenant_id":"A","reason":"buffer_full"},"value":0}`},
				"mutA2": {`{"k":"metric","pod":"p2","t":5500000,"name":"drive9_sse_event_retry_dropped_total","labels":{"tenant_id":"A","reason":"buffer_full"},"value":1}`}}},
			want:   map[string]float64{"lost": 1, "lost_by_reason.silent": 1},
			failed: []string{CheckLossBudget, CheckSilent}},
		{name: "lost explained by crash", verdict: VerdictFail,
			edit: edit{drop: []string{"evA2", "persA2"}, after: map[string][]string{
				"mutA2": {`{"k":"pod","pod":"p1","phase":"crash","t":7000000}`}}},
			want: map[string]float64{"lost": 1, "lost_by_reason.crash": 1, "projection.observed_crashes": 1,
				"projection.unflushed_per_crash": 1, "projection.crashes_per_year": 240},
			failed: []string{CheckLossBudget},
			wit:    map[string]map[string]any{"lost": {"mid": "m2", "reason": "crash"}}},
		{name: "skipped", verdict: VerdictFail, edit: edit{drop: []string{"evA1"}},
			want:   map[string]float64{"skipped": 1},
			failed: []string{CheckSkipped},
			wit: map[string]map[string]any{"skipped": {"consumer": "cA", "seq": 1.0, "path": "/x/A/m1", "mid": "m1", "conn": "c1",
				"cursor_before": 0.0, "cursor_after": 2.0, "frame_seq": 2.0, "frame_kind": "ev", "frame_ms": 6.0,
				"frame_after_ack_ms": 4.0, "final_cursor": 2.0}}},
		{name: "skipped by a resume", verdict: VerdictFail,
			edit: edit{drop: []string{"evA1"}, after: map[string][]string{"mutA2": {
				`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":5000000,"phase":"close","pod":"p1","since":0}`,
				`{"k":"conn","consumer":"cA","tenant":"A","conn":"c9","t":5200000,"phase":"open","pod":"p2","since":1}`}}},
			want: map[string]float64{"skipped": 1, "reconnects.total": 1}, failed: []string{CheckSkipped},
			wit: map[string]map[string]any{"skipped": {"seq": 1.0, "conn": "c9", "frame_kind": "resume", "cursor_before": 0.0,
				"cursor_after": 1.0, "frame_ms": 5.2, "frame_after_ack_ms": 3.2}}},
		{name: "skipped by an unseen frame", verdict: VerdictFail, edit: edit{drop: []string{"evA1", "evA2"}},
			want: map[string]float64{"skipped": 2}, failed: []string{CheckSkipped},
			wit: map[string]map[string]any{"skipped": {"seq": 1.0, "frame_kind": "unseen (a heartbeat or the final cursor)", "final_cursor": 2.0}}},
		{name: "reset-covered and spurious", verdict: VerdictPass,
			edit: edit{drop: []string{"evA1"}, after: map[string][]string{
				"mutA2": {`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":5500000,"seq":2,"reason":"seq_too_old"}`}}},
			want: map[string]float64{"reset_covered": 1, "spurious_resets": 1, "resets_by_reason.seq_too_old": 1},
			wit: map[string]map[string]any{"spurious_resets": {"consumer": "cA", "cursor_before": 0.0, "reset_seq": 2.0, "rows_still_in_audit": 2.0},
				"reset_covered": {"seq": 1.0, "path": "/x/A/m1"}}},
		{name: "reset too old before persisting covers nothing", verdict: VerdictFail,
			edit: edit{drop: []string{"evA1"}, after: map[string][]string{
				"openB": {`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":500000,"seq":0,"reason":"seq_too_old"}`}}},
			// nothing of A was acked yet, let alone swept: the reset is spurious
			want: map[string]float64{"skipped": 1, "spurious_resets": 1}, failed: []string{CheckSkipped}},
		{name: "undelivered", verdict: VerdictFail,
			edit: edit{drop: []string{"evA2"}, replace: map[string]string{
				"consA": `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`}},
			want:   map[string]float64{"undelivered": 1},
			failed: []string{CheckUndelivered},
			wit:    map[string]map[string]any{"undelivered": {"consumer": "cA", "final_cursor": 1.0, "seq": 2.0, "path": "/x/A/m2", "mid": "m2"}}},
		{name: "non-durable consumer expects nothing", verdict: VerdictPass,
			edit: edit{drop: []string{"evA2"}, replace: map[string]string{
				"consA": `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":false}`}}},
		{name: "duplicates", verdict: VerdictPass,
			edit: edit{after: map[string][]string{"evA2": {
				`{"k":"conn","consumer":"cA","tenant":"A","conn":"c3","t":6500000,"phase":"open","pod":"p2","since":1}`,
				`{"k":"ev","consumer":"cA","tenant":"A","conn":"c3","t":7000000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p2"}`}}},
			want: map[string]float64{"duplicates": 1, "reconnects.total": 1},
			wit:  map[string]map[string]any{"duplicates": {"consumer": "cA", "conn": "c3", "seq": 2.0, "path": "/x/A/m2"}}},
		{name: "unexpected", verdict: VerdictPass,
			edit: edit{after: map[string][]string{"evA2": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":3,"op":"write","path":"/x/A/nobody","pod":"p1"}`}}},
			want: map[string]float64{"unexpected": 1},
			wit:  map[string]map[string]any{"unexpected": {"consumer": "cA", "path": "/x/A/nobody", "seq": 3.0}}},
		{name: "leak", verdict: VerdictFail,
			edit:   edit{after: map[string][]string{"evA2": {`{"k":"ev","consumer":"cB","tenant":"B","conn":"c2","t":7000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}},
			want:   map[string]float64{"leaks": 1},
			failed: []string{CheckLeaks},
			wit: map[string]map[string]any{"leaks": {"consumer": "cB", "consumer_tenant": "B", "owner_tenant": "A",
				"path": "/x/A/m1", "mid": "m1", "conn": "c2"}}},
		{name: "recovered timeout", verdict: VerdictPass,
			edit: edit{after: map[string][]string{"evA2": {
				`{"k":"mut","mid":"m4","tenant":"A","op":"write","path":"/x/A/m4","intended_t":6000000,"t":6000000,"done_t":8000000,"res":"timeout","pod":"p1"}`,
				`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":3,"op":"write","path":"/x/A/m4","pod":"p1"}`}},
				replace: map[string]string{"consA": `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":3,"durable":true}`}},
			want: map[string]float64{"recovered": 1, "acked": 3},
			wit:  map[string]map[string]any{"recovered": {"mid": "m4", "res": "timeout"}}},
		{name: "delivered before ack", verdict: VerdictPass,
			edit: edit{drop: []string{"evA1"}, after: map[string][]string{"openB": {
				`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":1500000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}},
			want: map[string]float64{"delivered_before_ack": 1, "latency_ms.count": 3, "unexpected": 0}},
		{name: "reorder", verdict: VerdictPass,
			edit: edit{drop: []string{"evA1"}, after: map[string][]string{"evA2": {
				`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}},
			want: map[string]float64{"reorder.overtaken": 1, "reorder.max_ms": 2},
			wit:  map[string]map[string]any{"reorder": {"mid": "m1", "overtaken_by_mid": "m2", "reorder_ms": 2.0}}},
		{name: "reconnect storm", verdict: VerdictPass,
			edit: edit{after: map[string][]string{"evA2": {
				`{"k":"conn","consumer":"cA","tenant":"A","conn":"c4","t":6100000,"phase":"open","pod":"p1","since":2}`,
				`{"k":"conn","consumer":"cA","tenant":"A","conn":"c5","t":6200000,"phase":"open","pod":"p1","since":2}`,
				`{"k":"conn","consumer":"cA","tenant":"A","conn":"c6","t":1106200000,"phase":"open","pod":"p1","since":2}`}}},
			want: map[string]float64{"reconnects.total": 3, "reconnects.max_per_s": 4}},
		{name: "cold wakeup", verdict: VerdictFail,
			edit: edit{replace: map[string]string{"run": `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":true}],"pods":["p1"],"target":"eventlogd"}`},
				after: map[string][]string{"openB": {`{"k":"proxy","name":"db_B","tenant":"B","t":0,"conns":1,"bytes_up":10,"bytes_down":10}`},
					"evA2": {`{"k":"proxy","name":"db_B","tenant":"B","t":7000000,"conns":1,"bytes_up":30,"bytes_down":10}`}}},
			want:   map[string]float64{"cold_wakeups": 1},
			failed: []string{CheckColdWakeups},
			wit:    map[string]map[string]any{"cold_wakeups": {"tenant": "B", "bytes_up_delta": 20.0}}},
		{name: "cold tenant woken twice counts once", verdict: VerdictFail,
			edit: edit{replace: map[string]string{"run": `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":true}],"pods":["p1"],"target":"eventlogd"}`},
				after: map[string][]string{"openB": {`{"k":"proxy","name":"db_B","tenant":"B","t":0,"conns":1,"bytes_up":10,"bytes_down":10}`},
					"mutA1": {`{"k":"proxy","name":"db_B","tenant":"B","t":2000000,"conns":1,"bytes_up":10,"bytes_down":10}`,
						`{"k":"proxy","name":"db_B","tenant":"B","t":3000000,"conns":2,"bytes_up":10,"bytes_down":10}`},
					"evA2": {`{"k":"proxy","name":"db_B","tenant":"B","t":7000000,"conns":2,"bytes_up":30,"bytes_down":10}`}}},
			want:   map[string]float64{"cold_wakeups": 1},
			failed: []string{CheckColdWakeups},
			wit: map[string]map[string]any{"cold_wakeups": {"tenant": "B", "conns_delta": 1.0, "bytes_up_delta": 20.0,
				"first_rise_from_ms": 2.0, "first_rise_to_ms": 3.0}}},
		{name: "cold tenant left asleep", verdict: VerdictPass,
			edit: edit{replace: map[string]string{"run": `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":true}],"pods":["p1"],"target":"eventlogd"}`},
				after: map[string][]string{"openB": {`{"k":"proxy","name":"db_B","tenant":"B","t":0,"conns":1,"bytes_up":10,"bytes_down":10}`},
					"evA2": {`{"k":"proxy","name":"db_B","tenant":"B","t":7000000,"conns":1,"bytes_up":10,"bytes_down":10}`}}}},
		{name: "threshold broken", verdict: VerdictFail,
			edit:   edit{replace: map[string]string{"run": `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":false}],"pods":["p1"],"target":"eventlogd","thresholds":{"latency_ms.max":["< 1.5"],"duplicates":["== 0"]}}`}},
			failed: []string{"threshold:latency_ms.max<1.5"}},
		{name: "chmod and delete share the written path", verdict: VerdictPass, quiet: true,
			edit: edit{after: map[string][]string{"evA2": {
				`{"k":"mut","mid":"m5","tenant":"A","op":"chmod","path":"/x/A/m1","intended_t":6000000,"t":6000000,"done_t":6500000,"res":"ok","pod":"p1"}`,
				`{"k":"mut","mid":"m6","tenant":"A","op":"delete","path":"/x/A/m1","intended_t":7000000,"t":7000000,"done_t":7500000,"res":"ok","pod":"p1"}`}}},
			want: map[string]float64{"acked": 3, "issue_latency_ms.count": 5}},
		{name: "a delete row does not persist the lost write", verdict: VerdictFail,
			edit: edit{drop: []string{"evA2", "persA2"}, after: map[string][]string{
				"evA2":   {`{"k":"mut","mid":"m6","tenant":"A","op":"delete","path":"/x/A/m2","intended_t":7000000,"t":7000000,"done_t":7500000,"res":"ok","pod":"p1"}`},
				"persB3": {`{"k":"persisted","tenant":"A","seq":3,"op":"delete","path":"/x/A/m2"}`}}},
			// the delete reached no consumer in either form: the structural check fails too
			want: map[string]float64{"lost": 1, "lost_by_reason.silent": 1, "structural.missing": 1}, failed: []string{CheckLossBudget, CheckSilent, CheckStructural}},
		// Structural ops (design 000 item 5): each reaches each durable consumer as a reset, as the
		// detailed file_changed, or both; a miss fails with a witness.
		{name: "structural op in the reset form", verdict: VerdictPass,
			edit: edit{after: map[string][]string{
				"evA2":   {`{"k":"mut","mid":"m7","tenant":"A","op":"rename","path":"/x/A/r7","src":"/x/A/m1","intended_t":6500000,"t":6500000,"done_t":7000000,"res":"ok","pod":"p1"}`, `{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7500000,"seq":3,"reason":"structural_change","path":"/x/A/r7","op":"rename"}`},
				"persA2": {`{"k":"persisted","tenant":"A","seq":3,"op":"rename","path":"/x/A/r7"}`}}},
			want: map[string]float64{"structural.expected": 1, "structural.reset": 1, "structural.file_changed": 0, "structural.both": 0, "structural.missing": 0}},
		{name: "structural op in the file_changed form", verdict: VerdictPass,
			edit: edit{after: map[string][]string{
				"evA2":   {`{"k":"mut","mid":"m7","tenant":"A","op":"rename","path":"/x/A/r7","src":"/x/A/m1","intended_t":6500000,"t":6500000,"done_t":7000000,"res":"ok","pod":"p1"}`, `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7500000,"seq":3,"op":"rename","path":"/x/A/r7","src":"/x/A/m1","pod":"p1"}`},
				"persA2": {`{"k":"persisted","tenant":"A","seq":3,"op":"rename","path":"/x/A/r7"}`}}},
			want: map[string]float64{"structural.expected": 1, "structural.file_changed": 1, "structural.reset": 0, "deliveries": 3}},
		{name: "structural op in both forms (dual emit)", verdict: VerdictPass,
			edit: edit{after: map[string][]string{
				"evA2": {`{"k":"mut","mid":"m7","tenant":"A","op":"mkdir","path":"/x/A/d7","intended_t":6500000,"t":6500000,"done_t":7000000,"res":"ok","pod":"p1"}`,
					`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7500000,"seq":3,"op":"mkdir","path":"/x/A/d7","pod":"p1"}`,
					`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7500001,"seq":3,"reason":"structural_change","path":"/x/A/d7","op":"mkdir"}`},
				"persA2": {`{"k":"persisted","tenant":"A","seq":3,"op":"mkdir","path":"/x/A/d7"}`}}},
			want: map[string]float64{"structural.expected": 1, "structural.both": 1}},
		{name: "a delete's file_changed is no second delivery of its file's write", verdict: VerdictPass,
			edit: edit{after: map[string][]string{
				"evA2":   {`{"k":"mut","mid":"m7","tenant":"A","op":"delete","path":"/x/A/m1","intended_t":6500000,"t":6500000,"done_t":7000000,"res":"ok","pod":"p1"}`, `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7500000,"seq":3,"op":"delete","path":"/x/A/m1","pod":"p1"}`},
				"persA2": {`{"k":"persisted","tenant":"A","seq":3,"op":"delete","path":"/x/A/m1"}`}}},
			want: map[string]float64{"structural.file_changed": 1, "deliveries": 3}},
		{name: "structural op missed in both forms", verdict: VerdictFail,
			edit: edit{after: map[string][]string{
				"evA2":   {`{"k":"mut","mid":"m7","tenant":"A","op":"copy","path":"/x/A/c7","src":"/x/A/m1","intended_t":6500000,"t":6500000,"done_t":7000000,"res":"ok","pod":"p1"}`},
				"persA2": {`{"k":"persisted","tenant":"A","seq":3,"op":"copy","path":"/x/A/c7"}`}}},
			want:   map[string]float64{"structural.expected": 1, "structural.missing": 1},
			failed: []string{CheckStructural},
			wit:    map[string]map[string]any{"structural": {"consumer": "cA", "seq": 3.0, "op": "copy", "path": "/x/A/c7"}}},
		{name: "a reset of another op on the same path does not deliver a structural op", verdict: VerdictFail,
			edit: edit{after: map[string][]string{
				"evA2":   {`{"k":"mut","mid":"m7","tenant":"A","op":"delete","path":"/x/A/m1","intended_t":6500000,"t":6500000,"done_t":7000000,"res":"ok","pod":"p1"}`, `{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7500000,"seq":3,"reason":"structural_change","path":"/x/A/m1","op":"rename"}`},
				"persA2": {`{"k":"persisted","tenant":"A","seq":3,"op":"delete","path":"/x/A/m1"}`}}},
			want:   map[string]float64{"structural.expected": 1, "structural.missing": 1},
			failed: []string{CheckStructural}},
		// Matching is by (tenant, path), never by seq.
		{name: "frame at a row's seq with a path no mutation wrote does not deliver it", verdict: VerdictFail,
			edit:   edit{replace: map[string]string{"evA1": `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":3000000,"seq":1,"op":"write","path":"/x/A/ghost","pod":"p1"}`}},
			want:   map[string]float64{"skipped": 1, "unexpected": 1},
			failed: []string{CheckSkipped},
			wit:    map[string]map[string]any{"skipped": {"seq": 1.0, "path": "/x/A/m1"}, "unexpected": {"path": "/x/A/ghost", "seq": 1.0}}},
		{name: "frame at a row's seq with another tenant's path is a leak, not a delivery", verdict: VerdictFail,
			edit:   edit{replace: map[string]string{"evA1": `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":3000000,"seq":1,"op":"write","path":"/x/B/m3","pod":"p1"}`}},
			want:   map[string]float64{"skipped": 1, "leaks": 1},
			failed: []string{CheckSkipped, CheckLeaks},
			wit:    map[string]map[string]any{"leaks": {"owner_tenant": "B", "path": "/x/B/m3"}}},
		{name: "a row's path in a frame with another seq delivers it, as a seq_mismatch", verdict: VerdictPass,
			edit: edit{replace: map[string]string{"evA2": `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6000000,"seq":1,"op":"write","path":"/x/A/m2","pod":"p1"}`,
				"consA": `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`}},
			want: map[string]float64{"seq_mismatch": 1, "deliveries": 3},
			wit:  map[string]map[string]any{"seq_mismatch": {"consumer": "cA", "path": "/x/A/m2", "frame_seq": 1.0, "row_seq": 2.0, "frames": 1.0}}},
		{name: "seq_mismatch fails only by a threshold", verdict: VerdictFail,
			edit: edit{replace: map[string]string{"evA2": `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6000000,"seq":1,"op":"write","path":"/x/A/m2","pod":"p1"}`,
				"consA": `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`,
				"run":   withThresholds(`{"seq_mismatch":["== 0"]}`)}},
			want: map[string]float64{"seq_mismatch": 1}, failed: []string{"threshold:seq_mismatch==0"}},
		{name: "a later copy with the wrong seq is the mismatch, the first is not", verdict: VerdictPass,
			edit: edit{after: map[string][]string{"evA2": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6500000,"seq":5,"op":"write","path":"/x/A/m2","pod":"p1"}`}},
				replace: map[string]string{"consA": `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":5,"durable":true}`}},
			want: map[string]float64{"seq_mismatch": 1, "duplicates": 1},
			wit:  map[string]map[string]any{"seq_mismatch": {"consumer": "cA", "frame_seq": 5.0, "row_seq": 2.0, "conn": "c1", "t_ms": 6.5}}},
		{name: "the right seq in a second consumer's frame is no mismatch", verdict: VerdictPass,
			edit: edit{after: map[string][]string{"openB": {`{"k":"conn","consumer":"cA2","tenant":"A","conn":"c7","t":0,"phase":"open","pod":"p1","since":0}`},
				"evA1": {`{"k":"ev","consumer":"cA2","tenant":"A","conn":"c7","t":3000000,"seq":9,"op":"write","path":"/x/A/m1","pod":"p1"}`},
				"evA2": {`{"k":"ev","consumer":"cA2","tenant":"A","conn":"c7","t":3000000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p1"}`}},
				replace: map[string]string{"evA1": `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":3000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}},
			want: map[string]float64{"seq_mismatch": 1, "per_consumer.cA2.seq_mismatch": 1, "per_consumer.cA.seq_mismatch": 0}},
		// Budget 0 is zero tolerance; an absent budget is 1e-4.
		{name: "budget 0: one explained loss fails", verdict: VerdictFail,
			edit: edit{drop: []string{"evA2", "persA2"}, replace: map[string]string{"run": run0Line},
				after: map[string][]string{"mutA2": {`{"k":"pod","pod":"p1","phase":"crash","t":7000000}`}}},
			want: map[string]float64{"lost": 1, "lost_by_reason.crash": 1, "budget": 0}, failed: []string{CheckLossBudget}},
		{name: "budget 0 without loss passes and shows 0", verdict: VerdictPass,
			edit: edit{replace: map[string]string{"run": run0Line}},
			want: map[string]float64{"budget": 0, "acked": 3}},
		{name: "no budget is 1e-4", verdict: VerdictPass,
			edit: edit{replace: map[string]string{"run": runNoBudgetLine}},
			want: map[string]float64{"budget": 1e-4}},
		// A field another kind defines with another type is ignored on this kind.
		{name: "conn with a string code", verdict: VerdictPass,
			edit: edit{after: map[string][]string{"evA2": {`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":6500000,"phase":"fail","pod":"p1","since":2,"code":"ECONNRESET","err":"read: connection reset"}`}}}},
		// The spec's decisions.
		{name: "reset-covered is decided first, above the final cursor too", verdict: VerdictPass,
			edit: edit{drop: []string{"evA2"}, replace: map[string]string{
				"consA": `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`},
				after: map[string][]string{"mutA2": {`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":1,"reason":"seq_too_old"}`}}},
			want: map[string]float64{"reset_covered": 1, "undelivered": 0, "spurious_resets": 1, "resets_by_reason.seq_too_old": 1},
			wit:  map[string]map[string]any{"spurious_resets": {"nothing_swept": true, "rows_still_in_audit": 0.0}}},
		{name: "a seq_too_old after a missing row may be true", verdict: VerdictFail,
			edit: edit{drop: []string{"evA2", "persA2"}, replace: map[string]string{
				"consA": `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`},
				after: map[string][]string{"mutA2": {`{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":1,"reason":"seq_too_old"}`}}},
			want:   map[string]float64{"lost": 1, "lost_by_reason.silent": 1, "resets_by_reason.seq_too_old": 1},
			failed: []string{CheckLossBudget, CheckSilent}},
		{name: "three deliveries of one path are two duplicates", verdict: VerdictPass,
			edit: edit{after: map[string][]string{"evA2": {
				`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6100000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p1"}`,
				`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6200000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p1"}`}}},
			want: map[string]float64{"duplicates": 2, "per_consumer.cA.duplicates": 2, "per_tenant.A.duplicates": 2}},
		{name: "a restarted proxy starts a new baseline", verdict: VerdictFail,
			edit: edit{replace: map[string]string{"run": coldRunLine},
				after: map[string][]string{"openB": {`{"k":"proxy","name":"db_B","tenant":"B","t":0,"conns":3,"bytes_up":100,"bytes_down":100}`},
					"mutA1": {`{"k":"proxy","name":"db_B","tenant":"B","t":2000000,"conns":0,"bytes_up":0,"bytes_down":0}`},
					"evA2":  {`{"k":"proxy","name":"db_B","tenant":"B","t":7000000,"conns":1,"bytes_up":5,"bytes_down":0}`}}},
			want: map[string]float64{"cold_wakeups": 1}, failed: []string{CheckColdWakeups},
			wit: map[string]map[string]any{"cold_wakeups": {"tenant": "B", "conns_delta": 1.0, "bytes_up_delta": 5.0, "first_rise_from_ms": 2.0}}},
		{name: "a restarted proxy that stays down is no wakeup", verdict: VerdictPass,
			edit: edit{replace: map[string]string{"run": coldRunLine},
				after: map[string][]string{"openB": {`{"k":"proxy","name":"db_B","tenant":"B","t":0,"conns":3,"bytes_up":100,"bytes_down":100}`},
					"mutA1": {`{"k":"proxy","name":"db_B","tenant":"B","t":2000000,"conns":0,"bytes_up":0,"bytes_down":0}`},
					"evA2":  {`{"k":"proxy","name":"db_B","tenant":"B","t":7000000,"conns":0,"bytes_up":0,"bytes_down":0}`}}}},
		{name: "reconnect windows are half-open", verdict: VerdictPass,
			edit: edit{after: map[string][]string{"evA2": {
				`{"k":"conn","consumer":"cA","tenant":"A","conn":"c4","t":1000000000,"phase":"open","pod":"p1","since":2}`}},
				replace: map[string]string{"end": `{"k":"end","t":2000000000,"drained":true}`}},
			want: map[string]float64{"reconnects.total": 1, "reconnects.opens": 3, "reconnects.max_per_s": 2}},
		{name: "an overtaker acked long after still overtakes (no horizon)", verdict: VerdictPass,
			edit: edit{drop: []string{"evA2"}, after: map[string][]string{
				"mutA2": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6500000,"seq":3,"op":"write","path":"/x/A/m9","pod":"p1"}`,
					`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6600000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p1"}`,
					`{"k":"mut","mid":"m10","tenant":"A","op":"write","path":"/x/A/m10","intended_t":649000000000,"t":649000000000,"done_t":649500000000,"res":"ok","pod":"p1"}`,
					`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":650000000000,"seq":4,"op":"write","path":"/x/A/m10","pod":"p1"}`,
					`{"k":"mut","mid":"m9","tenant":"A","op":"write","path":"/x/A/m9","intended_t":6000000,"t":6000000,"done_t":700000000000,"res":"ok","pod":"p1"}`},
				"persA2": {`{"k":"persisted","tenant":"A","seq":3,"op":"write","path":"/x/A/m9"}`, `{"k":"persisted","tenant":"A","seq":4,"op":"write","path":"/x/A/m10"}`}},
				replace: map[string]string{"consA": `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":4,"durable":true}`,
					"end": `{"k":"end","t":800000000000,"drained":true}`}},
			want: map[string]float64{"reorder.overtaken": 1, "reorder.max_ms": 1, "acked": 5, "delivered_before_ack": 1},
			wit:  map[string]map[string]any{"reorder": {"mid": "m2", "overtaken_by_mid": "m9", "reorder_ms": 1.0}}},
		// Unresolved, drops, evidence.
		{name: "no end record: an acked mutation neither persisted nor delivered is unresolved, not lost", verdict: VerdictInconclusive,
			edit: edit{drop: []string{"end", "evA2", "persA2"}},
			want: map[string]float64{"unresolved": 1, "per_tenant.A.unresolved": 1, "lost": 0, "acked": 3},
			wit:  map[string]map[string]any{"unresolved": {"mid": "m2", "tenant": "A", "pod": "p1", "ack_ms": 5.0}}},
		{name: "interrupted: unresolved, not lost", verdict: VerdictInconclusive,
			edit: edit{drop: []string{"evA2", "persA2"}, replace: map[string]string{"end": `{"k":"end","t":10000000,"drained":false,"reason":"interrupted"}`}},
			want: map[string]float64{"unresolved": 1}},
		{name: "drops over 1% fail", verdict: VerdictFail,
			edit:   edit{after: map[string][]string{"mutA2": {`{"k":"drop","tenant":"A","intended_t":4500000,"block":"1"}`}}},
			want:   map[string]float64{"drops": 1, "mutations": 3, "dropped_fraction": 0.25, "per_tenant.A.drops": 1, "per_tenant.A.dropped_fraction": 1.0 / 3},
			failed: []string{CheckDroppedFraction},
			wit: map[string]map[string]any{"drops": {"tenant": "A", "intended_ms": 4.5, "block": "1"},
				"drops_by_tenant": {"tenant": "A", "drops": 1.0, "first_intended_ms": 4.5}}},
		{name: "a threshold on dropped_fraction replaces the 1% bound", verdict: VerdictPass,
			edit: edit{after: map[string][]string{"mutA2": {`{"k":"drop","tenant":"A","intended_t":4500000}`}},
				replace: map[string]string{"run": withThresholds(`{"dropped_fraction":["<= 0.3"]}`)}},
			want: map[string]float64{"drops": 1, "dropped_fraction": 0.25}},
		{name: "the audit promised and done", verdict: VerdictPass,
			edit: edit{replace: map[string]string{"run": auditRunLine},
				after: map[string][]string{"persB3": {`{"k":"audit","t":9500000,"ok":true,"tenants":2,"rows":3}`}}},
			want: map[string]float64{"audit.attempts": 1, "audit.rows": 3, "audit.tenants": 2}},
		{name: "the audit promised, failed: inconclusive", verdict: VerdictInconclusive,
			edit: edit{replace: map[string]string{"run": auditRunLine},
				after: map[string][]string{"persB3": {`{"k":"audit","t":9500000,"ok":false,"tenants":0,"rows":0,"error":"dial: refused"}`}}},
			want: map[string]float64{"audit.attempts": 1}},
		{name: "the audit promised, never written: inconclusive", verdict: VerdictInconclusive,
			edit: edit{replace: map[string]string{"run": auditRunLine}}},
		{name: "the audit promised, retried until ok", verdict: VerdictPass,
			edit: edit{replace: map[string]string{"run": auditRunLine},
				after: map[string][]string{"persB3": {`{"k":"audit","t":9500000,"ok":false,"tenants":0,"rows":0,"error":"dial: refused"}`,
					`{"k":"audit","t":9600000,"ok":true,"tenants":2,"rows":3}`}}},
			want: map[string]float64{"audit.attempts": 2, "audit.rows": 3}},
		{name: "without the audit, a loss is not judged", verdict: VerdictInconclusive,
			edit: edit{drop: []string{"evA2", "persA2"}, replace: map[string]string{"run": auditRunLine}},
			want: map[string]float64{"lost": 1, "lost_by_reason.silent": 1}},
		{name: "without the audit, a leak still fails", verdict: VerdictFail,
			edit: edit{replace: map[string]string{"run": auditRunLine},
				after: map[string][]string{"evA2": {`{"k":"ev","consumer":"cB","tenant":"B","conn":"c2","t":7000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}},
			want: map[string]float64{"leaks": 1}, failed: []string{CheckLeaks}},
		{name: "no end record", verdict: VerdictInconclusive, edit: edit{drop: []string{"end"}}},
		{name: "interrupted run", verdict: VerdictInconclusive,
			edit: edit{replace: map[string]string{"end": `{"k":"end","t":10000000,"drained":false,"reason":"interrupted"}`}}},
		{name: "not drained, not interrupted", verdict: VerdictInconclusive,
			edit: edit{replace: map[string]string{"end": `{"k":"end","t":10000000,"drained":false,"reason":"drain timeout"}`}}},
		{name: "no end record but a leak", verdict: VerdictFail, want: map[string]float64{"leaks": 1}, failed: []string{CheckLeaks},
			edit: edit{drop: []string{"end"}, after: map[string][]string{"evA2": {`{"k":"ev","consumer":"cB","tenant":"B","conn":"c2","t":7000000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}}},
		{name: "no end record, broken threshold: fail beats inconclusive", verdict: VerdictFail, failed: []string{"threshold:latency_ms.max<1.5"},
			edit: edit{drop: []string{"end"}, replace: map[string]string{"run": `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":false}],"pods":["p1","p2"],"target":"eventlogd","thresholds":{"latency_ms.max":["< 1.5"]}}`}}},
		{name: "empty W", verdict: VerdictInconclusive,
			edit: edit{drop: []string{"mutA1", "mutA2", "mutB3", "evA1", "evA2", "evB3", "persA1", "persA2", "persB3"}},
			want: map[string]float64{"acked": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, tc.edit.build(), Options{})
			doc := summaryDoc(s)
			if s.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (failed %v)", s.Verdict, tc.verdict, s.FailedChecks)
			}
			failed := tc.failed
			if failed == nil {
				failed = []string{}
			}
			if !slices.Equal(s.FailedChecks, failed) {
				t.Errorf("failed_checks %v, want %v", s.FailedChecks, failed)
			}
			for _, p := range anomalyPaths {
				if _, ok := tc.want[p]; !ok {
					if v := measure(doc, p); v != 0 {
						t.Errorf("%s = %v, want 0", p, v)
					}
				}
			}
			if tc.quiet && len(s.Warnings) > 0 {
				t.Errorf("warnings %v", s.Warnings)
			}
			for p, want := range tc.want {
				if v := measure(doc, p); v != want {
					t.Errorf("%s = %v, want %v", p, v, want)
				}
			}
			wdoc, _ := doc["witnesses"].(map[string]any)
			for check, fields := range tc.wit {
				list, _ := wdoc[check].([]any)
				if len(list) == 0 {
					t.Errorf("no witness for %s", check)
					continue
				}
				got := list[0].(map[string]any)
				for k, v := range fields {
					if got[k] != v {
						b, _ := json.Marshal(got)
						t.Errorf("witness %s.%s = %v, want %v (%s)", check, k, got[k], v, b)
					}
				}
			}
		})
	}
}
