package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// stallLedger is a run of two tenants, 10 writes/s each for 12 s, two consumers each. The consumers
// of the stalled tenant ("tb") get nothing from 4 s to 8 s and then everything at once; "ta" is
// delivered 5 ms after each ack throughout.
func stallLedger(stalled string) []*ledger.Record {
	const s = int64(1e9)
	recs := []*ledger.Record{{K: ledger.KindRun, V: 1, RunID: "r", Scenario: "stall", StartUnixNs: 1e18,
		Tenants: []ledger.Tenant{{ID: "ta", Mode: "dedicated"}, {ID: "tb", Mode: "dedicated"}}, Pods: []string{"pod-1"}, Target: "eventlogd"}}
	for _, ten := range []string{"ta", "tb"} {
		for c := 1; c <= 2; c++ {
			recs = append(recs, &ledger.Record{K: ledger.KindConn, Consumer: fmt.Sprintf("%s-c%d", ten, c), Tenant: ten, Conn: fmt.Sprintf("%s-c%d-1", ten, c), T: 1, Phase: "open", Pod: "pod-1"})
		}
	}
	var evs []*ledger.Record
	for i := range 120 {
		at := int64(i) * s / 10
		for _, ten := range []string{"ta", "tb"} {
			path := fmt.Sprintf("/p/%s/%d", ten, i)
			recs = append(recs, &ledger.Record{K: ledger.KindMut, MID: fmt.Sprintf("%s-%d", ten, i), Tenant: ten, Op: "write", Path: path, IntendedT: at, T: at, DoneT: at + 2e6, Res: "ok", Pod: "pod-1"})
			deliver := at + 7e6
			if ten == stalled && at+7e6 >= 4*s && at < 8*s {
				deliver = 8*s + int64(i)*1e5 // held until the stall ends
			}
			for c := 1; c <= 2; c++ {
				evs = append(evs, &ledger.Record{K: ledger.KindEv, Consumer: fmt.Sprintf("%s-c%d", ten, c), Tenant: ten, Conn: fmt.Sprintf("%s-c%d-1", ten, c), T: deliver, Seq: int64(i + 1), Op: "write", Path: path, Pod: "pod-1"})
			}
			recs = append(recs, &ledger.Record{K: ledger.KindPersisted, Tenant: ten, Seq: int64(i + 1), Op: "write", Path: path, CreatedUnixNs: 1e18 + at + 1e6})
		}
	}
	// The ledger is in observed order: deliveries by time, after the writes they follow.
	out := append([]*ledger.Record{}, recs[:5]...)
	var muts []*ledger.Record
	var persisted []*ledger.Record
	for _, r := range recs[5:] {
		if r.K == ledger.KindPersisted {
			persisted = append(persisted, r)
		} else {
			muts = append(muts, r)
		}
	}
	merged := append(muts, evs...)
	sortByT(merged)
	out = append(out, merged...)
	out = append(out, &ledger.Record{K: ledger.KindEnd, T: 13 * s, Drained: true})
	return append(out, persisted...)
}

func sortByT(rs []*ledger.Record) {
	key := func(r *ledger.Record) int64 {
		if r.K == ledger.KindMut {
			return r.DoneT
		}
		return r.T
	}
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && key(rs[j]) < key(rs[j-1]); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// TestTenantPanelShowsItsStall: one tenant's stall shows in its own panel (lag of seconds, a flat
// cursor during the stall) and not in the other's, for either tenant stalled.
func TestTenantPanelShowsItsStall(t *testing.T) {
	for _, stalled := range []string{"ta", "tb"} {
		healthy := map[string]string{"ta": "tb", "tb": "ta"}[stalled]
		d := collect(stallLedger(stalled))
		set, err := tenantPanels(d, &verifier.Summary{})
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Panels) != 2 || set.Of != 2 {
			t.Fatalf("stalled %s: %d panels of %d tenants", stalled, len(set.Panels), set.Of)
		}
		if set.Panels[0].ID != stalled {
			t.Errorf("stalled %s: the first panel is %s's, want the stalled tenant's (largest lag)", stalled, set.Panels[0].ID)
		}
		for _, p := range set.Panels {
			switch p.ID {
			case stalled:
				if p.LagMs < 3000 {
					t.Errorf("stalled %s: its panel's lag max is %.0f ms, want the stall's seconds", stalled, p.LagMs)
				}
			case healthy:
				if p.LagMs > 50 {
					t.Errorf("stalled %s: the healthy tenant %s's panel shows %.0f ms of lag", stalled, healthy, p.LagMs)
				}
			}
			if !strings.Contains(string(p.Lag.SVG), p.ID+"-c1") || !strings.Contains(string(p.Cur.SVG), p.ID+"-c2") {
				t.Errorf("%s's panel does not name its consumers", p.ID)
			}
		}
		// The cursor series: the stalled tenant's consumers were sent nothing from 4 s to 8 s, the
		// healthy one's were sent something in every bucket.
		for _, tt := range d.tracked {
			quiet := 0
			for bi := range d.tl.b {
				mid := (float64(bi) + 0.5) * d.BucketSeconds()
				if mid < 4.2 || mid > 7.8 {
					continue
				}
				b := &d.tl.b[bi]
				if c := tt.Consumers[0]; c.slot >= len(b.cur) || b.cur[c.slot] == 0 {
					quiet++
				}
			}
			if (tt.ID == stalled) != (quiet > 0) {
				t.Errorf("stalled %s: tenant %s's first consumer has %d quiet buckets during the stall", stalled, tt.ID, quiet)
			}
		}
	}
}

// TestTenantPanelsBounded: a run of many tenants gets maxPanels panels, the ones with anomalies
// first, and the page says how many it shows of how many.
func TestTenantPanelsBounded(t *testing.T) {
	const n = 40
	recs := []*ledger.Record{{K: ledger.KindRun, V: 1, RunID: "r", Scenario: "many", Pods: []string{"pod-1"}, Target: "eventlogd"}}
	for i := range n {
		ten := fmt.Sprintf("t%02d", i)
		recs = append(recs, &ledger.Record{K: ledger.KindTenant, ID: ten, Mode: "dedicated"},
			&ledger.Record{K: ledger.KindMut, MID: ten, Tenant: ten, Op: "write", Path: "/" + ten, IntendedT: 1e9, T: 1e9, DoneT: 1e9 + 1e6, Res: "ok", Pod: "pod-1"},
			&ledger.Record{K: ledger.KindEv, Consumer: ten + "-c1", Tenant: ten, Conn: "x", T: 1e9 + 2e6 + int64(i)*1e6, Seq: 1, Op: "write", Path: "/" + ten, Pod: "pod-1"})
	}
	recs = append(recs, &ledger.Record{K: ledger.KindEnd, T: 2e9})
	d := collect(recs)
	s := &verifier.Summary{PerTenant: map[string]*verifier.Stats{"tenant_4": {TenantID: "t03", Tenant: "tenant_4", Skipped: 2}}}
	set, err := tenantPanels(d, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Panels) != maxPanels || set.Of != n || set.Panels[0].ID != "t03" || set.Panels[0].Name != "tenant_4" || set.Panels[1].ID != "t39" {
		t.Fatalf("%d panels of %d, first %+v, second %s", len(set.Panels), set.Of, set.Panels[0].ID, set.Panels[1].ID)
	}
	var page bytes.Buffer
	sum := &verifier.Summary{Verdict: "pass", PerTenant: s.PerTenant}
	if err := WriteHTML(&page, Input{Summary: sum, Data: d}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("Showing %d of %d tenants", maxPanels, n); !strings.Contains(page.String(), want) {
		t.Errorf("the page does not say %q", want)
	}
	if got := strings.Count(page.String(), `<section class="tenant-panel"`); got != maxPanels {
		t.Errorf("%d tenant panels on the page, want %d", got, maxPanels)
	}
}

// TestAnomalyPlotMarksOnlyWhatItNames: a witness of a dropped arrival (a passing run's) draws no
// triangle on the anomaly plot, and its link goes to the load plot, which shows drops; a witness of
// a skip draws one, named for the skipped series.
func TestAnomalyPlotMarksOnlyWhatItNames(t *testing.T) {
	d := collect(stallLedger(""))
	for _, c := range []struct {
		name  string
		marks []mark
		want  []string
		not   []string
	}{
		{"a drop only", []mark{{Check: "drops", T: 1}}, nil, []string{"witness"}},
		{"a skip and a drop", []mark{{Check: "drops", T: 1}, {Check: "skipped", T: 2}, {Check: "structural", T: 3}}, []string{"witness of skipped (1)"}, []string{"drops", "structural", "witness of lost"}},
		{"lost and silent", []mark{{Check: "lost", T: 1}, {Check: "silent", T: 2}}, []string{"witness of lost (2)"}, []string{"witness of skipped"}},
	} {
		f, err := figAnomalies(d, c.marks)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(f.SVG), w) {
				t.Errorf("%s: the anomaly plot lacks %q", c.name, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(string(f.SVG), w) {
				t.Errorf("%s: the anomaly plot shows %q", c.name, w)
			}
		}
	}
	if p := plotOf("drops"); p != "plot-mutations" {
		t.Errorf("a drop's witness links to %s, want the load plot", p)
	}
}

func TestWrapLabel(t *testing.T) {
	width := func(s string) vg.Length { return vg.Length(len(s)) } // one unit per byte
	for _, c := range []struct {
		in   string
		room vg.Length
		want string
	}{
		{"dropped by the open model", 12, "dropped by\nthe open\nmodel"},
		{"short", 12, "short"},
		{"tenant_1-consumer-17", 8, "tenant_1\n-consume\nr-17"},
		{"", 5, ""},
	} {
		got := wrapLabel(c.in, c.room, width)
		if got != c.want {
			t.Errorf("wrapLabel(%q, %g) = %q, want %q", c.in, c.room, got, c.want)
		}
		for _, l := range strings.Split(got, "\n") {
			if width(l) > c.room {
				t.Errorf("wrapLabel(%q): line %q is wider than %g", c.in, l, c.room)
			}
		}
	}
	// The real legend: the open model's label fits the column in the plot's own font.
	p := newTimePlot(collect(stallLedger("")), "t", "y")
	for _, l := range strings.Split(wrapLabel("dropped by the open model (12345)", legendText(p), func(s string) vg.Length { return p.Legend.TextStyle.Rectangle(s).Max.X }), "\n") {
		if w := p.Legend.TextStyle.Rectangle(l).Max.X; w > legendText(p) {
			t.Errorf("legend line %q is %v wide, the column has %v", l, w, legendText(p))
		}
	}
}

// TestOutboxAgeBesideItsThreshold: the outbox age plot draws the retention and the alert threshold
// (twice it), and its caption says how far the peak is from it, or that it passed it.
func TestOutboxAgeBesideItsThreshold(t *testing.T) {
	var rs []*ledger.Record
	rs = append(rs, &ledger.Record{K: ledger.KindRun, V: 1, RunID: "r", Pods: []string{"pod-1"}, Target: "eventlogd"})
	for i := range 21 {
		rs = append(rs, &ledger.Record{K: ledger.KindMetric, Pod: "pod-1", T: int64(i) * 1e9, Name: OutboxAgeMetric, Value: float64(i), MetricType: "gauge"})
	}
	rs = append(rs, &ledger.Record{K: ledger.KindEnd, T: 21e9})
	for _, c := range []struct {
		ret        time.Duration
		from, want string
	}{
		{0, "", "0.3% of the threshold"}, // eventlogd's default 1h: 20 s of 7200 s
		{8 * time.Second, "the run's flag", "above the threshold: the prune floor was pinned"},
	} {
		d := collect(rs)
		d.OutboxRetention, d.OutboxRetentionFrom = c.ret, c.from
		f, err := figMetric(d, 0)
		if err != nil {
			t.Fatal(err)
		}
		ret := c.ret
		if ret == 0 {
			ret = DefaultOutboxRetention
		}
		svg := string(f.SVG) // a legend label may be wrapped onto two lines
		if !strings.Contains(f.Caption, c.want) || !strings.Contains(svg, "alert: pinned") || !strings.Contains(svg, (2*ret).String()) ||
			!strings.Contains(svg, "retention ("+ret.String()+")") {
			t.Errorf("retention %v: caption %q, or the SVG lacks the threshold and retention lines", c.ret, f.Caption)
		}
		if c.from != "" && !strings.Contains(f.Caption, c.from) {
			t.Errorf("the caption does not say where the retention came from: %q", f.Caption)
		}
	}
}
