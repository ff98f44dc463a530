package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seqgate/seqgate/verifier"
)

//go:embed report.html.tmpl
var pageTmpl string

//go:embed report.css
var pageCSS string

//go:embed report.js
var pageJS string

var tmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":        fmtInt,
	"frac":       fmtFrac,
	"ms":         fmtMs,
	"secs":       func(ns int64) string { return strconv.FormatFloat(secs(ns), 'f', 2, 64) },
	"f":          func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) },
	"int64":      func(n int) int64 { return int64(n) },
	"sub":        func(a, b int64) int64 { return a - b },
	"msToS":      func(ms float64) string { return strconv.FormatFloat(ms/1000, 'f', 3, 64) },
	"css":        func(s string) template.CSS { return template.CSS(s) },
	"maxTracked": func() int { return maxTrackedTenants },
}).Parse(pageTmpl))

// Input is what a report is made of: the verifier's Summary and the ledger's series.
type Input struct {
	Summary *verifier.Summary
	// Witnesses, when set, are the summary's witnesses as read from summary.json (field order kept);
	// when nil they are taken from Summary.Witnesses.
	Witnesses map[string][]json.RawMessage
	Data      *Data
	// Source names the ledger (for the page's footer).
	Source string
}

type page struct {
	In           Input
	S            *verifier.Summary
	D            *Data
	Title        string
	Verdict      string
	Why          []string
	Key          []keyNumber
	Witnesses    []witnessTable
	Figures      []figure
	Panels       panelSet
	Tenants      []statRow
	Consumers    []statRow
	MoreCons     int
	Faults       []faultRow
	Crashes      []PodEvent
	Mismatch     []string
	Generated    string
	CSS          template.CSS
	JS           template.JS
	BucketSecond float64
	// Defects names the seeded defects of the judged build ("" for a clean one); Provenance is what
	// the run judged, for the header.
	Defects    string
	Provenance []verifier.ProvenanceItem
}

type keyNumber struct {
	Label, Value string
	Bad          bool
}

type faultRow struct {
	Fault
	Color string
}

type statRow struct {
	ID string
	*verifier.Stats
}

// maxConsumerRows bounds the per-consumer table; the rest are summarised in one line.
const maxConsumerRows = 300

// WriteHTML writes the self-contained report page: no script, style, font or image is fetched.
func WriteHTML(w io.Writer, in Input) error {
	s, d := in.Summary, in.Data
	raw := in.Witnesses
	if raw == nil {
		var err error
		if raw, err = rawWitnesses(s); err != nil {
			return err
		}
	}
	wts, err := witnessTables(s, raw)
	if err != nil {
		return err
	}
	var marks []mark
	for _, wt := range wts {
		if wt.Plot != "plot-anomalies" {
			continue // the anomaly plot marks the witnesses of what it plots
		}
		for _, r := range wt.Rows {
			if r.HasT {
				marks = append(marks, mark{Check: wt.Check, T: r.T})
			}
		}
	}
	figs, err := figures(d, marks)
	if err != nil {
		return err
	}
	panels, err := tenantPanels(d, s)
	if err != nil {
		return err
	}
	p := page{In: in, S: s, D: d, Verdict: s.Verdict, Witnesses: wts, Figures: figs, Panels: panels,
		Title:     fmt.Sprintf("seqgate %s: %s", strings.ToUpper(s.Verdict), d.Scenario),
		Generated: time.Now().UTC().Format(time.RFC3339), CSS: template.CSS(pageCSS), JS: template.JS(pageJS),
		BucketSecond: d.BucketSeconds(), Key: keyNumbers(s), Why: why(s), Mismatch: mismatch(s, d),
		Defects: strings.Join(verifier.Defects(s), ", "), Provenance: verifier.Provenance(s)}
	if d.Scenario == "" {
		p.Title = "seqgate " + strings.ToUpper(s.Verdict)
	}
	p.Title += verifier.DefectNote(s)
	for _, id := range sortedKeys(s.PerTenant) {
		p.Tenants = append(p.Tenants, statRow{id, s.PerTenant[id]})
	}
	for i, id := range sortedKeys(s.PerConsumer) {
		if i == maxConsumerRows {
			p.MoreCons = len(s.PerConsumer) - i
			break
		}
		p.Consumers = append(p.Consumers, statRow{id, s.PerConsumer[id]})
	}
	for _, f := range d.Faults {
		c := kindColor(f.Kind)
		p.Faults = append(p.Faults, faultRow{f, fmt.Sprintf("rgba(%d,%d,%d,0.35)", c.R, c.G, c.B)})
	}
	for _, e := range d.Pods {
		if e.Phase == "crash" {
			p.Crashes = append(p.Crashes, e)
		}
	}
	return tmpl.Execute(w, p)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// keyNumbers are the figures at the top of the page (and of summary.md).
func keyNumbers(s *verifier.Summary) []keyNumber {
	return []keyNumber{
		{"acked events", fmtInt(s.Acked), false},
		{"lost", fmtInt(s.Lost), s.Lost > 0},
		{"loss fraction", fmtFrac(s.EventLossFraction), s.EventLossFraction > s.Budget},
		{"95% upper bound", fmtFrac(s.LossUpper95), !s.BoundWithinBudget},
		{"budget", fmtFrac(s.Budget), false},
		{"skipped", fmtInt(s.Skipped), s.Skipped > 0},
		{"undelivered", fmtInt(s.Undelivered), s.Undelivered > 0},
		{"leaks", fmtInt(s.Leaks), s.Leaks > 0},
		{"latency p50 / p99 / max", fmtMs(s.LatencyMs.P50) + " / " + fmtMs(s.LatencyMs.P99) + " / " + fmtMs(s.LatencyMs.Max), false},
		{"deliveries", fmtInt(s.Deliveries), false},
		{"reconnects (max/s)", fmt.Sprintf("%s (%d)", fmtInt(s.Reconnects.Total), s.Reconnects.MaxPerS), false},
	}
}

// why explains a verdict in a sentence or two.
func why(s *verifier.Summary) []string {
	var out []string
	switch s.Verdict {
	case verifier.VerdictPass:
		out = append(out, "Every check held.")
	case verifier.VerdictFail:
		out = append(out, fmt.Sprintf("%d check(s) failed: %s.", len(s.FailedChecks), strings.Join(s.FailedChecks, ", ")))
	}
	for _, w := range s.Warnings {
		if strings.HasPrefix(w, "inconclusive") {
			out = append(out, w)
		}
	}
	if !s.BoundWithinBudget && s.Acked > 0 {
		out = append(out, fmt.Sprintf("The 95%% upper bound of the loss fraction (%s) is above the budget (%s): a conclusive run needs at least %s acked events (this one has %s).",
			fmtFrac(s.LossUpper95), fmtFrac(s.Budget), fmtInt(s.MinAckedForBudget), fmtInt(s.Acked)))
	}
	return out
}

// mismatch notes where the page's series are incomplete (a bound of the report's pass was reached).
func mismatch(_ *verifier.Summary, d *Data) []string {
	return d.Partial
}

// fmtInt writes n with thousands separators.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtFrac writes a fraction as a person reads it, to 3 significant digits: 0, 0.0001, 5.99e-05.
func fmtFrac(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
