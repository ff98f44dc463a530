package ledger

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const (
	resyncLine = `{"k":"resync","consumer":"c1","tenant":"t1","conn":"x","t":90,"t_start":80,"after_seq":7,"reason":"seq_too_old","ok":true,"entries":2}`
	listedLine = `{"k":"listed","consumer":"c1","t":90,"path":"/a","size":3,"rev":4}`
	tenantLine = `{"k":"tenant","id":"t1","mode":"dedicated","cold":false}`
	// runNoTenants is runLine without its "tenants" list.
	runNoTenants = `{"k":"run","v":1,"run_id":"r1","scenario":"s","seed":1,"start_unix_ns":5,"budget":0.0001,"pods":["p0"],"target":"eventlogd"}`
)

// TestResyncRoundTrip: the new kinds write their required zero values (ok false, entries 0), leave
// unset optional ones out, and read back equal; tenant records come back as the run's tenants.
func TestResyncRoundTrip(t *testing.T) {
	recs := []Record{
		{K: KindRun, V: 1, RunID: "r1", Scenario: "s", Seed: 1, StartUnixNs: 5, Pods: []string{"p0"}, Target: "eventlogd", Resync: true},
		{K: KindTenant, ID: "t1", Mode: "dedicated", Name: "tenant_1"},
		{K: KindTenant, ID: "t2", Mode: "shared", Cold: true},
		{K: KindListed, Consumer: "c1", T: 90, Path: "/a", Size: 3, Rev: 4},
		{K: KindListed, Consumer: "c1", T: 90, Path: "/b"},
		{K: KindResync, Consumer: "c1", Tenant: "t1", Conn: "x", T: 90, TStart: 80, AfterSeq: 7, Reason: "seq_too_old", OK: true, Entries: 2},
		{K: KindResync, Consumer: "c1", Tenant: "t1", Conn: "x", T: 95, TStart: 91, AfterSeq: 9, Reason: "server_restart", Error: "list: 503"},
		{K: KindEnd, T: 100, Drained: true},
	}
	var buf bytes.Buffer
	writeAll(t, NewWriter(&buf), recs)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	wantLines := map[int]string{
		0: `{"k":"run","v":1,"run_id":"r1","scenario":"s","seed":1,"start_unix_ns":5,"pods":["p0"],"target":"eventlogd","resync":true}`,
		1: `{"k":"tenant","id":"t1","mode":"dedicated","cold":false,"name":"tenant_1"}`,
		2: `{"k":"tenant","id":"t2","mode":"shared","cold":true}`,
		3: listedLine,
		4: `{"k":"listed","consumer":"c1","t":90,"path":"/b"}`,
		5: resyncLine,
		6: `{"k":"resync","consumer":"c1","tenant":"t1","conn":"x","t":95,"t_start":91,"after_seq":9,"reason":"server_restart","ok":false,"entries":0,"error":"list: 503"}`,
	}
	for i, want := range wantLines {
		if lines[i] != want {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i], want)
		}
	}
	got, _, err := readString(t, "ledger.jsonl", buf.String())
	if err != nil {
		t.Fatal(err)
	}
	wantRun := recs[0]
	wantRun.Tenants = []Tenant{{ID: "t1", Mode: "dedicated", Name: "tenant_1"}, {ID: "t2", Mode: "shared", Cold: true}}
	want := append([]Record{wantRun}, recs[3:]...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back:\n got %+v\nwant %+v", got, want)
	}
}

// TestResyncFieldErrors: required fields of the new kinds (several past the 64th field) are named
// when missing, and typed and enumerated values are checked.
func TestResyncFieldErrors(t *testing.T) {
	drop := func(line, field string) string {
		i := strings.Index(line, `,"`+field+`":`)
		j := i + 1 + strings.IndexAny(line[i+1:], ",}")
		return line[:i] + line[j:]
	}
	run := runLine + "\n"
	tests := []struct {
		name, text, want string
	}{
		{"resync no consumer", run + drop(resyncLine, "consumer") + "\n", `ledger.jsonl:2: field "consumer": missing (required for k "resync")`},
		{"resync no t_start", run + drop(resyncLine, "t_start") + "\n", `ledger.jsonl:2: field "t_start": missing (required for k "resync")`},
		{"resync no after_seq", run + drop(resyncLine, "after_seq") + "\n", `ledger.jsonl:2: field "after_seq": missing (required for k "resync")`},
		{"resync no ok", run + drop(resyncLine, "ok") + "\n", `ledger.jsonl:2: field "ok": missing (required for k "resync")`},
		{"resync no entries", run + strings.Replace(resyncLine, `,"entries":2`, ``, 1) + "\n", `ledger.jsonl:2: field "entries": missing (required for k "resync")`},
		{"resync no reason", run + drop(resyncLine, "reason") + "\n", `ledger.jsonl:2: field "reason": missing (required for k "resync")`},
		{"resync entries string", run + strings.Replace(resyncLine, `"entries":2`, `"entries":"2"`, 1) + "\n", `ledger.jsonl:2: field "entries": want integer, got "2"`},
		{"resync entries negative", run + strings.Replace(resyncLine, `"entries":2`, `"entries":-1`, 1) + "\n", `ledger.jsonl:2: field "entries": want a count >= 0, got -1`},
		{"resync ok number", run + strings.Replace(resyncLine, `"ok":true`, `"ok":1`, 1) + "\n", `ledger.jsonl:2: field "ok": want boolean, got 1`},
		{"listed no path", run + drop(listedLine, "path") + "\n", `ledger.jsonl:2: field "path": missing (required for k "listed")`},
		{"listed no t", run + drop(listedLine, "t") + "\n", `ledger.jsonl:2: field "t": missing (required for k "listed")`},
		{"listed rev string", run + strings.Replace(listedLine, `"rev":4`, `"rev":"4"`, 1) + "\n", `ledger.jsonl:2: field "rev": want integer, got "4"`},
		{"listed size negative", run + strings.Replace(listedLine, `"size":3`, `"size":-3`, 1) + "\n", `ledger.jsonl:2: field "size": want a size >= 0, got -3`},
		{"tenant no cold", runNoTenants + "\n" + drop(tenantLine, "cold") + "\n", `ledger.jsonl:2: field "cold": missing (required for k "tenant")`},
		{"tenant no mode", runNoTenants + "\n" + drop(tenantLine, "mode") + "\n", `ledger.jsonl:2: field "mode": missing (required for k "tenant")`},
		{"tenant bad mode", runNoTenants + "\n" + strings.Replace(tenantLine, `"dedicated"`, `"solo"`, 1) + "\n", `ledger.jsonl:2: field "mode": want one of dedicated|shared, got "solo"`},
		{"tenant empty id", runNoTenants + "\n" + strings.Replace(tenantLine, `"t1"`, `""`, 1) + "\n", `ledger.jsonl:2: field "id": want a tenant id, got an empty string`},
		{"tenant cold string", runNoTenants + "\n" + strings.Replace(tenantLine, `"cold":false`, `"cold":"no"`, 1) + "\n", `ledger.jsonl:2: field "cold": want boolean, got "no"`},
		{"run resync string", strings.Replace(runLine, `"target"`, `"resync":"yes","target"`, 1) + "\n", `ledger.jsonl:1: field "resync": want boolean, got "yes"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readString(t, "ledger.jsonl", tc.text)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v\n want %s", err, tc.want)
			}
		})
	}
	// Negative control: the lines themselves are valid.
	if _, _, err := readString(t, "ledger.jsonl", run+listedLine+"\n"+resyncLine+"\n"); err != nil {
		t.Fatalf("valid resync and listed lines: %v", err)
	}
}

// TestTenantRecords: a run gives its tenants in run.tenants or in tenant records after the run
// record; either reads as the same run record, and both, neither, or a tenant record after other
// records is refused with the line at fault.
func TestTenantRecords(t *testing.T) {
	ev := evLine + "\n"
	tests := []struct {
		name    string
		text    string
		want    string // error; "" when the ledger reads
		tenants []Tenant
	}{
		{"run.tenants only", runLine + "\n" + ev, "", []Tenant{{ID: "t1", Mode: "dedicated"}}},
		{"tenant records only", runNoTenants + "\n" + tenantLine + "\n" + ev, "", []Tenant{{ID: "t1", Mode: "dedicated"}}},
		{"tenant records only, no other record", runNoTenants + "\n" + tenantLine + "\n" +
			`{"k":"tenant","id":"t2","mode":"shared","cold":true,"name":"tenant_2"}` + "\n", "",
			[]Tenant{{ID: "t1", Mode: "dedicated"}, {ID: "t2", Mode: "shared", Cold: true, Name: "tenant_2"}}},
		{"both: run.tenants then a tenant record", runLine + "\n" + strings.Replace(tenantLine, "t1", "t2", 1) + "\n" + ev,
			`ledger.jsonl:2: field "k": a "tenant" record, but the run record (line 1) lists "tenants": a ledger gives its tenants one way or the other, not both`, nil},
		{"both: an empty run.tenants then a tenant record", strings.Replace(runNoTenants, `"pods"`, `"tenants":[],"pods"`, 1) + "\n" + tenantLine + "\n",
			`ledger.jsonl:2: field "k": a "tenant" record, but the run record (line 1) lists "tenants": a ledger gives its tenants one way or the other, not both`, nil},
		{"neither", runNoTenants + "\n" + ev,
			`ledger.jsonl:1: field "tenants": missing (required for k "run", unless "tenant" records follow it)`, nil},
		{"a tenant record after an ev", runNoTenants + "\n" + tenantLine + "\n" + ev + tenantLine + "\n",
			`ledger.jsonl:4: field "k": a "tenant" record after other records (tenant records come right after the run record)`, nil},
		{"run.tenants, a tenant record after an ev", runLine + "\n" + ev + tenantLine + "\n",
			`ledger.jsonl:3: field "k": a "tenant" record after other records (tenant records come right after the run record)`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, _, err := readString(t, "ledger.jsonl", tc.text)
			if tc.want != "" {
				if err == nil || err.Error() != tc.want {
					t.Fatalf("error = %v\n want %s", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(recs[0].Tenants, tc.tenants) {
				t.Errorf("tenants = %+v, want %+v", recs[0].Tenants, tc.tenants)
			}
			for _, r := range recs {
				if r.K == KindTenant {
					t.Errorf("a tenant record was returned: %+v", r)
				}
			}
			if strings.Contains(tc.text, evLine) && recs[len(recs)-1].K != KindEv {
				t.Errorf("the record after the tenants was lost: %+v", recs)
			}
		})
	}
}

// TestTenantRecordsMerged: shards may give their tenants either way, and the set checks see them
// alike: disjoint tenants unite, a tenant in both shards is refused.
func TestTenantRecordsMerged(t *testing.T) {
	dir := t.TempDir()
	shard := func(k string) string {
		return strings.Replace(runNoTenants, `"target"`, `"shard":{"k":`+k+`,"n":2},"target"`, 1)
	}
	a := writeFile(t, dir, "a.jsonl", strings.Replace(shard("1"), `"pods"`, `"tenants":[{"id":"t1","mode":"dedicated","cold":false}],"pods"`, 1)+"\n")
	b := writeFile(t, dir, "b.jsonl", shard("2")+"\n"+strings.Replace(tenantLine, "t1", "t2", 1)+"\n")
	c := writeFile(t, dir, "c.jsonl", shard("2")+"\n"+tenantLine+"\n")

	r, err := Open(a, b)
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if want := []Tenant{{ID: "t1", Mode: "dedicated"}, {ID: "t2", Mode: "dedicated"}}; !reflect.DeepEqual(hdr.Tenants, want) {
		t.Errorf("merged tenants = %+v, want %+v", hdr.Tenants, want)
	}
	r.Close()

	r, err = Open(a, c)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), `tenant "t1" is also in`) {
		t.Fatalf("overlapping tenants given by a tenant record: error = %v", err)
	}
}

// writeFile writes text to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
