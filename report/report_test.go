package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
	"github.com/seqgate/seqgate/verifier/synth"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// synthInput generates a ledger with synth and builds its report input in one pass (verifying it).
func synthInput(t *testing.T, cfg synth.Config) (Input, synth.Truth) {
	t.Helper()
	var buf bytes.Buffer
	w := ledger.NewWriter(&buf)
	tr, err := synth.Generate(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := ledger.NewReader("synth.jsonl", &buf)
	if err != nil {
		t.Fatal(err)
	}
	in, err := BuildFrom(r, "synth.jsonl", nil, nil, verifier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return in, tr
}

func renderPage(t *testing.T, in Input) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var everyAnomaly = synth.Config{Seed: 7, Tenants: 4, ConsumersPerTenant: 2, Events: 4000, Cold: 1,
	Lost: 2, Silent: 2, CrashLoss: 2, Skipped: 3, Undelivered: 2, Duplicates: 2, Leaks: 1, Unexpected: 2,
	Reorder: 2, Recovered: 2, SeqTooOld: 2, SpuriousResets: 2, ColdWakeups: 1}

// TestReportShowsEveryAnomalyKind: a ledger with every anomaly kind planted gets a witness table for
// each, the failed checks, and plotted counts equal to the verifier's; a clean ledger (the negative
// control) gets none of them.
func TestReportShowsEveryAnomalyKind(t *testing.T) {
	in, tr := synthInput(t, everyAnomaly)
	page := renderPage(t, in)
	want := map[string]int{"lost": tr.Lost, "silent": tr.LostByReason["silent"], "skipped": tr.Skipped,
		"undelivered": tr.Undelivered, "duplicates": tr.Duplicates, "leaks": tr.Leaks, "unexpected": tr.Unexpected,
		"reorder": tr.Reorder.Overtaken, "recovered": tr.Recovered, "reset_covered": tr.ResetCovered,
		"spurious_resets": tr.SpuriousResets, "cold_wakeups": tr.ColdWakeups}
	for check, n := range want {
		if n == 0 {
			t.Fatalf("synth planted no %s: the test would prove nothing", check)
		}
		if !strings.Contains(page, `data-check="`+check+`"`) {
			t.Errorf("no witness table for %s (%d planted)", check, n)
		}
	}
	for _, c := range in.Summary.FailedChecks {
		if !regexp.MustCompile(`<tr class="failed"><td>` + regexp.QuoteMeta(c) + `</td>`).MatchString(page) {
			t.Errorf("failed check %s is not in the failed-checks table", c)
		}
	}
	if in.Summary.Verdict != verifier.VerdictFail || !strings.Contains(page, `data-verdict="fail"`) {
		t.Errorf("verdict %s not shown as fail", in.Summary.Verdict)
	}
	d := in.Data
	if got := plotted(d); got != (counts{int64(tr.Lost), int64(tr.Skipped), int64(tr.Undelivered)}) {
		t.Errorf("plotted lost/skipped/undelivered = %+v, planted %d/%d/%d", got, tr.Lost, tr.Skipped, tr.Undelivered)
	}
	if len(mismatch(in.Summary, d)) != 0 {
		t.Errorf("mismatch notes on a ledger the report counts right: %v", mismatch(in.Summary, d))
	}
	if strings.Count(page, `a class="tl"`) == 0 {
		t.Error("no witness links to the timeline")
	}

	clean, _ := synthInput(t, synth.Config{Seed: 7, Tenants: 4, ConsumersPerTenant: 2, Events: 4000})
	cpage := renderPage(t, clean)
	if clean.Summary.Verdict != verifier.VerdictPass || !strings.Contains(cpage, `data-verdict="pass"`) {
		t.Errorf("clean ledger: verdict %s", clean.Summary.Verdict)
	}
	for check := range want {
		if strings.Contains(cpage, `data-check="`+check+`"`) {
			t.Errorf("clean ledger shows a %s witness table", check)
		}
	}
	if c := plotted(clean.Data); c != (counts{}) {
		t.Errorf("clean ledger: plotted anomalies %+v", c)
	}
}

// TestReportFromSummaryJSON: a report made from a summary.json (as seqgate run leaves it) shows the
// same verdict and witnesses as one verified in the same pass.
func TestReportFromSummaryJSON(t *testing.T) {
	in, _ := synthInput(t, everyAnomaly)
	dir := t.TempDir()
	p := filepath.Join(dir, "summary.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier.WriteJSON(f, in.Summary); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s, raw, err := LoadSummary(p)
	if err != nil {
		t.Fatal(err)
	}
	in2 := Input{Summary: s, Witnesses: raw, Data: in.Data, Source: "x"}
	a, b := renderPage(t, in), renderPage(t, in2)
	strip := regexp.MustCompile(`Made by seqgate report at .*? Self-contained`)
	if strip.ReplaceAllString(a, "") != strip.ReplaceAllString(b, "") {
		t.Error("the page from summary.json differs from the page of the in-memory summary")
	}
	if _, _, err := LoadSummary(filepath.Join("testdata", "faults-tour.jsonl.gz")); err == nil || !strings.Contains(err.Error(), "faults-tour.jsonl.gz") {
		t.Errorf("a ledger given as summary: error %v, want one naming the file", err)
	}
}

// TestSummaryMarkdownGolden pins summary.md for a pass, a fail and an inconclusive run.
func TestSummaryMarkdownGolden(t *testing.T) {
	noEnd := everyAnomaly
	noEnd.Lost, noEnd.Silent, noEnd.CrashLoss = 0, 0, 0
	cases := []struct {
		name string
		cfg  synth.Config
		cut  bool // drop the end record
	}{
		{"pass", synth.Config{Seed: 3, Tenants: 2, ConsumersPerTenant: 1, Events: 31000}, false},
		{"fail", everyAnomaly, false},
		{"inconclusive", synth.Config{Seed: 3, Tenants: 2, ConsumersPerTenant: 1, Events: 500}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := ledger.NewWriter(&buf)
			if _, err := synth.Generate(tc.cfg, w); err != nil {
				t.Fatal(err)
			}
			w.Close()
			data := buf.Bytes()
			if tc.cut {
				lines := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
				data = bytes.Join(lines[:len(lines)-1], nil)
			}
			r, err := ledger.NewReader("synth.jsonl", bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			in, err := BuildFrom(r, "synth.jsonl", nil, nil, verifier.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if in.Summary.Verdict != tc.name {
				t.Fatalf("verdict %s, want %s", in.Summary.Verdict, tc.name)
			}
			var md bytes.Buffer
			if err := WriteMarkdown(&md, in.Summary, in.Data, "runs/synth/report.html"); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "summary-"+tc.name+".md")
			if *update {
				if err := os.WriteFile(golden, md.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if md.String() != string(want) {
				t.Errorf("summary.md differs from %s (-update rewrites it):\n--- got\n%s\n--- want\n%s", golden, md.String(), want)
			}
		})
	}
}

// TestReportOfEmptyRun: a ledger with nothing but its header and end still renders every plot.
func TestReportOfEmptyRun(t *testing.T) {
	for _, body := range []string{
		`{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1,"budget":0.0001,"tenants":[],"pods":[],"target":"eventlogd"}` + "\n" + `{"k":"end","t":0,"drained":true}` + "\n",
		`{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1,"budget":0.0001,"tenants":[],"pods":[],"target":"eventlogd"}` + "\n",
	} {
		r, err := ledger.NewReader("empty.jsonl", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		in, err := BuildFrom(r, "empty.jsonl", nil, nil, verifier.Options{})
		if err != nil {
			t.Fatal(err)
		}
		page := renderPage(t, in)
		if !strings.Contains(page, `data-verdict="inconclusive"`) || strings.Count(page, "<figure") < 7 {
			t.Errorf("empty run: verdict or plots missing")
		}
	}
}

// TestPageFetchesNothing: the page names no resource to fetch (scripts, styles, fonts, images are
// inline), so it opens offline from a CI artifact; the planted control shows the check sees one.
func TestPageFetchesNothing(t *testing.T) {
	in, _ := synthInput(t, everyAnomaly)
	page := renderPage(t, in)
	fetch := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:)?//|url\(\s*['"]?(https?:)?//|@import|<link[^>]+stylesheet|<script[^>]+src=`)
	if m := fetch.FindString(page); m != "" {
		t.Errorf("the page fetches something: %q", m)
	}
	if !fetch.MatchString(`<img src="https://example.com/x.png">`) {
		t.Error("the check does not see a remote image")
	}
}

// TestReportShowsSlowestAndWrites: the page lists the slowest deliveries the summary names, with
// their pods, and every tenant's write outcomes by name; a run without deliveries says so.
func TestReportShowsSlowestAndWrites(t *testing.T) {
	in, _ := synthInput(t, synth.Config{Seed: 7, Tenants: 3, ConsumersPerTenant: 2, Events: 2000})
	page := renderPage(t, in)
	s := in.Summary
	if len(s.SlowestDeliveries) == 0 {
		t.Fatal("the summary names no slowest delivery: the test would prove nothing")
	}
	top := s.SlowestDeliveries[0]
	row := regexp.MustCompile(`<tr><td class="n">[^<]+</td><td>` + regexp.QuoteMeta(top.MID) + `</td><td>` + regexp.QuoteMeta(top.Tenant) +
		`</td><td>` + regexp.QuoteMeta(top.Consumer) + `</td><td>` + regexp.QuoteMeta(top.AckPod) + `</td>`)
	if !strings.Contains(page, `id="slowest-table"`) || !row.MatchString(page) || strings.Count(page, "<code>"+top.Path+"</code>") == 0 {
		t.Errorf("the slowest delivery %+v is not in the page's table", top)
	}
	for _, tn := range s.Tenants {
		st := s.PerTenant[tn.Name]
		if !strings.Contains(page, `<tr><td>`+tn.Name) || !strings.Contains(page, `<td class="n">`+fmtInt(st.Offered)+`</td>`) {
			t.Errorf("tenant %s's writes (offered %d) are not in the page", tn.Name, st.Offered)
		}
	}
	empty := in
	sum := *in.Summary
	sum.SlowestDeliveries = nil
	empty.Summary = &sum
	if p := renderPage(t, empty); strings.Contains(p, `id="slowest-table"`) || !strings.Contains(p, "No delivery of an acked event.") {
		t.Error("a summary without deliveries still shows a slowest table")
	}
}

// TestReportShowsReachedTenants: a tenant-DB fault whose start record lists the tenants it reached
// (one DB address every tenant shares) shows them, by name, in the fault table, and its band says how
// many; the same fault without the list shows "its target" and a plain band (the control).
func TestReportShowsReachedTenants(t *testing.T) {
	const run = `{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1,"budget":0.0001,"tenants":[{"id":"A","mode":"shared","cold":false,"name":"tenant_1"},{"id":"B","mode":"shared","cold":false,"name":"tenant_2"},{"id":"C","mode":"shared","cold":false,"name":"tenant_3"}],"pods":["pod-1"],"target":"eventlogd"}`
	for _, tc := range []struct {
		name, reached string
		want, absent  []string
	}{
		{"reached", `,"reached":["A","B","C"]`,
			[]string{"tenants reached", ">3: tenant_1, tenant_2, tenant_3<", "tenant_db_stall tenant_1 (reached 3 tenants)"}, []string{"its target"}},
		{"control", ``, []string{"its target"}, []string{"reached 3 tenants", "3: tenant_1"}},
	} {
		body := run + "\n" +
			`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"tenant_1","tenant":"A"` + tc.reached + `,"phase":"start","t":1000000000}` + "\n" +
			`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"tenant_1","phase":"stop","t":2000000000}` + "\n" +
			`{"k":"end","t":3000000000,"drained":true}` + "\n"
		r, err := ledger.NewReader("reached.jsonl", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		in, err := BuildFrom(r, "reached.jsonl", nil, nil, verifier.Options{})
		if err != nil {
			t.Fatal(err)
		}
		page := renderPage(t, in)
		for _, w := range tc.want {
			if !strings.Contains(page, w) {
				t.Errorf("%s: page lacks %q", tc.name, w)
			}
		}
		for _, w := range tc.absent {
			if strings.Contains(page, w) {
				t.Errorf("%s: page has %q", tc.name, w)
			}
		}
	}
}
