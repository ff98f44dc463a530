package run

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt from this run")

// goldenScenario is short and deterministic in everything but timing: one dedicated and one shared
// pair of hot tenants, one cold tenant, 2 pods, 2 consumers per tenant, ops that need no existing
// file (so every mutation's op and path follow from the seed alone) and one DB latency fault on a
// fixed target (its records and params follow from the scenario alone). The pods' event inserts may
// take 30 s: a machine that stalls for the default 2 s would time one out after the row committed,
// and its retry would write the event twice (at-least-once, as design 000 allows), which changes the
// ledger without any change of code.
const goldenScenario = `name: golden
seed: 7
duration: 5s
drain_timeout: 20s
tenants:
  - {group: hot, count: 1}
  - {group: pair, count: 2, mode: shared}
  - {group: cold, count: 1, cold: true}
pods:
  count: 2
  eventlogd:
    flags: {event-insert-timeout: 30s}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 10, mix: {write: 8, mkdir: 2}}
  - {tenants: pair, executor: constant-arrival-rate, rate: 10, duration: 4s, mix: {write: 1}}
consumers:
  - {count: 2}
faults:
  - {at: 1s, for: 2s, kind: tenant_db_latency, target: tenant_1, params: {latency: 20ms}}
thresholds:
  duplicates: ["== 0"]
`

// TestGoldenLedger runs goldenScenario and compares the ledger, normalised (see normalise), with
// testdata/golden.txt, which was captured from the code before the run became a list of phases:
// the refactor keeps the ledger the same, record kind by record kind. `go test ./harness/run -run
// Golden -update` rewrites the file (only when the ledger is meant to change).
func TestGoldenLedger(t *testing.T) {
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	sc, err := scenario.Parse("golden.yaml", []byte(goldenScenario))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Run(context.Background(), Options{Scenario: sc, Dir: dir, Eventlogd: eventlogdBin, Log: testWriter{t}, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	noChildren(t)
	recs := readLedger(t, res.Ledger)
	checkLoadOrigin(t, recs, res.LoadStartSeconds)
	got, err := normalise(recs)
	if err != nil {
		t.Fatal(err)
	}
	s := verify(t, res.Ledger)
	got += fmt.Sprintf("verdict %s failed %v\n", s.Verdict, s.FailedChecks)
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	got += normaliseResult(t, b)

	golden := filepath.Join("testdata", "golden.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the normalised ledger differs from %s:\n%s", golden, lineDiff(string(want), got))
	}
}

// checkLoadOrigin holds the two clocks of a run together: the scenario's fault at: 1s counts from the
// load's start, so its start record is at 1s + LoadStartSeconds on the ledger's clock (plus the time
// the injection takes), and the first arrival's intended time is within the first interval (100 ms at
// 10/s) of the load's start.
func checkLoadOrigin(t *testing.T, recs []ledger.Record, loadStart float64) {
	t.Helper()
	if loadStart <= 0 {
		t.Fatalf("load_start_s %v: the load cannot start at the ledger's origin (the run record and the pods come first)", loadStart)
	}
	firstIntended, faultAt := int64(-1), int64(-1)
	for _, r := range recs {
		if r.K == ledger.KindMut && (firstIntended < 0 || r.IntendedT < firstIntended) {
			firstIntended = r.IntendedT
		}
		if r.K == ledger.KindFault && r.Phase == "start" && faultAt < 0 {
			faultAt = r.T
		}
	}
	if d := float64(faultAt)/1e9 - 1 - loadStart; d < 0 || d > 1 {
		t.Errorf("the fault at: 1s started at %.3fs of the ledger, %.3fs after 1s + load_start_s (%.3fs)", float64(faultAt)/1e9, d, loadStart)
	}
	if d := float64(firstIntended)/1e9 - loadStart; d < 0 || d > 0.1 {
		t.Errorf("the first arrival is intended at %.3fs of the ledger, %.3fs after the load's start (%.3fs)", float64(firstIntended)/1e9, d, loadStart)
	}
}

func readLedger(t *testing.T, path string) []ledger.Record {
	t.Helper()
	r, err := ledger.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []ledger.Record
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		recs = append(recs, *rec)
	}
	return recs
}

// verify judges the run's ledger at path as seqgate verify would; a ledger that does not open or
// verify fails the test.
func verify(t *testing.T, path string) *verifier.Summary {
	t.Helper()
	r, err := ledger.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := verifier.Verify(r, verifier.Options{})
	if err != nil {
		t.Fatalf("the run's ledger %s is not verifiable: %v", path, err)
	}
	return s
}

// normaliseResult keeps result.json's deterministic fields (offered follows from the scenario).
func normaliseResult(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		switch k {
		case "run_id", "load_seconds", "load_start_s", "wall_seconds", "tenants", "listing_seconds", "cpu":
			out = append(out, k+"=<set>") // present, value timing-dependent (run_id is in the run line; tenants holds the service's ids)
		default:
			out = append(out, fmt.Sprintf("%s=%v", k, m[k]))
		}
	}
	return "result " + strings.Join(out, " ") + "\n"
}

var runIDRe = regexp.MustCompile(`^([a-z0-9_-]+)-\d{8}T\d{6}$`)

// volatile lists, per kind, the fields whose values depend on timing (clocks, process ids, the
// order concurrent requests commit in, round-robin pod choice across tenants). They are checked to
// be present or absent as in the golden file, but their values are not compared.
var volatile = map[string][]string{
	"run":       {"start_unix_ns", "provenance"},
	"pod":       {"t", "pid"},
	"fault":     {"t"},
	"mut":       {"t", "intended_t", "done_t", "pod"},
	"ev":        {"t", "seq", "conn"},
	"reset":     {"t", "seq", "conn"},
	"conn":      {"t", "conn"},
	"metric":    {"t", "value", "labels"},
	"proxy":     {"t", "conns", "bytes_up", "bytes_down"},
	"persisted": {"seq", "created_unix_ns"},
	"consumer":  {"from_t", "to_t", "first_since"},
	"end":       {"t", "load_avg", "load_t"},
	"audit":     {"t"},
	"resync":    {"t", "t_start", "conn"},
	"listed":    {"t"},
}

// normalise turns a ledger into text that is the same for two runs of goldenScenario by the same
// harness: tenant ids become tenant_<index> and the run id <scenario>-<time>; volatile fields are
// replaced by <set>; then, kind by kind:
//   - run, audit, end: the record;
//   - pod: each pod's records in ledger order; fault: every record in ledger order;
//   - mut, persisted, consumer, reset, conn, resync, listed: every record, sorted;
//   - ev: per consumer, the count and a hash of the sorted records;
//   - metric: the set of (pod, name); proxy: the set of (name, tenant) (their counts follow the clock);
//   - the order of kinds at the head of the ledger (run, then the pod records held back) and at its
//     tail (from the first pod exit: pod exits, persisted, consumer summaries, end);
//   - the number of records of every kind whose count does not depend on timing.
func normalise(recs []ledger.Record) (string, error) {
	if len(recs) == 0 || recs[0].K != ledger.KindRun {
		return "", fmt.Errorf("the ledger does not start with a run record")
	}
	run := recs[0]
	m := runIDRe.FindStringSubmatch(run.RunID)
	if m == nil || m[1] != run.Scenario {
		return "", fmt.Errorf("run_id %q is not <scenario>-<time>", run.RunID)
	}
	var pairs []string
	pairs = append(pairs, run.RunID, m[1]+"-<time>")
	for i, tn := range run.Tenants {
		pairs = append(pairs, tn.ID, fmt.Sprintf("tenant_%d", i+1))
	}
	repl := strings.NewReplacer(pairs...)
	shared := map[string]bool{}
	for _, tn := range run.Tenants {
		shared[tn.ID] = tn.Mode == "shared"
	}

	canon := make([]map[string]any, len(recs))
	for i := range recs {
		b, err := json.Marshal(&recs[i])
		if err != nil {
			return "", err
		}
		b = []byte(repl.Replace(string(b)))
		var obj map[string]any
		if err := json.Unmarshal(b, &obj); err != nil {
			return "", err
		}
		for _, f := range volatile[recs[i].K] {
			if _, ok := obj[f]; ok {
				obj[f] = "<set>"
			}
		}
		// Tenants of one shared pool draw their seqs from one sequence: how far a consumer's cursor
		// got depends on how the pool's tenants' commits interleaved.
		if _, ok := obj["final_cursor"]; ok && recs[i].K == ledger.KindConsumer && shared[recs[i].Tenant] {
			obj["final_cursor"] = "<set>"
		}
		canon[i] = obj
	}
	str := func(obj map[string]any) string {
		var b strings.Builder
		enc := json.NewEncoder(&b) // map keys come out sorted
		enc.SetEscapeHTML(false)
		_ = enc.Encode(obj)
		return strings.TrimSuffix(b.String(), "\n")
	}

	var out strings.Builder
	byKind := map[string][]string{}
	count := map[string]int{}
	podSeq := map[string][]string{}
	evs := map[string][]string{}
	metrics := map[string]bool{}
	proxies := map[string]bool{}
	firstExit := -1
	for i, r := range recs {
		count[r.K]++
		s := str(canon[i])
		switch r.K {
		case ledger.KindRun, ledger.KindEnd, ledger.KindFault:
			byKind[r.K] = append(byKind[r.K], s)
		case ledger.KindPod:
			podSeq[r.Pod] = append(podSeq[r.Pod], s)
			if r.Phase == "exit" && firstExit < 0 {
				firstExit = i
			}
		case ledger.KindEv:
			evs[repl.Replace(r.Consumer)] = append(evs[repl.Replace(r.Consumer)], s)
		case ledger.KindMetric:
			metrics[r.Pod+" "+repl.Replace(r.Name)] = true
		case ledger.KindProxy:
			proxies[fmt.Sprintf("%s tenant=%q", repl.Replace(r.Name), repl.Replace(r.Tenant))] = true
		default:
			byKind[r.K] = append(byKind[r.K], s)
		}
	}

	head := []string{}
	for _, r := range recs {
		if r.K != ledger.KindRun && r.K != ledger.KindPod {
			break
		}
		head = append(head, r.K)
	}
	fmt.Fprintf(&out, "head %s\n", runLength(head))
	if firstExit < 0 {
		return "", fmt.Errorf("no pod exit record")
	}
	var tail []string
	for _, r := range recs[firstExit:] {
		tail = append(tail, r.K)
	}
	fmt.Fprintf(&out, "tail %s\n", runLength(tail))

	kinds := make([]string, 0, len(count))
	for k := range count {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		switch k {
		case ledger.KindMetric, ledger.KindProxy:
			fmt.Fprintf(&out, "count %s present\n", k)
		default:
			fmt.Fprintf(&out, "count %s %d\n", k, count[k])
		}
	}
	for _, k := range []string{ledger.KindRun, ledger.KindFault} {
		for _, s := range byKind[k] {
			fmt.Fprintf(&out, "%s\n", s)
		}
	}
	for _, p := range sortedKeys(podSeq) {
		for _, s := range podSeq[p] {
			fmt.Fprintf(&out, "%s\n", s)
		}
	}
	for _, k := range []string{ledger.KindConn, ledger.KindReset, ledger.KindResync, ledger.KindListed, ledger.KindMut, ledger.KindPersisted, ledger.KindConsumer} {
		ss := byKind[k]
		sort.Strings(ss)
		for _, s := range ss {
			fmt.Fprintf(&out, "%s\n", s)
		}
	}
	for _, c := range sortedKeys(evs) {
		ss := evs[c]
		sort.Strings(ss)
		h := sha256.Sum256([]byte(strings.Join(ss, "\n")))
		fmt.Fprintf(&out, "ev %s n=%d sha256=%x\n", c, len(ss), h[:8])
	}
	for _, k := range sortedKeys(metrics) {
		fmt.Fprintf(&out, "metric %s\n", k)
	}
	for _, k := range sortedKeys(proxies) {
		fmt.Fprintf(&out, "proxy %s\n", k)
	}
	for _, k := range []string{ledger.KindAudit, ledger.KindEnd} {
		for _, s := range byKind[k] {
			fmt.Fprintf(&out, "%s\n", s)
		}
	}
	for k := range byKind {
		switch k {
		case ledger.KindRun, ledger.KindEnd, ledger.KindFault, ledger.KindConn, ledger.KindReset, ledger.KindMut,
			ledger.KindPersisted, ledger.KindConsumer, ledger.KindAudit, ledger.KindResync, ledger.KindListed:
		default:
			return "", fmt.Errorf("kind %q is not normalised: add it to normalise", k)
		}
	}
	return out.String(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// runLength writes a kind sequence as kind*count runs: "run pod*4".
func runLength(ks []string) string {
	var out []string
	for i := 0; i < len(ks); {
		j := i
		for j < len(ks) && ks[j] == ks[i] {
			j++
		}
		if j-i == 1 {
			out = append(out, ks[i])
		} else {
			out = append(out, fmt.Sprintf("%s*%d", ks[i], j-i))
		}
		i = j
	}
	return strings.Join(out, " ")
}

// lineDiff lists the lines only in want (-) and only in got (+), in order.
func lineDiff(want, got string) string {
	var b strings.Builder
	only := func(a, other []string, sign string) {
		n := map[string]int{}
		for _, l := range other {
			n[l]++
		}
		for _, l := range a {
			if n[l] > 0 {
				n[l]--
				continue
			}
			fmt.Fprintf(&b, "%s %s\n", sign, l)
		}
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	only(w, g, "-")
	only(g, w, "+")
	return b.String()
}

// TestNormalise is the golden comparison's own control: timing does not change the normalised text,
// anything the golden test claims to compare does.
func TestNormalise(t *testing.T) {
	code0 := 0
	base := func() []ledger.Record {
		return []ledger.Record{
			{K: ledger.KindRun, V: 1, RunID: "g-20261130T230000", Scenario: "g", Seed: 7, StartUnixNs: 1,
				Tenants: []ledger.Tenant{{ID: "abc", Mode: "dedicated"}, {ID: "def", Mode: "shared"}}, Pods: []string{"pod-1"}},
			{K: ledger.KindPod, Pod: "pod-1", Phase: "start", PID: 10, T: 1},
			{K: ledger.KindPod, Pod: "pod-1", Phase: "ready", PID: 10, T: 2},
			{K: ledger.KindMut, MID: "t1.b0.0", Tenant: "abc", Op: "write", Path: "/seqgate/g-20261130T230000/abc/t1.b0.0", Res: "ok", Status: 200, T: 5, Pod: "pod-1"},
			{K: ledger.KindFault, ID: "f001", Kind: "tenant_db_latency", Target: "tenant_1", Phase: "start", T: 6},
			{K: ledger.KindEv, Consumer: "abc/c1", Tenant: "abc", Path: "/seqgate/g-20261130T230000/abc/t1.b0.0", Seq: 1, T: 7},
			{K: ledger.KindMetric, Pod: "pod-1", Name: "m", Value: 3, T: 8},
			{K: ledger.KindProxy, Name: "abc", Tenant: "abc", Conns: 2, T: 8},
			{K: ledger.KindFault, ID: "f001", Kind: "tenant_db_latency", Target: "tenant_1", Phase: "stop", T: 9},
			{K: ledger.KindPod, Pod: "pod-1", Phase: "exit", PID: 10, T: 10, Code: &code0},
			{K: ledger.KindPersisted, Tenant: "abc", Seq: 1, Path: "/seqgate/g-20261130T230000/abc/t1.b0.0", Op: "write", CreatedUnixNs: 3},
			{K: ledger.KindConsumer, Consumer: "abc/c1", Tenant: "abc", FinalCursor: 1, Durable: true, FromT: 1, ToT: 11},
			{K: ledger.KindConsumer, Consumer: "def/c1", Tenant: "def", FinalCursor: 4, Durable: true, FromT: 1, ToT: 11},
			{K: ledger.KindEnd, Drained: true, T: 12},
		}
	}
	want, err := normalise(base())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		edit   func([]ledger.Record) []ledger.Record
		differ bool
	}{
		{"other times, pids, ids and sample values", func(r []ledger.Record) []ledger.Record {
			for i := range r {
				if r[i].T != 0 {
					r[i].T += 1000
				}
				if r[i].PID != 0 {
					r[i].PID += 5
				}
			}
			r[0].RunID, r[0].StartUnixNs = "g-20261201T010203", 99
			r[0].Tenants[0].ID = "xyz"
			r[3].Tenant, r[3].Path, r[3].Pod = "xyz", "/seqgate/g-20261201T010203/xyz/t1.b0.0", "pod-2"
			r[5].Consumer, r[5].Tenant, r[5].Path, r[5].Seq = "xyz/c1", "xyz", "/seqgate/g-20261201T010203/xyz/t1.b0.0", 8
			r[6].Value, r[7].Conns, r[7].Name, r[7].Tenant = 9, 7, "xyz", "xyz"
			r[10].Tenant, r[10].Path, r[10].Seq = "xyz", "/seqgate/g-20261201T010203/xyz/t1.b0.0", 8
			r[11].Consumer, r[11].Tenant, r[11].ToT = "xyz/c1", "xyz", 5
			r[12].FinalCursor = 5 // a shared tenant's cursor depends on its pool-mates
			return r
		}, false},
		{"a mutation's op", func(r []ledger.Record) []ledger.Record { r[3].Op = "mkdir"; return r }, true},
		{"a mutation's result", func(r []ledger.Record) []ledger.Record { r[3].Res = "err"; return r }, true},
		{"the seed", func(r []ledger.Record) []ledger.Record { r[0].Seed = 8; return r }, true},
		{"a tenant's mode", func(r []ledger.Record) []ledger.Record { r[0].Tenants[1].Mode = "dedicated"; return r }, true},
		{"a fault record missing", func(r []ledger.Record) []ledger.Record { return append(r[:8:8], r[9:]...) }, true},
		{"a fault's target", func(r []ledger.Record) []ledger.Record { r[4].Target = "tenant_2"; return r }, true},
		{"pod records reordered", func(r []ledger.Record) []ledger.Record { r[1], r[2] = r[2], r[1]; return r }, true},
		{"an ev's path", func(r []ledger.Record) []ledger.Record { r[5].Path += "x"; return r }, true},
		{"a dedicated tenant's final cursor", func(r []ledger.Record) []ledger.Record { r[11].FinalCursor = 2; return r }, true},
		{"a metric family", func(r []ledger.Record) []ledger.Record { r[6].Name = "n"; return r }, true},
		{"the drain", func(r []ledger.Record) []ledger.Record { r[13].Drained = false; return r }, true},
		{"persisted before the pod exit", func(r []ledger.Record) []ledger.Record { r[9], r[10] = r[10], r[9]; return r }, true},
		{"an exit code", func(r []ledger.Record) []ledger.Record { one := 1; r[9].Code = &one; return r }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := normalise(tc.edit(base()))
			if err != nil {
				t.Fatal(err)
			}
			if (got != want) != tc.differ {
				t.Errorf("differs %v, want %v:\n%s", got != want, tc.differ, lineDiff(want, got))
			}
		})
	}
	if _, err := normalise(append(base(), ledger.Record{K: "drop", Tenant: "abc"})); err == nil {
		t.Error("a kind the normaliser does not know passed")
	}
}
