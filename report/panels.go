package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/seqgate/seqgate/verifier"
)

// maxPanels bounds the per-tenant panels of a report: a run with many tenants shows these, ranked
// by the verifier's anomaly counts and then by delivery lag, and the page says how many it left out.
const maxPanels = 8

// panelH is the height of one per-tenant plot (two per tenant: lag and cursors).
const panelH = 2.1 * vg.Inch

// tenantPanel is one tenant's small multiple: its consumers' delivery lag and cursors over time.
type tenantPanel struct {
	ID, Name  string // the ledger's tenant id and the scenario's name ("" when the summary has none)
	Anomalies int64  // lost + skipped + undelivered, from the verifier's per-tenant numbers
	LagMs     float64
	Why       string // why it is shown (its rank's reason)
	Lag, Cur  figure
	More      int // consumers not followed over time
}

// panelSet is the per-tenant section of the page.
type panelSet struct {
	Panels []tenantPanel
	// Of is how many tenants the ledger has; Untracked how many have no series at all.
	Of, Untracked int
}

// tenantRank is a followed tenant with the numbers that order the panels.
type tenantRank struct {
	t         *trackedTenant
	name      string
	anomalies int64
	lagUs     float64
}

// tenantPanels picks at most maxPanels followed tenants, most anomalies first (the summary's
// per-tenant lost, skipped and undelivered), then the largest delivery lag, then by id, and draws
// each one's plots.
func tenantPanels(d *Data, s *verifier.Summary) (panelSet, error) {
	byID := map[string]*verifier.Stats{}
	names := map[string]string{}
	for key, st := range s.PerTenant {
		id := key
		if st.TenantID != "" {
			id = st.TenantID
		}
		byID[id] = st
		if st.Tenant != "" && st.Tenant != id {
			names[id] = st.Tenant
		} else if key != id {
			names[id] = key
		}
	}
	ranks := make([]tenantRank, 0, len(d.tracked))
	for i := range d.tracked {
		t := &d.tracked[i]
		r := tenantRank{t: t, name: names[t.ID]}
		if st := byID[t.ID]; st != nil {
			r.anomalies = st.Lost + st.Skipped + st.Undelivered
		}
		for bi := range d.tl.b {
			b := &d.tl.b[bi]
			for _, c := range t.Consumers {
				if c.slot < len(b.lag) && !math.IsNaN(b.lag[c.slot]) {
					r.lagUs = max(r.lagUs, b.lag[c.slot])
				}
			}
		}
		ranks = append(ranks, r)
	}
	slices.SortStableFunc(ranks, func(a, b tenantRank) int {
		switch {
		case a.anomalies != b.anomalies:
			return int(b.anomalies - a.anomalies)
		case a.lagUs != b.lagUs:
			if a.lagUs > b.lagUs {
				return -1
			}
			return 1
		}
		return strings.Compare(a.t.ID, b.t.ID)
	})
	set := panelSet{Of: len(d.tracked) + d.UntrackedTenants, Untracked: d.UntrackedTenants}
	for i, r := range ranks {
		if i == maxPanels {
			break
		}
		p := tenantPanel{ID: r.t.ID, Name: r.name, Anomalies: r.anomalies, LagMs: r.lagUs / 1e3, More: r.t.MoreConsumers}
		switch {
		case r.anomalies > 0:
			p.Why = fmt.Sprintf("%d anomalies", r.anomalies)
		default:
			p.Why = "max lag " + fmtMs(p.LagMs)
		}
		var err error
		if p.Lag, err = figTenantLag(d, r.t, i, p.label()); err != nil {
			return panelSet{}, err
		}
		if p.Cur, err = figTenantCursor(d, r.t, i, p.label()); err != nil {
			return panelSet{}, err
		}
		set.Panels = append(set.Panels, p)
	}
	return set, nil
}

// label names the tenant as a person knows it: the scenario's name, then the service's id.
func (p tenantPanel) label() string {
	if p.Name != "" {
		return p.Name + " (" + p.ID + ")"
	}
	return p.ID
}

// segments splits a series at the buckets that have no value, so a stretch with no data (a stall)
// shows as a gap, not a line drawn across it.
func segments(d *Data, v func(b *bucket) (float64, bool)) []plotter.XYs {
	w := d.BucketSeconds()
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range d.tl.b {
		y, ok := v(&d.tl.b[i])
		if !ok {
			if len(cur) > 0 {
				out, cur = append(out, cur), nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: (float64(i) + 0.5) * w, Y: y})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func figTenantLag(d *Data, t *trackedTenant, i int, label string) (figure, error) {
	p := newTimePlot(d, "Tenant "+label+": delivery lag per consumer (by ack time)", "ms (log)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	const floor = 0.01
	any := false
	for ci, c := range t.Consumers {
		col := palette[ci%len(palette)]
		segs := segments(d, func(b *bucket) (float64, bool) {
			if c.slot >= len(b.lag) || math.IsNaN(b.lag[c.slot]) {
				return 0, false
			}
			return math.Max(b.lag[c.slot]/1e3, floor), true
		})
		for si, xys := range segs {
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return figure{}, fmt.Errorf("lag of %s: %w", c.ID, err)
			}
			l.Color, l.Width = col, vg.Points(1.3)
			pts.Color, pts.Radius = col, vg.Points(1.2)
			p.Add(l, pts)
			if si == 0 {
				addLegend(p, c.ID, l)
			}
			any = true
		}
	}
	fixX(p, d)
	if !any {
		p.Y.Min, p.Y.Max = floor, 1000
	}
	p.Y.Min = math.Max(p.Y.Min, floor)
	p.Y.Max *= 5
	cap := "The largest first-delivery latency to each consumer of the events acked in each bucket; a gap is a stretch in which none of its acked events reached it."
	return renderH(p, fmt.Sprintf("plot-tenant-%d-lag", i), "Tenant "+label+": lag", cap, true, panelH)
}

func figTenantCursor(d *Data, t *trackedTenant, i int, label string) (figure, error) {
	p := newTimePlot(d, "Tenant "+label+": each consumer's cursor and the tenant's head", "seq")
	held := func(get func(b *bucket) int64) plotter.XYs {
		var last int64
		return seriesOf(d, func(b *bucket) (float64, bool) {
			last = max(last, get(b))
			return float64(last), last > 0
		})
	}
	head := held(func(b *bucket) int64 {
		if t.slot < len(b.head) {
			return b.head[t.slot]
		}
		return 0
	})
	if err := line(p, "head (audit rows by created time)", head, colGrey, 1.2, true); err != nil {
		return figure{}, err
	}
	for ci, c := range t.Consumers {
		xys := held(func(b *bucket) int64 {
			if c.slot < len(b.cur) {
				return b.cur[c.slot]
			}
			return 0
		})
		if err := line(p, c.ID, xys, palette[ci%len(palette)], 1.3, false); err != nil {
			return figure{}, err
		}
	}
	fixX(p, d)
	floorY(p, 1)
	cap := "Each consumer's cursor (the highest seq it was sent, events and resets) and, from the audit, the highest seq the tenant's rows had reached: a consumer that stalls goes flat while the head climbs."
	return renderH(p, fmt.Sprintf("plot-tenant-%d-cursor", i), "Tenant "+label+": cursors", cap, true, panelH)
}
