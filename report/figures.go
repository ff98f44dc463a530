package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/seqgate/seqgate/verifier"
)

// mark is a witness placed on the timeline (its check and run time in seconds).
type mark struct {
	Check string
	T     float64
}

// figures renders every plot of the report, in page order.
func figures(d *Data, marks []mark) ([]figure, error) {
	builders := []func(*Data, []mark) (figure, error){
		figMutations, figDelivered, figLatency, figAnomalies, figConnections, figResets,
	}
	var out []figure
	for _, b := range builders {
		f, err := b(d, marks)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	for i := range d.Families {
		f, err := figMetric(d, i)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	f, err := figLatencyDist(d)
	if err != nil {
		return nil, err
	}
	return append(out, f), nil
}

// seriesOf returns one point per bucket (at its middle) of v(bucket); skip leaves a bucket out.
func seriesOf(d *Data, v func(b *bucket) (float64, bool)) plotter.XYs {
	w := d.BucketSeconds()
	xys := make(plotter.XYs, 0, len(d.tl.b))
	for i := range d.tl.b {
		y, ok := v(&d.tl.b[i])
		if !ok {
			continue
		}
		xys = append(xys, plotter.XY{X: (float64(i) + 0.5) * w, Y: y})
	}
	return xys
}

// rate is a counter per second; the last bucket is divided by the part of it the run covered.
func rate(d *Data, c int) plotter.XYs {
	w := d.BucketSeconds()
	xys := seriesOf(d, func(b *bucket) (float64, bool) { return float64(b.n[c]) / w, true })
	if n := len(xys); n > 0 {
		covered := secs(d.EndNs) - float64(n-1)*w
		if covered > 0 && covered < w {
			xys[n-1].Y = float64(d.tl.b[n-1].n[c]) / covered
		}
	}
	return xys
}

func count(d *Data, c int) plotter.XYs {
	return seriesOf(d, func(b *bucket) (float64, bool) { return float64(b.n[c]), true })
}

func total(d *Data, c int) (n int64) {
	for i := range d.tl.b {
		n += d.tl.b[i].n[c]
	}
	return n
}

// floorY starts the y axis at 0 and leaves headroom above the data for the fault labels.
func floorY(p *plot.Plot, min float64) {
	p.Y.Min = 0
	p.Y.Max = math.Max(p.Y.Max, min) * 1.3
}

func figMutations(d *Data, _ []mark) (figure, error) {
	p := newTimePlot(d, "Mutations: offered, acked, failed, dropped", "per second")
	for _, s := range []struct {
		name string
		c    int
		col  color.NRGBA
		w    float64
	}{{"offered", cOffered, colGrey, 1.2}, {"acked", cAcked, colGreen, 1.5}, {"failed (err/timeout)", cFailed, colRed, 1.2}, {"dropped by the open model", cDropped, colOrange, 1.2}} {
		if s.c != cOffered && s.c != cAcked && total(d, s.c) == 0 {
			continue // a flat zero line says nothing the caption does not
		}
		if err := line(p, s.name, rate(d, s.c), s.col, s.w, s.c == cOffered); err != nil {
			return figure{}, err
		}
	}
	fixX(p, d)
	floorY(p, 1)
	cap := fmt.Sprintf("Offered is counted at the intended send time (so a stalled writer shows as a gap between offered and acked), acked and failed at the answer. Totals: offered %d, acked %d, failed %d, dropped %d.",
		total(d, cOffered), total(d, cAcked), total(d, cFailed), total(d, cDropped))
	return render(p, "plot-mutations", "Load", cap, true)
}

func figDelivered(d *Data, _ []mark) (figure, error) {
	p := newTimePlot(d, "Delivered events (file_changed frames, all consumers)", "per second")
	if err := line(p, "delivered", rate(d, cDelivered), colBlue, 1.5, false); err != nil {
		return figure{}, err
	}
	if err := line(p, "acked", rate(d, cAcked), colGreen, 1, true); err != nil {
		return figure{}, err
	}
	fixX(p, d)
	floorY(p, 1)
	return render(p, "plot-delivered", "Delivery", fmt.Sprintf("Every consumer's deliveries add up here: with k consumers per tenant a healthy run delivers about k times the acked rate. Total %d.", total(d, cDelivered)), true)
}

func figLatency(d *Data, _ []mark) (figure, error) {
	p := newTimePlot(d, "Delivery latency by ack time (first delivery to each consumer minus the ack)", "ms (log)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	const floor = 0.01 // ms: a log axis has no zero; deliveries before the ack sit here
	q := func(qq float64) plotter.XYs {
		return seriesOf(d, func(b *bucket) (float64, bool) {
			if b.lat.count == 0 {
				return 0, false
			}
			if qq == 1 {
				return math.Max(b.lat.maxUs/1e3, floor), true
			}
			return math.Max(b.lat.quantile(qq)/1e3, floor), true
		})
	}
	for _, s := range []struct {
		name string
		q    float64
		col  color.NRGBA
	}{{"p50", 0.5, colBlue}, {"p99", 0.99, colOrange}, {"max", 1, colRed}} {
		if err := line(p, s.name, q(s.q), s.col, 1.3, s.q == 1); err != nil {
			return figure{}, err
		}
	}
	fixX(p, d)
	if d.Lat.count == 0 {
		p.Y.Min, p.Y.Max = floor, 1000
	}
	p.Y.Min = math.Max(p.Y.Min, floor)
	p.Y.Max *= 5 // headroom for the fault labels
	return render(p, "plot-latency", "Latency", fmt.Sprintf("Per %.3g s bucket of ack time; a log axis, so p50, p99 and max of a stall all read. Bins are 9%% wide (the verifier's exact quantiles are in the table above). %d deliveries.", d.BucketSeconds(), d.Lat.count), true)
}

// anomalyMarked are the series of the anomaly plot and the witness lists that mark them.
var anomalyMarked = []struct {
	name string
	keys []verifier.WitnessKey
	col  color.NRGBA
}{
	{"lost", []verifier.WitnessKey{verifier.WitnessLost, verifier.WitnessSilent}, colRed},
	{"skipped", []verifier.WitnessKey{verifier.WitnessSkipped}, colPurple},
	{"undelivered", []verifier.WitnessKey{verifier.WitnessUndelivered}, colBrown},
}

func figAnomalies(d *Data, marks []mark) (figure, error) {
	p := newTimePlot(d, "Lost, skipped and undelivered events (lost by the ack time, the others by when the event persisted)", "events per bucket")
	for _, s := range []struct {
		name string
		c    int
		col  color.NRGBA
	}{{"lost", cLost, colRed}, {"skipped", cSkipped, colPurple}, {"undelivered", cUndelivered, colBrown}} {
		xys := count(d, s.c)
		l, err := plotter.NewLine(xys)
		if err != nil {
			return figure{}, err
		}
		l.Color, l.Width, l.StepStyle = s.col, vg.Points(1.5), plotter.MidStep
		p.Add(l)
		addLegend(p, fmt.Sprintf("%s (%d)", s.name, total(d, s.c)), l)
	}
	// Triangles only for the witnesses of the series this plot names, in their series' colour: a
	// witness of anything else (a dropped arrival, a structural op) would sit on a plot that does
	// not show it.
	for _, s := range anomalyMarked {
		var xys plotter.XYs
		for _, m := range marks {
			if slices.Contains(s.keys, verifier.WitnessKey(m.Check)) {
				xys = append(xys, plotter.XY{X: m.T, Y: 0})
			}
		}
		if len(xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return figure{}, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: s.col, Radius: vg.Points(3), Shape: draw.PyramidGlyph{}}
		p.Add(sc)
		addLegend(p, fmt.Sprintf("witness of %s (%d)", s.name, len(xys)), sc)
	}
	fixX(p, d)
	floorY(p, 1)
	return render(p, "plot-anomalies", "Anomalies", "The verifier's counts over time (its anomaly timeline: every instance the summary counts; reset-covered events are not plotted); triangles are the verifier's witnesses of these three series, in their colour, each linked from its table row (witnesses of other checks are on the plots that show them).", true)
}

func figConnections(d *Data, _ []mark) (figure, error) {
	p := newTimePlot(d, "Active load: open SSE connections and mutations in flight", "at the end of each bucket")
	var last float64
	conns := seriesOf(d, func(b *bucket) (float64, bool) {
		if b.conns >= 0 {
			last = float64(b.conns)
		}
		return last, true
	})
	l, err := plotter.NewLine(conns)
	if err != nil {
		return figure{}, err
	}
	l.Color, l.Width, l.StepStyle = colBlue, vg.Points(1.5), plotter.PostStep
	l.FillColor = withAlpha(colBlue, 0x22)
	p.Add(l)
	addLegend(p, "open SSE connections", l)
	var inflight int64
	reqs := seriesOf(d, func(b *bucket) (float64, bool) {
		inflight += b.n[cReqStart] - b.n[cReqEnd]
		return float64(inflight), true
	})
	if err := line(p, "mutations in flight", reqs, colOrange, 1.3, false); err != nil {
		return figure{}, err
	}
	fixX(p, d)
	floorY(p, 1)
	return render(p, "plot-connections", "Active load", "Connections open (conn open minus close and fail records) and mutation requests sent but not yet answered, at the end of each bucket: the open model's concurrency, which grows when the service slows down.", true)
}

func figResets(d *Data, _ []mark) (figure, error) {
	p := newTimePlot(d, "Reconnects, failed connects and resets by reason", "per bucket")
	if err := line(p, fmt.Sprintf("reconnects (%d)", total(d, cReconnects)), count(d, cReconnects), colBlue, 1.5, false); err != nil {
		return figure{}, err
	}
	if n := total(d, cConnFails); n > 0 {
		if err := line(p, fmt.Sprintf("connect failures (%d)", n), count(d, cConnFails), colRed, 1.2, true); err != nil {
			return figure{}, err
		}
	}
	for i, reason := range d.ResetReasons {
		var n int64
		xys := seriesOf(d, func(b *bucket) (float64, bool) {
			if i < len(b.resets) {
				n += b.resets[i]
				return float64(b.resets[i]), true
			}
			return 0, true
		})
		if err := line(p, fmt.Sprintf("reset %s (%d)", reason, n), xys, palette[(i+2)%len(palette)], 1.2, false); err != nil {
			return figure{}, err
		}
	}
	fixX(p, d)
	floorY(p, 1)
	return render(p, "plot-resets", "Reconnects and resets", "A reconnect is a conn open after a consumer's first; resets are the reset frames consumers received, by reason.", true)
}

// OutboxAgeMetric is the outbox's oldest-row age, plotted beside its alert threshold.
const OutboxAgeMetric = "drive9_tenant_outbox_backlog_oldest_age_seconds"

// DefaultOutboxRetention is eventlogd's --outbox-retention default.
const DefaultOutboxRetention = time.Hour

func figMetric(d *Data, i int) (figure, error) {
	name := d.Families[i]
	if name == OutboxAgeMetric && !d.Counters[i] {
		return figOutboxAge(d, i)
	}
	title, y, cap := name+" (max over pods and labels)", "value", "The largest sample of any pod and label set in each bucket."
	if d.Counters[i] {
		title, y, cap = name+" (increase, summed over pods and labels)", "per bucket", "The counter's increase in each bucket, summed over pods and label sets (a restarted counter counts from zero)."
	}
	if strings.HasSuffix(name, "_seconds") {
		y = "seconds"
	}
	p := newTimePlot(d, title, y)
	xys := seriesOf(d, func(b *bucket) (float64, bool) {
		v := b.metricOr(i)
		return v, !math.IsNaN(v)
	})
	if err := line(p, name, xys, palette[i%len(palette)], 1.5, false); err != nil {
		return figure{}, err
	}
	p.Legend = plot.NewLegend() // one series, named in the title
	fixX(p, d)
	floorY(p, 1)
	return render(p, fmt.Sprintf("plot-metric-%d", i), "Scraped: "+name, cap, true)
}

// figOutboxAge plots the outbox's oldest-row age on a log axis beside what it is judged against: the
// retention (a healthy outbox's oldest row ages with the run until the retention prunes it, so the
// line rising with run time is no sign of pinning) and the alert threshold at twice the retention
// (the EventlogdOutboxPinned rule: the prune floor is pinned only when its oldest row outlives that).
func figOutboxAge(d *Data, i int) (figure, error) {
	ret, from := d.OutboxRetention, d.OutboxRetentionFrom
	if ret <= 0 {
		ret, from = DefaultOutboxRetention, "eventlogd's default --outbox-retention"
	}
	threshold := 2 * ret.Seconds()
	p := newTimePlot(d, OutboxAgeMetric+" (max over pods) beside its alert threshold", "seconds (log)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	const floor = 0.1
	var peak float64
	xys := seriesOf(d, func(b *bucket) (float64, bool) {
		v := b.metricOr(i)
		if math.IsNaN(v) {
			return 0, false
		}
		peak = max(peak, v)
		return math.Max(v, floor), true
	})
	if err := line(p, "oldest outbox row's age", xys, colBlue, 1.5, false); err != nil {
		return figure{}, err
	}
	end := math.Max(secs(d.EndNs), d.BucketSeconds())
	flat := func(y float64) plotter.XYs { return plotter.XYs{{X: 0, Y: y}, {X: end, Y: y}} }
	if err := line(p, fmt.Sprintf("retention (%s)", ret), flat(ret.Seconds()), colGrey, 1, true); err != nil {
		return figure{}, err
	}
	if err := line(p, fmt.Sprintf("alert: pinned above %s", 2*ret), flat(threshold), colRed, 1.3, true); err != nil {
		return figure{}, err
	}
	fixX(p, d)
	p.Y.Min, p.Y.Max = floor, threshold*5
	verdict := fmt.Sprintf("Its peak here, %.0f s, is %.1f%% of the threshold.", peak, 100*peak/threshold)
	if peak > threshold {
		verdict = fmt.Sprintf("Its peak here, %.0f s, is above the threshold: the prune floor was pinned.", peak)
	}
	cap := fmt.Sprintf("The age of the oldest tenant_notify_outbox row, the largest sample of any pod in each bucket. In a healthy run it grows with the run's time (the oldest row is as old as the outbox until the retention, %s from %s, prunes it), so its rise alone says nothing; the outbox is pinned only when the age passes twice the retention, the EventlogdOutboxPinned alert's threshold (%s), drawn in red. %s",
		ret, from, 2*ret, verdict)
	return render(p, fmt.Sprintf("plot-metric-%d", i), "Scraped: "+OutboxAgeMetric, cap, true)
}

func figLatencyDist(d *Data) (figure, error) {
	p := plot.New()
	p.Title.Text = "Delivery latency distribution (all first deliveries)"
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = "latency (ms, log)"
	p.Y.Label.Text = "deliveries"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	sans(p)
	const floor = 0.001
	h := &plotter.Histogram{FillColor: withAlpha(colBlue, 0xaa), LineStyle: draw.LineStyle{Color: colBlue, Width: vg.Points(0.5)}}
	for i, n := range d.Lat.bins {
		if n == 0 {
			continue
		}
		lo := math.Max(binLower(i)/1e3, floor)
		h.Bins = append(h.Bins, plotter.HistogramBin{Min: lo, Max: math.Max(binUpper(i)/1e3, lo*1.01), Weight: float64(n)})
	}
	if len(h.Bins) == 0 {
		h.Bins = []plotter.HistogramBin{{Min: 1, Max: 1.1, Weight: 0}}
	}
	p.Add(h)
	p.Y.Min = 0
	p.Y.Max = math.Max(p.Y.Max, 1)
	cap := fmt.Sprintf("p50 %s, p90 %s, p99 %s, p99.9 %s, max %s (from 9%% bins; deliveries before the ack are counted at the left edge).",
		fmtMs(d.Lat.quantile(0.5)/1e3), fmtMs(d.Lat.quantile(0.9)/1e3), fmtMs(d.Lat.quantile(0.99)/1e3), fmtMs(d.Lat.quantile(0.999)/1e3), fmtMs(d.Lat.maxUs/1e3))
	return render(p, "plot-latency-dist", "Latency distribution", cap, false)
}

func fmtMs(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.0f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}
