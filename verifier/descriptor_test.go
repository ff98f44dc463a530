package verifier

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/verifier/synth"
)

// updateDocs rewrites the generated tables of docs/verify.md and docs/thresholds.md, and the
// threshold package's path lists, from the descriptors and the Summary type:
// go test ./verifier/ -run 'TestDocsTables|TestPathsMatchSummary|TestStatAndWindowPathsMatchTypes' -update
var updateDocs = flag.Bool("update", false, "rewrite the docs' generated tables and threshold/paths.go")

// notChecks are the summary numbers no check computes: what the verifier read and the budget it
// judged against.
var notChecks = []string{"records", "budget"}

// anomalySummary verifies a synthetic ledger with anomalies of every kind the generator makes.
func anomalySummary(t *testing.T) *Summary {
	t.Helper()
	return verifyText(t, synthText(t, synth.Config{Seed: 5, Tenants: 4, ConsumersPerTenant: 2, Events: 3000, Cold: 1,
		Lost: 2, Silent: 2, CrashLoss: 1, Skipped: 2, Undelivered: 2, Duplicates: 2, Leaks: 1, Unexpected: 2,
		Reorder: 2, Recovered: 2, SeqTooOld: 2, SpuriousResets: 1, ColdWakeups: 1, SeqMismatch: 2}), Options{})
}

// covers reports whether pattern (a path, "x.<key>" for any key, "x.*" for every field below)
// names path.
func covers(pattern, path string) bool {
	if pattern == path {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, ".*"); ok {
		return strings.HasPrefix(path, base+".")
	}
	return false
}

// TestEveryNumberHasADescriptor: each numeric leaf of the Summary is the number of some check's
// descriptor or among what its checker covers; a count added to the summary without a descriptor
// fails here.
func TestEveryNumberHasADescriptor(t *testing.T) {
	var leaves []string
	walkPaths(reflect.TypeFor[Summary](), "", &leaves)
	for _, p := range leaves {
		if slices.Contains(notChecks, p) {
			continue
		}
		found := false
		for _, d := range checks {
			if d.Path == p || slices.ContainsFunc(d.Covers, func(c string) bool { return covers(c, p) }) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("summary number %s has no descriptor: declare one in its check's file and add it to checks (checks.go)", p)
		}
	}
}

// TestDescriptorsAreWellFormed: names are unique, every file exists, every check_*.go has a
// descriptor, each descriptor's Value reads its Path in the summary JSON, and each gateFails check has a
// bound the verdict applies.
func TestDescriptorsAreWellFormed(t *testing.T) {
	s := anomalySummary(t)
	doc := summaryDoc(s)
	names := map[string]bool{}
	files := map[string]bool{}
	for _, d := range checks {
		if names[d.Name] {
			t.Errorf("two descriptors named %s", d.Name)
		}
		names[d.Name] = true
		files[d.File] = true
		if _, err := os.Stat(d.File); err != nil {
			t.Errorf("%s: file %s: %v", d.Name, d.File, err)
		}
		if (d.Path == "") != (d.Value == nil) {
			t.Errorf("%s: a Path needs a Value and a Value a Path", d.Name)
		}
		if d.Value != nil {
			if got, want := d.Value(s), measure(doc, d.Path); got != want {
				t.Errorf("%s: Value = %v, the summary's %s = %v", d.Name, got, d.Path, want)
			}
		}
		if d.Gate == gateFails && d.Value == nil {
			t.Errorf("%s fails the verdict but has no number", d.Name)
		}
		if d.Per != nil && d.Gate != gateFails {
			t.Errorf("%s: a breakdown (Per) is shown for failed checks only", d.Name)
		}
	}
	matches, _ := filepath.Glob("check_*.go")
	for _, f := range matches {
		if !strings.HasSuffix(f, "_test.go") && !files[f] {
			t.Errorf("%s declares no descriptor in checks", f)
		}
	}
	// Every witness list the checkers filled belongs to a descriptor, except the lists that are not
	// one witness per instance of a number.
	extra := []WitnessKey{WitnessDropsByTenant, WitnessReconnects}
	for key := range s.Witnesses {
		if _, ok := WitnessCount(s, WitnessKey(key)); !ok && !slices.Contains(extra, WitnessKey(key)) {
			t.Errorf("witnesses %q belong to no descriptor", key)
		}
	}
	for _, d := range checks {
		if d.Anomaly && d.Value(s) == 0 && d.Witness != "" && len(s.Witnesses[string(d.Witness)]) > 0 {
			t.Errorf("%s: witnesses but a count of 0", d.Name)
		}
	}
}

// TestNeedsAuditFollowsDescriptors: the audit-derived numbers are those of checks that need the
// audit, with every path below them; others are judged without it.
func TestNeedsAuditFollowsDescriptors(t *testing.T) {
	tests := []struct {
		field string
		want  bool
	}{
		{"lost", true}, {"lost_by_reason.crash", true}, {"event_loss_fraction", true}, {"loss_upper_95", true},
		{"skipped", true}, {"undelivered", true}, {"reset_covered", true}, {"spurious_resets", true},
		{"seq_mismatch", true}, {"unresolved", true}, {"projection.fraction", true}, {"audit.rows", true},
		{"structural.both", true}, {"batch_torn", true},
		{"duplicates", false}, {"leaks", false}, {"latency_ms.p99", false}, {"batches", false},
		{"dropped_fraction", false}, {"cold_wakeups", false}, {"recovery_max_ms", false}, {"acked", false},
	}
	for _, tc := range tests {
		if got := needsAudit(tc.field); got != tc.want {
			t.Errorf("needsAudit(%s) = %v, want %v", tc.field, got, tc.want)
		}
	}
}

// TestChecksOrder: the gateFails checks come in the summary's order of checks and the report-only ones
// in JUnit's, as they always have (golden outputs and scripts read them in that order).
func TestChecksOrder(t *testing.T) {
	var fails, reported []string
	for _, d := range checks {
		if d.Gate == gateFails {
			fails = append(fails, d.Name)
		}
		if d.Report != nil {
			reported = append(reported, d.Name)
		}
	}
	wantFails := []string{CheckLossBudget, CheckSilent, CheckSkipped, CheckLeaks, CheckUndelivered, CheckColdWakeups,
		CheckStructural, CheckBatchAtomicity, CheckDroppedFraction}
	wantReported := []string{"confidence", "recovered", "reset_covered", "spurious_resets", "duplicates", "unexpected",
		"seq_mismatch", "unresolved", "load", "audit", "recovery", "latency", "issue_latency", "reorder", "reconnects", "projection"}
	if len(fails) < len(wantFails) || !slices.Equal(fails[:len(wantFails)], wantFails) {
		t.Errorf("failing checks in order %v, want %v first", fails, wantFails)
	}
	if len(reported) < len(wantReported) || !slices.Equal(reported[:len(wantReported)], wantReported) {
		t.Errorf("report-only checks in order %v, want %v first", reported, wantReported)
	}
}

// TestDocsTables: the checks table of docs/verify.md and the check numbers table of
// docs/thresholds.md are the descriptors' (-update rewrites them).
func TestDocsTables(t *testing.T) {
	for _, c := range []struct{ file, table string }{
		{"../docs/verify.md", checksTable()},
		{"../docs/thresholds.md", numbersTable()},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := replaceGenerated(string(b), c.table)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if got == string(b) {
			continue
		}
		if *updateDocs {
			if err := os.WriteFile(c.file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: the generated table is not the descriptors'; run go test ./verifier/ -run TestDocsTables -update", c.file)
	}
}

// TestThresholdPathsGenerated: threshold/paths.go, the paths a threshold may name, is the Summary
// type's numeric leaves (-update rewrites it), so a number added to the summary is addressable
// without editing a list.
func TestThresholdPathsGenerated(t *testing.T) {
	var b strings.Builder
	b.WriteString("// Code generated by go test ./verifier/ -run TestThresholdPathsGenerated -update; DO NOT EDIT.\n\n")
	b.WriteString("package threshold\n")
	for _, l := range []struct {
		name, doc string
		typ       reflect.Type
	}{
		{"paths", "paths are the numeric leaves of the summary JSON (verifier.Summary); a \".<key>\" suffix stands for any map key.", reflect.TypeFor[Summary]()},
		{"statPaths", "statPaths are the numbers the summary repeats per tenant and per consumer (verifier.Stats): what\n// per_tenant.<id>.<field> and per_consumer.<id>.<field> may name.", reflect.TypeFor[Stats]()},
		{"windowPaths", "windowPaths are the numbers the summary computes per window (verifier.WindowStats): what\n// <field>@<window> may name.", reflect.TypeFor[WindowStats]()},
	} {
		var derived []string
		walkPaths(l.typ, "", &derived)
		slices.Sort(derived)
		b.WriteString("\n// " + l.doc + "\nvar " + l.name + " = []string{\n")
		for _, p := range derived {
			b.WriteString("\t\"" + p + "\",\n")
		}
		b.WriteString("}\n")
	}
	const file = "../threshold/paths.go"
	old, err := os.ReadFile(file)
	if err != nil && !*updateDocs {
		t.Fatal(err)
	}
	if string(old) == b.String() {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is not the Summary type's paths; run go test ./verifier/ -run TestThresholdPathsGenerated -update", file)
}

// TestUnprovenMakesInconclusive: a gateInconclusive check whose Unproven gives a reason keeps the verdict
// from passing (inconclusive, with the reason and a not-judged check), lets a failure stand, and
// leaves a clean verdict alone while it gives none.
func TestUnprovenMakesInconclusive(t *testing.T) {
	probe := &descriptor{Name: "probe", File: "descriptor.go", Path: "duplicates", Gate: gateInconclusive,
		Value: func(s *Summary) float64 { return float64(s.Duplicates) },
		Unproven: func(s *Summary) string {
			if s.Duplicates > 0 {
				return "probe: duplicates could not be proven"
			}
			return ""
		}}
	saved := checks
	checks = append(slices.Clone(checks), probe)
	defer func() { checks = saved }()
	tests := []struct {
		name    string
		e       edit
		verdict string
		why     bool
	}{
		{"clean passes", edit{}, VerdictPass, false},
		{"unproven is inconclusive", edit{after: map[string][]string{"evA1": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":3100000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}}, VerdictInconclusive, true},
		{"a failure stands", edit{drop: []string{"evA2", "persA2"}, after: map[string][]string{"evA1": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":3100000,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`}}}, VerdictFail, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, tc.e.build(), Options{})
			if s.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (duplicates %d, failed %v, why %v)", s.Verdict, tc.verdict, s.Duplicates, s.FailedChecks, s.InconclusiveBecause)
			}
			if got := slices.Contains(s.InconclusiveBecause, "probe: duplicates could not be proven"); got != tc.why {
				t.Errorf("reason listed %v, want %v: %v", got, tc.why, s.InconclusiveBecause)
			}
		})
	}
}
