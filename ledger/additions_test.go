package ledger

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const connLine = `{"k":"conn","consumer":"c1","tenant":"t1","conn":"x","t":5,"phase":"fail","pod":"p0","since":0}`

// TestUnknownFieldsArePerKind: a field a kind does not define is ignored whatever its type, even when
// another kind defines the same name with another type (the spec's decisions); on the kind that
// defines it, the wrong type is still an error (the negative control).
func TestUnknownFieldsArePerKind(t *testing.T) {
	withConn := func(extra string) string {
		return runLine + "\n" + strings.Replace(connLine, `"since":0`, `"since":0,`+extra, 1) + "\n"
	}
	ok := []struct{ name, text string }{
		{"conn with string code", withConn(`"code":"ECONNRESET"`)},
		{"conn with object seq-like fields", withConn(`"rows":"many","ok":"sure","block":{"x":1},"labels":[1]`)},
		{"ev with string status", runLine + "\n" + strings.Replace(evLine, `"pod":"p0"`, `"pod":"p0","status":"200 OK","drained":"n/a"`, 1) + "\n"},
		{"kind after the odd field", runLine + "\n" + `{"code":"ECONNRESET","consumer":"c1","tenant":"t1","conn":"x","t":5,"phase":"fail","pod":"p0","since":0,"k":"conn"}` + "\n"},
		{"end with string tenants", runLine + "\n" + `{"k":"end","t":1,"drained":true,"tenants":"all"}` + "\n"},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			recs, _, err := readString(t, "ledger.jsonl", tt.text)
			if err != nil || len(recs) != 2 {
				t.Fatalf("records %d, error %v; want 2 records and no error", len(recs), err)
			}
		})
	}
	bad := []struct{ name, text, want string }{
		{"pod with string code", runLine + "\n" + `{"k":"pod","pod":"p0","phase":"exit","t":1,"code":"ECONNRESET"}` + "\n",
			`ledger.jsonl:2: field "code": want integer, got "ECONNRESET"`},
		{"conn with string since", strings.Replace(withConn(`"x":1`), `"since":0`, `"since":"zero"`, 1),
			`ledger.jsonl:2: field "since": want integer, got "zero"`},
		{"kind after its own bad field", runLine + "\n" + `{"code":"E","pod":"p0","phase":"exit","t":1,"k":"pod"}` + "\n",
			`ledger.jsonl:2: field "code": want integer, got "E"`},
		{"k of the wrong type", runLine + "\n" + `{"code":"E","k":5}` + "\n", `ledger.jsonl:2: field "k": want string, got 5`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readString(t, "ledger.jsonl", tt.text)
			var le *LineError
			if !errors.As(err, &le) || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestAdditionsDecode: the drop and audit kinds and the run's audit and profile fields, the shapes the spec leaves open, and their errors.
func TestAdditionsDecode(t *testing.T) {
	runNoBudget := strings.Replace(runLine, `"budget":0.0001,`, ``, 1)
	tests := []struct {
		name string
		text string
		want Record // the second record; K "" = check only the run record
		run  func(*Record) string
		err  string
	}{
		{name: "drop", text: runLine + "\n" + `{"k":"drop","tenant":"t1","intended_t":42,"block":"ramp"}` + "\n",
			want: Record{K: KindDrop, Tenant: "t1", IntendedT: 42, Block: "ramp"}},
		{name: "drop with numeric block", text: runLine + "\n" + `{"k":"drop","tenant":"t1","intended_t":42,"block":3}` + "\n",
			want: Record{K: KindDrop, Tenant: "t1", IntendedT: 42, Block: "3"}},
		{name: "drop without block", text: runLine + "\n" + `{"k":"drop","tenant":"t1","intended_t":0}` + "\n",
			want: Record{K: KindDrop, Tenant: "t1"}},
		{name: "audit", text: runLine + "\n" + `{"k":"audit","t":9,"ok":true,"tenants":2,"rows":17}` + "\n",
			want: Record{K: KindAudit, T: 9, OK: true, AuditTenants: 2, Rows: 17}},
		{name: "audit failed", text: runLine + "\n" + `{"k":"audit","t":9,"ok":false,"tenants":0,"rows":0,"error":"timeout"}` + "\n",
			want: Record{K: KindAudit, T: 9, Error: "timeout"}},
		{name: "audit tenants as a list", text: runLine + "\n" + `{"k":"audit","t":9,"ok":true,"tenants":["t1","t2","t3"],"rows":1}` + "\n",
			want: Record{K: KindAudit, T: 9, OK: true, AuditTenants: 3, Rows: 1}},
		{name: "audit among the run records", text: runLine + "\n" + `{"k":"audit","t":9,"ok":true,"tenants":1,"rows":1}` + "\n" + evLine + "\n",
			want: Record{K: KindAudit, T: 9, OK: true, AuditTenants: 1, Rows: 1}},
		{name: "audit after end", text: runLine + "\n" + `{"k":"end","t":1,"drained":true}` + "\n" + `{"k":"audit","t":9,"ok":true,"tenants":1,"rows":1}` + "\n",
			err: `ledger.jsonl:3: field "k": a "audit" record after "end" (end is the last line)`},
		{name: "drop after persisted", text: runLine + "\n" + `{"k":"persisted","tenant":"t1","seq":1,"op":"write","path":"/a"}` + "\n" + `{"k":"drop","tenant":"t1","intended_t":1}` + "\n",
			want: Record{K: KindPersisted, Tenant: "t1", Seq: 1, Op: "write", Path: "/a"}},
		{name: "persisted absent (seqgate's addition)", text: runLine + "\n" + `{"k":"persisted","tenant":"t1","seq":1,"op":"write","path":"/a","absent":true}` + "\n",
			want: Record{K: KindPersisted, Tenant: "t1", Seq: 1, Op: "write", Path: "/a", Absent: true}},
		{name: "persisted absent not a boolean", text: runLine + "\n" + `{"k":"persisted","tenant":"t1","seq":1,"op":"write","path":"/a","absent":"yes"}` + "\n",
			err: `ledger.jsonl:2: field "absent": want boolean, got "yes"`},
		{name: "fault naming its tenant (seqgate's addition)", text: runLine + "\n" + `{"k":"fault","id":"f1","kind":"tenant_delete","target":"tenant_1","tenant":"t1","phase":"start","t":4}` + "\n",
			want: Record{K: KindFault, Tenant: "t1", T: 4}},
		{name: "fault naming the tenants it reached (seqgate's addition)", text: runLine + "\n" + `{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"tenant_1","reached":["t1","t2"],"phase":"start","t":4}` + "\n",
			want: Record{K: KindFault, T: 4, Reached: []string{"t1", "t2"}}},
		{name: "fault reached not a list", text: runLine + "\n" + `{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"tenant_1","reached":"t1","phase":"start","t":4}` + "\n",
			err: `ledger.jsonl:2: field "reached": want list of names, got "t1"`},
		{name: "audit missing rows", text: runLine + "\n" + `{"k":"audit","t":9,"ok":true,"tenants":1}` + "\n",
			err: `ledger.jsonl:2: field "rows": missing (required for k "audit")`},
		{name: "audit ok not a boolean", text: runLine + "\n" + `{"k":"audit","t":9,"ok":"yes","tenants":1,"rows":1}` + "\n",
			err: `ledger.jsonl:2: field "ok": want boolean, got "yes"`},
		{name: "audit negative rows", text: runLine + "\n" + `{"k":"audit","t":9,"ok":true,"tenants":1,"rows":-1}` + "\n",
			err: `ledger.jsonl:2: field "rows": want a count >= 0, got -1`},
		{name: "drop missing intended_t", text: runLine + "\n" + `{"k":"drop","tenant":"t1"}` + "\n",
			err: `ledger.jsonl:2: field "intended_t": missing (required for k "drop")`},
		{name: "run tenants as a number", text: strings.Replace(runLine, `"tenants":[{"id":"t1","mode":"dedicated","cold":false}]`, `"tenants":3`, 1) + "\n",
			err: `ledger.jsonl:1: field "tenants": want list of {"id","mode","cold"}, got a count or a list of ids`},
		{name: "run audit and profile", text: strings.Replace(runLine, `"target"`, `"audit":true,"profile":"drive9","target"`, 1) + "\n",
			run: func(r *Record) string {
				if !r.Audit || r.Profile != "drive9" {
					return "audit/profile not decoded"
				}
				return ""
			}},
		{name: "run without audit", text: runLine + "\n",
			run: func(r *Record) string {
				if r.Audit {
					return "audit absent must be false"
				}
				return ""
			}},
		{name: "run without budget", text: runNoBudget + "\n",
			run: func(r *Record) string {
				if r.Budget != nil {
					return "absent budget must stay nil"
				}
				return ""
			}},
		{name: "run with budget 0", text: strings.Replace(runLine, `"budget":0.0001`, `"budget":0`, 1) + "\n",
			run: func(r *Record) string {
				if r.Budget == nil || *r.Budget != 0 {
					return "budget 0 must be kept as set"
				}
				return ""
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, _, err := readString(t, "ledger.jsonl", tt.text)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error\n got %v\nwant %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.run != nil {
				if msg := tt.run(&recs[0]); msg != "" {
					t.Error(msg)
				}
				return
			}
			if len(recs) < 2 {
				t.Fatalf("%d records", len(recs))
			}
			got := recs[1]
			if got.K != tt.want.K || got.Tenant != tt.want.Tenant || got.IntendedT != tt.want.IntendedT || got.Block != tt.want.Block ||
				got.T != tt.want.T || got.OK != tt.want.OK || got.AuditTenants != tt.want.AuditTenants || got.Rows != tt.want.Rows ||
				got.Error != tt.want.Error || got.Tenants != nil || got.Absent != tt.want.Absent || !slices.Equal(got.Reached, tt.want.Reached) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestInvalidLastLineWithNewlineIsUnusable: only a last line without its newline is torn (a warning);
// an invalid last line that ends in a newline was written whole and is an error.
func TestInvalidLastLineWithNewlineIsUnusable(t *testing.T) {
	_, warns, err := readString(t, "ledger.jsonl", runLine+"\n"+evLine[:40]+"\n")
	if err == nil || !strings.HasPrefix(err.Error(), "ledger.jsonl:2: invalid JSON") {
		t.Errorf("with newline: error %v, warnings %v; want a line error on line 2", err, warns)
	}
	_, warns, err = readString(t, "ledger.jsonl", runLine+"\n"+evLine[:40])
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0].Msg, "torn last line") {
		t.Errorf("without newline: error %v, warnings %v; want one torn-line warning", err, warns)
	}
}

// TestAuditCountNeverWrittenTwice: the writer emits one "tenants" per line, the kind's own shape.
func TestAuditCountNeverWrittenTwice(t *testing.T) {
	for _, rec := range []Record{
		{K: KindAudit, T: 1, OK: true, AuditTenants: 2, Rows: 3, Tenants: []Tenant{{ID: "x", Mode: "shared"}}},
		{K: KindRun, V: 1, Tenants: []Tenant{{ID: "x", Mode: "shared"}}, AuditTenants: 5, Target: "eventlogd"},
	} {
		b, err := AppendRecord(nil, &rec)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), `"tenants":`); n != 1 {
			t.Errorf("%s: %d tenants fields", b, n)
		}
	}
}

// TestRunTenantsTypeErrorNamed: a tenant object of the wrong shape is still named as such.
func TestRunTenantsTypeErrorNamed(t *testing.T) {
	text := strings.Replace(runLine, `"cold":false`, `"cold":"no"`, 1) + "\n"
	_, _, err := readString(t, "ledger.jsonl", text)
	if err == nil || !strings.Contains(err.Error(), `field "tenants": want list of {"id","mode","cold"}, got [{"id"`) {
		t.Errorf("error %v", err)
	}
}
