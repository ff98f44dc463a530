package ledger

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// agent writes one shard's ledger: run header (start, shard, tenants), a mutation and a delivery of
// each tenant at the given local times, an audit and an end.
type agent struct {
	name    string
	runID   string
	start   int64
	shard   *Shard
	tenants []string
	audit   *Record // nil: none
	promise bool    // the header promises an audit even without an audit record
	seed    int64
	faults  []Record // written after the mutations
}

func (a agent) write(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, a.name)
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr := Record{K: KindRun, V: 1, RunID: a.runID, Scenario: "s", Seed: a.seed, StartUnixNs: a.start, Budget: ptrF(1e-4),
		Target: "external", Pods: []string{"external"}, Shard: a.shard, Audit: a.audit != nil || a.promise}
	for _, tn := range a.tenants {
		hdr.Tenants = append(hdr.Tenants, Tenant{ID: tn, Mode: "shared"})
	}
	recs := []Record{hdr}
	for _, tn := range a.tenants {
		recs = append(recs,
			Record{K: KindMut, MID: tn + ".1", Tenant: tn, Op: "write", Path: "/" + tn, IntendedT: 100, T: 110, DoneT: 200, Res: ResOK, Pod: "external"},
			Record{K: KindEv, Consumer: tn + "/c1", Tenant: tn, Conn: "1", T: 300, Seq: 1, Op: "write", Path: "/" + tn, Pod: "external"})
	}
	recs = append(recs, a.faults...)
	for _, tn := range a.tenants {
		recs = append(recs, Record{K: KindConsumer, Consumer: tn + "/c1", Tenant: tn, FromT: 10, ToT: 400, FinalCursor: 1, Durable: true})
	}
	if a.audit != nil {
		recs = append(recs, *a.audit)
	}
	recs = append(recs, Record{K: KindEnd, T: 500, Drained: true})
	writeAll(t, w, recs)
	return path
}

func sh(k, n int) *Shard { return &Shard{K: k, N: n} }

func okAudit(tenants, rows int64) *Record {
	return &Record{K: KindAudit, T: 450, OK: true, AuditTenants: tenants, Rows: rows}
}

// TestShardSet: a complete set of shards merges into one run; a set with a shard missing or given
// twice, ledgers of different runs or overlapping tenants is refused with the file named.
func TestShardSet(t *testing.T) {
	three := func(mod func(a []agent)) []agent {
		a := []agent{
			{name: "s1.jsonl", runID: "r", start: 1_000, shard: sh(1, 3), tenants: []string{"t1", "t4"}},
			{name: "s2.jsonl.gz", runID: "r", start: 3_000, shard: sh(2, 3), tenants: []string{"t2"}},
			{name: "s3.jsonl", runID: "r", start: 2_000, shard: sh(3, 3), tenants: []string{"t3"}},
		}
		if mod != nil {
			mod(a)
		}
		return a
	}
	tests := []struct {
		name      string
		agents    []agent
		wantFile  int // index of the file the error names (-1: no error)
		wantField string
		wantMsg   string
	}{
		{name: "complete set", agents: three(nil), wantFile: -1},
		{name: "unsharded pair (legacy)", agents: three(func(a []agent) { a[0].shard, a[1].shard, a[2].shard = nil, nil, nil }), wantFile: -1},
		{name: "missing shard", agents: three(nil)[:2], wantFile: 0, wantField: "shard", wantMsg: "missing 3/3"},
		{name: "duplicated shard", agents: three(func(a []agent) { a[2].shard = sh(2, 3) }), wantFile: 2, wantField: "shard", wantMsg: "given twice"},
		{name: "different runs", agents: three(func(a []agent) { a[1].runID = "other" }), wantFile: 1, wantField: "run_id", wantMsg: "different runs"},
		{name: "different seeds", agents: three(func(a []agent) { a[2].seed = 9 }), wantFile: 2, wantField: "seed", wantMsg: "different runs"},
		{name: "different shard counts", agents: three(func(a []agent) { a[1].shard = sh(2, 4) }), wantFile: 1, wantField: "shard", wantMsg: "different runs"},
		{name: "sharded beside unsharded", agents: three(func(a []agent) { a[2].shard = nil }), wantFile: 2, wantField: "shard", wantMsg: "no shard differs"},
		{name: "overlapping tenants", agents: three(func(a []agent) { a[2].tenants = []string{"t3", "t4"} }), wantFile: 2, wantField: "tenants", wantMsg: `tenant "t4" is also in`},
		{name: "a shard alone", agents: three(nil)[1:2], wantFile: 0, wantField: "shard", wantMsg: "alone is not the run"},
		{name: "shard 1/1 alone", agents: three(func(a []agent) { a[0].shard = sh(1, 1) })[:1], wantFile: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for _, a := range tt.agents {
				paths = append(paths, a.write(t, dir))
			}
			r, err := Open(paths...)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var recs []Record
			for {
				rec, err2 := r.Next()
				if err2 != nil {
					if err2.Error() != "EOF" {
						err = err2
					}
					break
				}
				recs = append(recs, *rec)
			}
			if tt.wantFile < 0 {
				if err != nil {
					t.Fatalf("error = %v, want the set accepted", err)
				}
				if len(paths) > 1 && recs[0].Shard != nil {
					t.Errorf("merged header has shard %+v, want none (the merged run is the whole run)", recs[0].Shard)
				}
				if recs[len(recs)-1].K != KindEnd {
					t.Errorf("last record %q, want the merged end", recs[len(recs)-1].K)
				}
				return
			}
			var le *LineError
			if !errors.As(err, &le) || le.File != paths[tt.wantFile] || le.Field != tt.wantField || !strings.Contains(le.Msg, tt.wantMsg) {
				t.Fatalf("error = %v, want %s field %q containing %q", err, paths[tt.wantFile], tt.wantField, tt.wantMsg)
			}
		})
	}
}

// TestShardClocksAligned: each agent's times count from its own start; merged, they count from the
// earliest start, so records of different agents sort by when they happened.
func TestShardClocksAligned(t *testing.T) {
	dir := t.TempDir()
	a := agent{name: "a.jsonl", runID: "r", start: 10_000, shard: sh(1, 2), tenants: []string{"ta"}}.write(t, dir)
	b := agent{name: "b.jsonl", runID: "r", start: 10_250, shard: sh(2, 2), tenants: []string{"tb"}}.write(t, dir)
	r, err := Open(b, a)
	if err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, r)
	if recs[0].StartUnixNs != 10_000 {
		t.Errorf("merged start_unix_ns = %d, want the earliest, 10000", recs[0].StartUnixNs)
	}
	got := map[string]Record{}
	for _, rec := range recs {
		got[rec.K+" "+rec.Tenant] = rec
	}
	for _, c := range []struct {
		key       string
		t, doneT  int64
		from, to  int64
		intendedT int64
	}{
		{key: "mut ta", t: 110, doneT: 200, intendedT: 100},
		{key: "mut tb", t: 360, doneT: 450, intendedT: 350},
		{key: "ev ta", t: 300},
		{key: "ev tb", t: 550},
		{key: "consumer tb", from: 260, to: 650},
		{key: "end ", t: 750},
	} {
		rec := got[c.key]
		if rec.T != c.t || rec.DoneT != c.doneT || rec.IntendedT != c.intendedT || rec.FromT != c.from || rec.ToT != c.to {
			t.Errorf("%s: t %d done_t %d intended_t %d from_t %d to_t %d, want %d %d %d %d %d", c.key,
				rec.T, rec.DoneT, rec.IntendedT, rec.FromT, rec.ToT, c.t, c.doneT, c.intendedT, c.from, c.to)
		}
	}
	// the run phase is in time order across the two files
	var last int64
	for _, rec := range recs[1:] {
		if IsPostRun(rec.K) {
			break
		}
		if k := orderKey(&rec); k < last {
			t.Errorf("run-phase record %s %s at %d after one at %d", rec.K, rec.Tenant, k, last)
		} else {
			last = k
		}
	}
}

// TestShardAudits: the merged run has one audit, ok only when every agent that promised or made an
// audit has a successful one; tenants and rows add up.
func TestShardAudits(t *testing.T) {
	failed := &Record{K: KindAudit, T: 450, OK: false, AuditTenants: 0, Rows: 0, Error: "table gone"}
	tests := []struct {
		name    string
		audits  [2]*Record
		promise [2]bool // header says audit: true without any audit record
		want    *Record // nil: no merged audit
	}{
		{name: "both ok", audits: [2]*Record{okAudit(2, 10), okAudit(1, 4)}, want: &Record{OK: true, AuditTenants: 3, Rows: 14}},
		{name: "one failed", audits: [2]*Record{okAudit(2, 10), failed}, want: &Record{OK: false, AuditTenants: 2, Rows: 10, Error: "b.jsonl: table gone"}},
		{name: "one promised none", audits: [2]*Record{okAudit(2, 10), nil}, promise: [2]bool{false, true}, want: &Record{OK: false, AuditTenants: 2, Rows: 10, Error: "b.jsonl: no audit record"}},
		{name: "no audit", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for i, name := range []string{"a.jsonl", "b.jsonl"} {
				a := agent{name: name, runID: "r", shard: sh(i+1, 2), tenants: []string{name[:1]}, audit: tt.audits[i], promise: tt.promise[i]}
				paths = append(paths, a.write(t, dir))
			}
			r, err := Open(paths...)
			if err != nil {
				t.Fatal(err)
			}
			var audits []Record
			for _, rec := range readAll(t, r) {
				if rec.K == KindAudit {
					audits = append(audits, rec)
				}
			}
			if tt.want == nil {
				if len(audits) != 0 {
					t.Fatalf("audits = %+v, want none", audits)
				}
				return
			}
			if len(audits) != 1 {
				t.Fatalf("audits = %+v, want one merged audit", audits)
			}
			got := audits[0]
			if got.OK != tt.want.OK || got.AuditTenants != tt.want.AuditTenants || got.Rows != tt.want.Rows || !strings.Contains(got.Error, filepath.Join(dir, tt.want.Error)) && tt.want.Error != "" {
				t.Errorf("merged audit = ok %v tenants %d rows %d error %q, want %+v", got.OK, got.AuditTenants, got.Rows, got.Error, *tt.want)
			}
		})
	}
}

// TestShardFieldInvalid: a shard field that is not 1 <= k <= n <= MaxShards is unusable, named.
func TestShardFieldInvalid(t *testing.T) {
	for _, tt := range []struct{ shard, want string }{
		{`{"k":0,"n":3}`, "1 <= K <= N"},
		{`{"k":4,"n":3}`, "got k 4 n 3"},
		{`{"k":1,"n":100000}`, "N <= 1024"},
		{`{"k":"a","n":"b"}`, `want object {"k","n"}`},
		{`[1,3]`, `want object {"k","n"}`},
	} {
		line := strings.Replace(runLine, `"target":"eventlogd"`, `"target":"eventlogd","shard":`+tt.shard, 1)
		_, _, err := readString(t, "x.jsonl", line+"\n")
		var le *LineError
		if !errors.As(err, &le) || le.Field != "shard" || le.Line != 1 || !strings.Contains(le.Msg, tt.want) {
			t.Errorf("shard %s: error = %v, want line 1 field shard containing %q", tt.shard, err, tt.want)
		}
	}
}

// TestShardOwnTenantRecords: a shard's tenant records (large runs) declare tenants as its run
// record's list does: its later records of such a tenant are its own; a tenant record naming
// another file's tenant is refused, and so is a record of a tenant no one declared.
func TestShardOwnTenantRecords(t *testing.T) {
	r := &Reader{}
	a := &source{name: "a.jsonl", r: r, declared: map[string]bool{"t1": true}}
	b := &source{name: "b.jsonl", r: r, declared: map[string]bool{"t2": true}}
	r.owner = map[string]*source{"t1": a, "t2": b}
	steps := []struct {
		src     *source
		rec     Record
		wantErr string
	}{
		{b, Record{K: KindEv, Tenant: "t2"}, ""},
		{b, Record{K: KindEv, Tenant: "t3"}, `tenant "t3" is not declared`},
		{b, Record{K: tenantKind, ID: "t3"}, ""},
		{b, Record{K: KindEv, Tenant: "t3"}, ""},
		{a, Record{K: KindEv, Tenant: "t3"}, `tenant "t3" is not declared by this ledger's run record (it is b.jsonl's)`},
		{a, Record{K: tenantKind, ID: "t3"}, `tenant "t3" is also in b.jsonl`},
		{a, Record{K: KindFault, Target: "t2"}, `tenant "t2" is not declared`},
		{a, Record{K: KindFault, Target: "pod-1"}, ""},
	}
	for i, st := range steps {
		err := st.src.checkOwnTenant(&st.rec)
		switch {
		case st.wantErr == "" && err != nil:
			t.Errorf("step %d (%s %+v): %v, want accepted", i, st.src.name, st.rec.K, err)
		case st.wantErr != "" && (err == nil || !strings.Contains(err.Error(), st.wantErr)):
			t.Errorf("step %d (%s %s): %v, want %q", i, st.src.name, st.rec.K, err, st.wantErr)
		}
	}
}

// TestShardFaultOwner: each agent of a sharded run records the fault agent 1 injected, and the merge
// keeps agent 1's records only: one fault, not one per agent.
func TestShardFaultOwner(t *testing.T) {
	dir := t.TempDir()
	fault := func(by int, start, stop int64) []Record {
		return []Record{{K: KindFault, ID: "f001", Kind: "consumer_disconnect", Target: "tenant_1", Phase: "start", T: start, InjectedBy: by},
			{K: KindFault, ID: "f001", Kind: "consumer_disconnect", Target: "tenant_1", Phase: "stop", T: stop, InjectedBy: by}}
	}
	a := agent{name: "a.jsonl", runID: "r", start: 10_000, shard: sh(1, 2), tenants: []string{"ta"}, faults: fault(1, 250, 260)}.write(t, dir)
	b := agent{name: "b.jsonl", runID: "r", start: 10_100, shard: sh(2, 2), tenants: []string{"tb"}, faults: fault(1, 150, 160)}.write(t, dir)
	count := func(recs []Record) (n int, ts []int64) {
		for _, rec := range recs {
			if rec.K == KindFault {
				n++
				ts = append(ts, rec.T)
			}
		}
		return n, ts
	}
	r, err := Open(b, a)
	if err != nil {
		t.Fatal(err)
	}
	if n, ts := count(readAll(t, r)); n != 2 || ts[0] != 250 || ts[1] != 260 {
		t.Errorf("merged: %d fault records at %v, want agent 1's two at 250 and 260", n, ts)
	}
	// A fault another agent did not record is kept: the merge drops only the copies.
	c := agent{name: "c.jsonl", runID: "r2", start: 10_000, shard: sh(1, 2), tenants: []string{"ta"}, faults: fault(1, 250, 260)}.write(t, dir)
	d := agent{name: "d.jsonl", runID: "r2", start: 10_000, shard: sh(2, 2), tenants: []string{"tb"}}.write(t, dir)
	r, err = Open(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := count(readAll(t, r)); n != 2 {
		t.Errorf("merged without copies: %d fault records, want 2", n)
	}
}
