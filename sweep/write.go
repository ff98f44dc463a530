package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/seqgate/seqgate/internal/proccpu"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// WriteJSON writes the result (sweep.json).
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteMarkdown writes the capacity table and its conclusions (sweep.md).
func WriteMarkdown(w io.Writer, r *Result) error {
	var b strings.Builder
	writeConfig(&b, r)
	fmt.Fprintf(&b, "| step | %s | offered/s | sent/s | acked/s | delivered/s | p50 ms | p99 ms | lost | dropped | buffer max | in flight (mean/max) | CPU cores (machine busy) | CPU by component (cores) | ran out | slip p99 ms | projection | result |\n", r.Axis)
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Steps {
		result := "held"
		if len(s.Broke) > 0 {
			result = "**broke**: " + strings.Join(s.Broke, "; ")
		}
		if s.Harness != "" {
			result += " (harness: " + s.Harness + ")"
		}
		lost := fmt.Sprintf("%g", s.Lost)
		for k, v := range s.LostByReason {
			lost += fmt.Sprintf(" %s=%g", k, v)
		}
		index := fmt.Sprint(s.Index)
		if s.Refine {
			index += " (refine)"
		}
		fmt.Fprintf(&b, "| %s | %g | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %d (%.1f%%) | %g | %.1f / %.0f | %.2f (%.0f%%) | %s | %s | %.2f | %.2g | %s |\n",
			index, s.Value, s.OfferedPerS, s.SentPerS, s.AckedPerS, s.DeliveredPerS, s.P50Ms, s.P99Ms, lost,
			s.Dropped, 100*s.DroppedFrac, s.BufferMax, s.Concurrency, s.MaxInFlight, s.CPUCores, 100*s.MachineBusy, componentCells(s.Components), s.RanOut, s.SlipP99Ms, s.Projection, result)
	}
	b.WriteString("\n")
	b.WriteString(Conclusion(r))
	_, err := io.WriteString(w, b.String())
	return err
}

// componentCells is each component's cores in one table cell ("seqgate 0.42, pod-1 0.31, db 0.58").
func componentCells(w *proccpu.Window) string {
	if w == nil {
		return "not measured"
	}
	var cs []string
	for _, c := range w.Components {
		if c.Measured {
			cs = append(cs, fmt.Sprintf("%s %.2f", c.Name, c.Cores))
		} else {
			cs = append(cs, c.Name+" "+c.Note)
		}
	}
	return strings.Join(cs, ", ")
}

// writeConfig writes what the sweep ran: enough to rerun any step on the same system.
func writeConfig(b *strings.Builder, r *Result) {
	c := r.Config
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		q := make([]string, len(xs))
		for i, x := range xs {
			q[i] = "`" + strings.ReplaceAll(x, "`", "'") + "`"
		}
		return strings.Join(q, " ")
	}
	fmt.Fprintf(b, "Sweep of `%s` (sha256 %s) over %s %v", c.Scenario, c.ScenarioSHA256, c.Axis, c.Values)
	if c.Group != "" {
		fmt.Fprintf(b, " (group %s)", c.Group)
	}
	b.WriteString(".\n\n")
	fmt.Fprintf(b, "- seed %d, pods %d, loss budget %g\n", c.Seed, c.Pods, c.Budget)
	fmt.Fprintf(b, "- `--set` (in every step file, before the axis's own): %s\n", list(c.Sets))
	fmt.Fprintf(b, "- `--run-arg` (given to every step's run): %s", list(c.RunArgs))
	if len(c.FoldedRunArgs) > 0 {
		fmt.Fprintf(b, "; overrides given as `--run-arg`, written into the step files with the `--set`s: %s", list(c.FoldedRunArgs))
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "- limits: p99 <= %g ms, dropped <= %g, harness slip p99 <= %g ms, %d cores\n", c.Limits.P99Ms, c.Limits.MaxDropped, c.Limits.MaxSlipMs, c.Limits.Cores)
	if c.Refine > 0 {
		fmt.Fprintf(b, "- refine: to %g%%, at most %d more %s and %s\n", 100*c.Refine, c.RefineSteps, map[bool]string{true: "step", false: "steps"}[c.RefineSteps == 1],
			time.Duration(c.RefineSeconds*float64(time.Second)))
	}
	if len(r.Steps) > 0 {
		fmt.Fprintf(b, "- rerun a step by hand: `seqgate run %s", r.Steps[0].File)
		for _, a := range c.RunArgs {
			b.WriteString(" " + shellWord(a))
		}
		b.WriteString("` (each step's file is `step-NN.yaml` beside its directory)\n")
	}
	b.WriteString("\n")
}

// Conclusion is the sweep's answer in words: the highest value that held, what broke next and whose
// limit that was, and the USL model checked against the measured knee.
func Conclusion(r *Result) string {
	var b strings.Builder
	switch {
	case r.Held > 0:
		fmt.Fprintf(&b, "Capacity: the highest %s that held every SLI is **%g** (%.1f acked/s).\n", r.Axis, r.Held, r.HeldAcked)
	default:
		fmt.Fprintf(&b, "Capacity: no step held every SLI.\n")
	}
	switch {
	case r.BrokeAt > 0 && r.Harness != "":
		fmt.Fprintf(&b, "At %g the run broke (%s), but %s: that step cannot tell the service's limit from the harness's; rerun it with more CPU for the harness or with --target on another machine.\n",
			r.BrokeAt, strings.Join(r.BrokeBy, "; "), r.Harness)
	case r.BrokeAt > 0:
		fmt.Fprintf(&b, "At %g the service broke: %s.\n", r.BrokeAt, strings.Join(r.BrokeBy, "; "))
	default:
		fmt.Fprintf(&b, "No step broke an SLI: the knee is above the last step.\n")
	}
	for _, s := range r.Steps {
		if r.BrokeAt > 0 && s.Value == r.BrokeAt && s.RanOut != "" {
			fmt.Fprintf(&b, "CPU at %g (per component, over the load phase): %s; ran out: %s.\n", s.Value, componentCells(s.Components), s.RanOut)
		}
	}
	if r.Refined != "" {
		fmt.Fprintf(&b, "Refine: %s.\n", r.Refined)
	}
	if r.Fit == nil {
		fmt.Fprintf(&b, "USL: not fitted (%s).\n", r.FitError)
		return b.String()
	}
	u := r.Fit
	fmt.Fprintf(&b, "USL fit over %d steps (N = %s, X = acked/s): λ = %.3g, σ (contention) = %.3g, κ (coherency) = %.3g, R² = %.3f. ",
		u.Points, r.FitLoad, u.Lambda, u.Sigma, u.Kappa, u.R2)
	switch {
	case u.Peaks:
		fmt.Fprintf(&b, "Predicted peak: %.1f acked/s at N = %.1f.", u.PeakX, u.PeakN)
	case u.PeakX > 0:
		fmt.Fprintf(&b, "No retrograde region (κ = 0): throughput approaches %.1f acked/s.", u.PeakX)
	default:
		b.WriteString("Linear within the measured range: no peak predicted.")
	}
	if r.BrokeAt > 0 && u.PeakX > 0 {
		var measured float64
		for _, s := range r.Steps {
			measured = max(measured, s.AckedPerS)
		}
		fmt.Fprintf(&b, " Measured: the highest acked rate was %.1f/s (%.0f%% of the prediction).", measured, 100*measured/u.PeakX)
	}
	b.WriteString("\n")
	return b.String()
}

// WriteSVG draws the sweep: throughput (offered, acked, delivered, and the USL model) and delivery
// latency (p50, p99) against the axis, with the highest value that held marked.
func WriteSVG(w io.Writer, r *Result) error {
	if len(r.Steps) == 0 {
		return fmt.Errorf("no steps to plot")
	}
	thr := plot.New()
	thr.Title.Text = "Throughput"
	thr.X.Label.Text = string(r.Axis)
	thr.Y.Label.Text = "per second"
	lat := plot.New()
	lat.Title.Text = "Delivery latency"
	lat.X.Label.Text = string(r.Axis)
	lat.Y.Label.Text = "ms"
	series := func(f func(Step) float64) plotter.XYs {
		var xy plotter.XYs
		for _, s := range r.Steps {
			xy = append(xy, plotter.XY{X: s.Value, Y: f(s)})
		}
		return xy
	}
	var yMaxThr, yMaxLat float64
	for i, c := range []struct {
		p    *plot.Plot
		name string
		f    func(Step) float64
	}{
		{thr, "offered", func(s Step) float64 { return s.OfferedPerS }},
		{thr, "acked", func(s Step) float64 { return s.AckedPerS }},
		{thr, "delivered", func(s Step) float64 { return s.DeliveredPerS }},
		{lat, "p50", func(s Step) float64 { return s.P50Ms }},
		{lat, "p99", func(s Step) float64 { return s.P99Ms }},
	} {
		xy := series(c.f)
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		pts.Color = l.Color
		c.p.Add(l, pts)
		c.p.Legend.Add(c.name, l)
		for _, p := range xy {
			if c.p == thr {
				yMaxThr = max(yMaxThr, p.Y)
			} else {
				yMaxLat = max(yMaxLat, p.Y)
			}
		}
	}
	if r.Fit != nil && r.Axis == AxisPods {
		var xy plotter.XYs
		last := r.Steps[len(r.Steps)-1].Value
		for i := 0; i <= 50; i++ {
			n := 1 + (last-1)*float64(i)/50
			xy = append(xy, plotter.XY{X: n, Y: r.Fit.X(n)})
		}
		if l, err := plotter.NewLine(xy); err == nil {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			thr.Add(l)
			thr.Legend.Add("USL model", l)
		}
	}
	if r.Held > 0 {
		for _, pr := range []struct {
			p  *plot.Plot
			hi float64
		}{{thr, yMaxThr}, {lat, yMaxLat}} {
			l, err := plotter.NewLine(plotter.XYs{{X: r.Held, Y: 0}, {X: r.Held, Y: pr.hi}})
			if err != nil {
				return err
			}
			l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			pr.p.Add(l)
			pr.p.Legend.Add(fmt.Sprintf("held at %g", r.Held), l)
		}
	}
	thr.Legend.Top, lat.Legend.Top = true, true
	thr.Legend.Left, lat.Legend.Left = true, true
	const width, height = 8 * vg.Inch, 7 * vg.Inch
	c := vgsvg.New(width, height)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(12), PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12)}
	canvases := plot.Align([][]*plot.Plot{{thr}, {lat}}, tiles, dc)
	thr.Draw(canvases[0][0])
	lat.Draw(canvases[1][0])
	_, err := c.WriteTo(w)
	return err
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./=:,@+%-]+$`)

// shellWord quotes a for a POSIX shell when it holds anything but plain characters (a backquote,
// which would end the Markdown code span, becomes a quote).
func shellWord(a string) string {
	a = strings.ReplaceAll(a, "`", "'")
	if plainWord.MatchString(a) {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
