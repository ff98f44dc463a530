package power

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/harness/child"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/reference-impl/defect"
)

func TestCaught(t *testing.T) {
	for _, c := range []struct {
		expect, failed []string
		want           bool
	}{
		{[]string{"skipped"}, []string{"undelivered", "skipped"}, true},
		{[]string{"skipped"}, []string{"undelivered"}, false},
		{[]string{"skipped"}, nil, false},
		{[]string{"silent", "loss_budget"}, []string{"loss_budget"}, true},
		{[]string{"threshold:metrics.max."}, []string{"threshold:metrics.max.drive9_x<25"}, true},
		{[]string{"threshold:metrics.max."}, []string{"threshold:latency_ms.p99<5000"}, false},
		{[]string{"skip"}, []string{"skipped"}, false}, // no prefix match without a trailing separator
	} {
		if got := Caught(c.expect, c.failed); got != c.want {
			t.Errorf("Caught(%v, %v) = %v, want %v", c.expect, c.failed, got, c.want)
		}
	}
}

func TestVariantKeepsEverythingButSeedAndDefect(t *testing.T) {
	src := []byte("# header\nname: x\nseed: 5\nduration: 10s\ndrain_timeout: 5s\ntenants:\n  - {group: a, count: 1, mode: dedicated}\n" +
		"pods:\n  count: 1\n  eventlogd:\n    defect: old\n    flags: {retry-tenant-cap: \"3\"}\nload:\n  - {tenants: a, executor: constant-arrival-rate, rate: 1}\n" +
		"consumers:\n  - count: 1\nfaults:\n  - {at: 1s, for: 2s, kind: event_insert_fail, target: tenant_1}\n")
	for _, c := range []struct {
		defect string
		seed   int64
	}{{"late-commit-skip", 7}, {"", 9}} {
		v, err := Variant(src, c.seed, c.defect)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scenario.Parse("variant.yaml", v)
		if err != nil {
			t.Fatalf("variant does not parse: %v\n%s", err, v)
		}
		if sc.Seed != c.seed || sc.Pods.Eventlogd.Defect != c.defect {
			t.Errorf("seed %d defect %q, want %d %q", sc.Seed, sc.Pods.Eventlogd.Defect, c.seed, c.defect)
		}
		if len(sc.Faults) != 1 || sc.Pods.Eventlogd.Flags["retry-tenant-cap"] != "3" || sc.Name != "x" {
			t.Errorf("variant lost fields: %+v", sc)
		}
	}
	// A scenario with no eventlogd block gets one.
	v, err := Variant([]byte("name: y\nseed: 1\npods: {count: 1}\n"), 2, "cold-db-sweeper")
	if err != nil || !strings.Contains(string(v), "defect: cold-db-sweeper") {
		t.Errorf("no eventlogd block: %v\n%s", err, v)
	}
	if _, err := Variant([]byte("- a\n- b\n"), 1, "x"); err == nil {
		t.Error("a YAML list was accepted as a scenario")
	}
}

// TestVariantSets: power's --set applies to every arm before the seed and the defect, which it may
// not name (power varies them itself); a malformed override is refused with its text.
func TestVariantSets(t *testing.T) {
	src := []byte("name: x\nseed: 5\nduration: 10s\ndrain_timeout: 5s\ntenants:\n  - {group: a, count: 1, mode: dedicated}\n" +
		"pods:\n  count: 1\n  eventlogd:\n    flags: {retry-tenant-cap: \"3\"}\nload:\n  - {tenants: a, executor: constant-arrival-rate, rate: 1}\nconsumers:\n  - count: 1\n")
	v, err := Variant(src, 8, "late-commit-skip", "pods.count=2", "pods.eventlogd.flags.event-commit=grouped")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse("variant.yaml", v)
	if err != nil {
		t.Fatalf("variant does not parse: %v\n%s", err, v)
	}
	if sc.Pods.Count != 2 || sc.Pods.Eventlogd.Flags["event-commit"] != "grouped" || sc.Pods.Eventlogd.Flags["retry-tenant-cap"] != "3" ||
		sc.Seed != 8 || sc.Pods.Eventlogd.Defect != "late-commit-skip" {
		t.Fatalf("variant with sets: %+v", sc)
	}
	for _, bad := range []string{"seed=3", " pods.eventlogd.defect =none", "pods.count"} {
		if _, err := Variant(src, 8, "", bad); err == nil || !strings.Contains(err.Error(), strings.TrimSpace(bad)) {
			t.Errorf("--set %q: %v, want refused naming it", bad, err)
		}
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, &Result{Sets: []string{"pods.count=2", "a=b"}}); err != nil || !strings.Contains(b.String(), "Every run with: `--set pods.count=2` `--set a=b`") {
		t.Fatalf("power.md does not say the overrides: %v\n%s", err, b.String())
	}
}

func TestReadMatrixErrorsNameTheEntry(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("name: s\n"), 0o644)
	for _, c := range []struct{ body, want string }{
		{"defects:\n  - {defect: a, scenario: s.yaml, expect: [skipped]}\n", ""},
		{"defects:\n  - {defect: a, scenario: s.yaml, expect: []}\n", "expect lists no check"},
		{"defects:\n  - {defect: a, scenario: s.yaml, expect: [x]}\n  - {defect: a, scenario: s.yaml, expect: [x]}\n", "listed twice"},
		{"defects:\n  - {defect: A_b, scenario: s.yaml, expect: [x]}\n", "not a name"},
		{"defects:\n  - {defect: a, scenario: ../s.yaml, expect: [x]}\n", "relative to"},
		{"defects:\n  - {defect: a, scenario: missing.yaml, expect: [x]}\n", "missing.yaml"},
		{"defects:\n  - {defect: a, scenario: s.yaml, expect: [x], typo: 1}\n", "typo"},
		{"defects: []\n", "no defects"},
		{"defects:\n  - {defect: a, scenario: s.yaml, expect: [x]}\ncontrols:\n  - {control: g, scenario: s.yaml, seeds: 5}\n", ""},
		{"defects:\n  - {defect: a, scenario: s.yaml, expect: [x]}\ncontrols:\n  - {control: a, scenario: s.yaml}\n", "listed twice"},
		{"defects:\n  - {defect: a, scenario: s.yaml, expect: [x]}\ncontrols:\n  - {control: g, scenario: nope.yaml}\n", "nope.yaml"},
		{"defects:\n  - {defect: a, scenario: s.yaml, expect: [x]}\ncontrols:\n  - {control: g, scenario: s.yaml, seeds: -1}\n", "seeds -1"},
		{"defects:\n  - {defect: a, scenario: s.yaml, expect: [x]}\ncontrols:\n  - {control: g, scenario: ../s.yaml}\n", "relative to"},
	} {
		p := filepath.Join(dir, "m.yaml")
		os.WriteFile(p, []byte(c.body), 0o644)
		_, err := ReadMatrix(p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.body, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want one containing %q", c.body, err, c.want)
		}
	}
}

// TestShippedMatrix: the repository's matrix reads, every scenario in it parses, and the CI subset
// holds the defects the issue names.
func TestShippedMatrix(t *testing.T) {
	m, err := ReadMatrix("../scenarios/power/matrix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Entries {
		if _, err := scenario.ReadFile(m.scenarioPath(e.Scenario)); err != nil {
			t.Errorf("%s: %v", e.Defect, err)
		}
	}
	// The release gate is a control over five seeds (its nemesis draws from the seed).
	all, _ := m.Select(nil, false)
	if len(all.Controls) == 0 || all.Controls[0].Name != "gate" || all.Controls[0].Seeds < 5 {
		t.Errorf("controls %+v: want the gate over at least 5 seeds", all.Controls)
	}
	for _, c := range all.Controls {
		if _, err := scenario.ReadFile(m.scenarioPath(c.Scenario)); err != nil {
			t.Errorf("control %s: %v", c.Name, err)
		}
	}
	ci, _ := m.Select(nil, true)
	var names []string
	for _, e := range ci.Defects {
		names = append(names, e.Defect)
	}
	for _, want := range []string{"late-commit-skip", "cross-tenant-leak", "drop-on-insert-failure", "uncounted-drop", "spurious-seq-too-old"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("CI subset %v lacks %s", names, want)
		}
	}
	// Every defect eventlogd can switch on has its exposing scenario (a defect without one is a claim
	// nobody measures).
	for _, d := range defect.All {
		if _, err := m.Select([]string{string(d)}, false); err != nil {
			t.Errorf("defect %s: %v", d, err)
		}
	}
	if _, err := m.Select([]string{"nope"}, false); err == nil || !strings.Contains(err.Error(), "late-commit-skip") {
		t.Errorf("unknown defect: %v", err)
	}
}

// TestRunTabulates drives Run with a RunFunc that writes the summaries a real run would: the matrix
// counts a caught defect, a missed one, a false alarm and a run without a summary as they are.
func TestRunTabulates(t *testing.T) {
	dir := t.TempDir()
	scen := "name: s\nseed: 10\nduration: 1s\ndrain_timeout: 1s\ntenants: [{group: a, count: 1, mode: dedicated}]\npods: {count: 1}\nload: [{tenants: a, executor: constant-arrival-rate, rate: 1}]\nconsumers: [{count: 1}]\n"
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scen), 0o644)
	os.WriteFile(filepath.Join(dir, "m.yaml"), []byte("defects:\n  - {defect: d1, scenario: s.yaml, expect: [skipped]}\n  - {defect: d2, scenario: s.yaml, expect: [leaks]}\n"), 0o644)
	m, err := ReadMatrix(filepath.Join(dir, "m.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// d1: caught on seed 10, missed on 11; its correct build passes on 10 and fails on 11.
	// d2: the defect run leaves no summary (it could not complete); correct build passes.
	outcomes := map[string]struct {
		exit int
		sum  map[string]any
	}{
		"d1/seed-10/defect":  {1, map[string]any{"verdict": "fail", "failed_checks": []string{"skipped"}, "skipped": 4, "acked": 100}},
		"d1/seed-11/defect":  {1, map[string]any{"verdict": "fail", "failed_checks": []string{"undelivered"}, "undelivered": 2}},
		"d1/seed-10/correct": {0, map[string]any{"verdict": "pass", "failed_checks": []string{}}},
		"d1/seed-11/correct": {1, map[string]any{"verdict": "fail", "failed_checks": []string{"threshold:latency_ms.p99<5000"}, "latency_ms": map[string]any{"p99": 6000}}},
		"d2/seed-10/defect":  {3, nil},
		"d2/seed-11/defect":  {1, map[string]any{"verdict": "fail", "failed_checks": []string{"leaks"}, "leaks": 9}},
		"d2/seed-10/correct": {0, map[string]any{"verdict": "pass"}},
		"d2/seed-11/correct": {0, map[string]any{"verdict": "pass"}},
	}
	out := filepath.Join(dir, "out")
	run := func(_ context.Context, scenPath, runDir string) (child.Result, error) {
		rel, _ := filepath.Rel(out, runDir)
		o, ok := outcomes[rel]
		if !ok {
			t.Fatalf("unexpected run %s", rel)
		}
		b, _ := os.ReadFile(scenPath)
		sc, err := scenario.Parse(scenPath, b)
		if err != nil {
			t.Fatalf("%s: %v", scenPath, err)
		}
		if wantDefect := strings.SplitN(rel, "/", 2)[0]; strings.HasSuffix(rel, "defect") != (sc.Pods.Eventlogd.Defect == wantDefect) {
			t.Errorf("%s: defect %q", rel, sc.Pods.Eventlogd.Defect)
		}
		os.MkdirAll(runDir, 0o755)
		if o.sum != nil {
			b, _ := json.Marshal(o.sum)
			os.WriteFile(filepath.Join(runDir, "summary.json"), b, 0o644)
		}
		return child.Result{Exit: o.exit}, nil
	}
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{Matrix: m, Selection: Selection{Defects: m.Entries}, Seeds: 2, Out: out, Run: run, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if res.DefectRuns != 4 || res.Detected != 2 || res.CorrectRuns != 4 || res.FalseAlarms != 1 || res.Pass() {
		t.Errorf("result %+v", res)
	}
	if d := res.Rows[0].Defected[0]; !d.OK || d.Numbers["skipped"] != 4 {
		t.Errorf("d1 seed 10: %+v", d)
	}
	if c := res.Rows[0].Correct[1]; c.OK || c.Numbers["latency_ms.p99"] != 6000 {
		t.Errorf("d1 seed 11 correct: %+v (the failed threshold's number must be shown)", c)
	}
	if d := res.Rows[1].Defected[0]; d.OK || d.Error == "" || d.Exit != 3 {
		t.Errorf("d2 seed 10 without a summary: %+v", d)
	}
	if !strings.Contains(progress.String(), "MISSED") || !strings.Contains(progress.String(), "FALSE ALARM") {
		t.Errorf("progress:\n%s", progress.String())
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| d1 | s.yaml | skipped | 10 | yes | skipped |", "| d1 | s.yaml | skipped | 11 | **no** |",
		"Detection: 2 of 4", "False alarms: 1 of 4"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("power.md lacks %q:\n%s", want, md.String())
		}
	}
	// Every arm is accounted for in the JSON.
	var js bytes.Buffer
	WriteJSON(&js, res)
	var back Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Rows) != 2 || back.FalseAlarmRate != 0.25 {
		t.Errorf("power.json round trip: %v %+v", err, back)
	}
}

// TestControlsCountAsCorrectRuns: a control runs the correct build only, over its own seeds; a
// control that fails is a false alarm that fails the whole measurement, and one that passes leaves
// the verdict to the defects.
func TestControlsCountAsCorrectRuns(t *testing.T) {
	dir := t.TempDir()
	scen := "name: g\nseed: 20\nduration: 1s\ndrain_timeout: 1s\ntenants: [{group: a, count: 1, mode: dedicated}]\npods: {count: 1}\nload: [{tenants: a, executor: constant-arrival-rate, rate: 1}]\nconsumers: [{count: 1}]\n"
	os.WriteFile(filepath.Join(dir, "g.yaml"), []byte(scen), 0o644)
	os.WriteFile(filepath.Join(dir, "m.yaml"), []byte("defects:\n  - {defect: d1, scenario: g.yaml, expect: [skipped], ci: true}\ncontrols:\n  - {control: gate, scenario: g.yaml, seeds: 3}\n"), 0o644)
	m, err := ReadMatrix(filepath.Join(dir, "m.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if sel, _ := m.Select(nil, true); len(sel.Controls) != 0 || len(sel.Defects) != 1 {
		t.Errorf("CI selection %+v: the control is not marked ci", sel)
	}
	sel, err := m.Select([]string{"gate"}, false)
	if err != nil || len(sel.Controls) != 1 || len(sel.Defects) != 0 {
		t.Fatalf("select the control by name: %+v %v", sel, err)
	}
	if n := Runs(sel, 1); n != 3 {
		t.Errorf("runs %d, want the control's own 3 seeds", n)
	}
	for _, c := range []struct {
		name       string
		failSeed   int64 // the seed whose run fails (0: none)
		wantPass   bool
		wantAlarms int
	}{
		{name: "every seed passes", wantPass: true},
		{name: "one seed fails", failSeed: 21, wantAlarms: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var seeds []int64
			run := func(_ context.Context, scenPath, runDir string) (child.Result, error) {
				b, _ := os.ReadFile(scenPath)
				sc, err := scenario.Parse(scenPath, b)
				if err != nil {
					t.Fatalf("%s: %v", scenPath, err)
				}
				if sc.Pods.Eventlogd.Defect != "" || !strings.HasSuffix(runDir, "correct") {
					t.Errorf("a control ran with defect %q into %s", sc.Pods.Eventlogd.Defect, runDir)
				}
				seeds = append(seeds, sc.Seed)
				os.MkdirAll(runDir, 0o755)
				sum, exit := map[string]any{"verdict": "pass"}, 0
				if sc.Seed == c.failSeed {
					sum, exit = map[string]any{"verdict": "fail", "failed_checks": []string{"threshold:latency_ms.p99@steady<500"}, "latency_ms": map[string]any{"p99": 700}}, 1
				}
				js, _ := json.Marshal(sum)
				os.WriteFile(filepath.Join(runDir, "summary.json"), js, 0o644)
				return child.Result{Exit: exit}, nil
			}
			res, err := Run(context.Background(), Options{Matrix: m, Selection: sel, Seeds: 1, Out: out, Run: run, Progress: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seeds, []int64{20, 21, 22}) {
				t.Errorf("seeds run %v, want the scenario's own seed and the next two", seeds)
			}
			if res.Pass() != c.wantPass || res.FalseAlarms != c.wantAlarms || res.CorrectRuns != 3 || res.DefectRuns != 0 {
				t.Errorf("result %+v: pass %v, want %v with %d false alarms", res, res.Pass(), c.wantPass, c.wantAlarms)
			}
			var md bytes.Buffer
			WriteMarkdown(&md, res)
			want := "| gate | g.yaml | 21 | pass | - |"
			if c.failSeed == 21 {
				want = "| gate | g.yaml | 21 | **fail** | threshold:latency_ms.p99@steady<500 | latency_ms.p99=700 |"
			}
			if !strings.Contains(md.String(), want) || !strings.Contains(md.String(), "3 of the correct-build runs are controls") ||
				strings.Contains(md.String(), "| defect |") {
				t.Errorf("power.md lacks %q:\n%s", want, md.String())
			}
		})
	}
}
