package report

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"html/template"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// figure is one plot, rendered to inline SVG, with the x mapping of its data area so that the page
// can place a cursor at a run time (a witness link) and a test can find the fault bands.
type figure struct {
	ID, Title, Caption string
	SVG                template.HTML
	Timed              bool    // the x axis is the run's time axis
	X0, X1, W          float64 // data area's left and right edge and the SVG width, in SVG units
	T0, T1             float64 // run seconds at X0 and X1
}

// Plot geometry in points (the SVG scales to the page width).
const (
	plotW   = 8.6 * vg.Inch
	plotH   = 2.7 * vg.Inch
	legendW = 1.6 * vg.Inch // the legend column of plots over time
)

// bandAlpha is the opacity of fault bands; nothing else in a plot uses it, so the page's test finds
// bands by it.
const bandAlpha = 0x33

var (
	colGrey   = color.NRGBA{0x7f, 0x7f, 0x7f, 0xff}
	colGreen  = color.NRGBA{0x2c, 0xa0, 0x2c, 0xff}
	colRed    = color.NRGBA{0xd6, 0x27, 0x28, 0xff}
	colOrange = color.NRGBA{0xff, 0x7f, 0x0e, 0xff}
	colBlue   = color.NRGBA{0x1f, 0x77, 0xb4, 0xff}
	colPurple = color.NRGBA{0x94, 0x67, 0xbd, 0xff}
	colBrown  = color.NRGBA{0x8c, 0x56, 0x4b, 0xff}
	colPink   = color.NRGBA{0xe3, 0x77, 0xc2, 0xff}
	colOlive  = color.NRGBA{0xbc, 0xbd, 0x22, 0xff}
	colCyan   = color.NRGBA{0x17, 0xbe, 0xcf, 0xff}
	palette   = []color.NRGBA{colBlue, colOrange, colGreen, colRed, colPurple, colBrown, colPink, colGrey, colOlive, colCyan}
)

// kindColors gives the fault kinds a person meets most a fixed colour; others hash into the palette.
var kindColors = map[string]color.NRGBA{
	"tenant_db_stall":     colOrange,
	"tenant_db_latency":   colOlive,
	"tenant_db_down":      colRed,
	"meta_db_down":        colBrown,
	"meta_db_stall":       colPurple,
	"pod_crash":           colRed,
	"pod_pause":           colCyan,
	"pod_restart":         colBlue,
	"consumer_disconnect": colPink,
	"slow_consumer":       colGreen,
}

func kindColor(kind string) color.NRGBA {
	if c, ok := kindColors[kind]; ok {
		return c
	}
	h := fnv.New32a()
	h.Write([]byte(kind))
	return palette[int(h.Sum32())%len(palette)]
}

func withAlpha(c color.NRGBA, a uint8) color.NRGBA { c.A = a; return c }

// bands draws every fault of the schedule as a shaded band over the whole height of the data area,
// labelled with its kind and target.
type bands struct{ faults []Fault }

func (b bands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := p.X.Tick.Label
	sty.Font.Size = vg.Points(7)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	for i, f := range b.faults {
		x0, x1 := trX(secs(f.StartNs)), trX(secs(f.StopNs))
		x0, x1 = max(x0, c.Min.X), min(x1, c.Max.X)
		if x1 < c.Min.X || x0 > c.Max.X {
			continue
		}
		if x1-x0 < 1.5 {
			x1 = x0 + 1.5 // an instantaneous fault still shows
		}
		col := kindColor(f.Kind)
		c.FillPolygon(withAlpha(col, bandAlpha), []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
		sty.Color = darker(col)
		c.FillText(sty, vg.Point{X: x0 + 2, Y: c.Max.Y - vg.Length(i%3)*9 - 1}, f.Kind+" "+f.Target)
	}
}

func darker(c color.NRGBA) color.NRGBA {
	return color.NRGBA{uint8(float64(c.R) * 0.6), uint8(float64(c.G) * 0.6), uint8(float64(c.B) * 0.6), 0xff}
}

func secs(ns int64) float64 { return float64(ns) / 1e9 }

// newTimePlot is a plot over the run's time axis with the fault bands underneath everything else.
func newTimePlot(d *Data, title, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = "run time (s)"
	p.Y.Label.Text = ylabel
	p.X.Min, p.X.Max = 0, math.Max(secs(d.EndNs), d.BucketSeconds())
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	p.Add(plotter.NewGrid())
	p.Add(bands{d.Faults})
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.ThumbnailWidth = vg.Points(14)
	p.Legend.Padding = vg.Points(2) // entries of one line each would otherwise touch
	sans(p)
	return p
}

// sans sets every text of p in Liberation Sans (gonum's default is the serif face), which reads
// better on screen; the page names common fallbacks for viewers without it.
func sans(p *plot.Plot) {
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Typeface, f.Variant = "Liberation", "Sans"
	}
	p.X.Label.TextStyle.Font.Size = vg.Points(10)
	p.Y.Label.TextStyle.Font.Size = vg.Points(10)
}

// fixX keeps the axis on the run's time span after lines widened it.
func fixX(p *plot.Plot, d *Data) {
	p.X.Min, p.X.Max = 0, math.Max(secs(d.EndNs), d.BucketSeconds())
}

// line adds a named series; a series with no points is left out.
func line(p *plot.Plot, name string, xys plotter.XYs, col color.NRGBA, width float64, dashed bool) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("series %s: %w", name, err)
	}
	l.Color = col
	l.Width = vg.Points(width)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	}
	p.Add(l)
	addLegend(p, name, l)
	return nil
}

// render draws p to SVG and notes where its data area lies.
func render(p *plot.Plot, id, title, caption string, timed bool) (figure, error) {
	return renderH(p, id, title, caption, timed, plotH)
}

// renderH is render at height h.
func renderH(p *plot.Plot, id, title, caption string, timed bool, h vg.Length) (figure, error) {
	c := vgsvg.New(plotW, h)
	dc := draw.New(c)
	area := dc
	legend := p.Legend
	if timed {
		// Plots over time keep their legend in a column of its own, beside the data: it hides no
		// band label, and every timed plot's x axis lines up with the others'.
		area = draw.Crop(dc, 0, -legendW, 0, 0)
		p.Legend = plot.NewLegend()
	}
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil { // gonum panics on impossible ranges (a log axis of zeros)
				err = fmt.Errorf("plot %s: %v", id, r)
			}
		}()
		p.Draw(area)
		if timed {
			legend.Top, legend.Left, legend.XOffs = true, true, 0
			legend.Draw(draw.Crop(dc, plotW-legendW+vg.Points(8), 0, 0, -vg.Points(22)))
		}
	}()
	if err != nil {
		return figure{}, err
	}
	da := p.DataCanvas(area)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return figure{}, fmt.Errorf("plot %s: %w", id, err)
	}
	return figure{ID: id, Title: title, Caption: caption, SVG: template.HTML(inlineSVG(buf.String())), Timed: timed,
		X0: da.Min.X.Points(), X1: da.Max.X.Points(), W: plotW.Points(), T0: p.X.Min, T1: p.X.Max}, nil
}

var (
	svgHeader = regexp.MustCompile(`(?s)^<\?xml[^>]*\?>\s*(<!--.*?-->\s*)?`)
	svgSize   = regexp.MustCompile(`<svg width="[^"]*" height="[^"]*"`)
)

// inlineSVG makes a standalone SVG document fit for inlining in HTML: no XML prolog, the width of
// its container, and font families a browser has.
func inlineSVG(s string) string {
	s = svgHeader.ReplaceAllString(s, "")
	s = svgSize.ReplaceAllString(s, `<svg class="plot-svg" width="100%" role="img"`)
	return strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
}

// plainTicks are gonum's default ticks with labels in the shortest form (2500, not 2500.00).
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}

// legendText is the room a legend label has in the legend column of a plot over time: the column
// less its left offset, the thumbnail, the space after it and a margin.
func legendText(p *plot.Plot) vg.Length {
	em := p.Legend.TextStyle.Rectangle(" ").Max.X
	return legendW - vg.Points(8) - p.Legend.ThumbnailWidth - em - vg.Points(4)
}

// addLegend adds a legend entry whose label is wrapped onto as many lines as it needs to fit the
// legend column (a word too long for a line is broken inside), so no label runs off the plot.
func addLegend(p *plot.Plot, name string, thumbs ...plot.Thumbnailer) {
	p.Legend.Add(wrapLabel(name, legendText(p), func(s string) vg.Length { return p.Legend.TextStyle.Rectangle(s).Max.X }), thumbs...)
}

// wrapLabel breaks s into lines no wider than room as measured by width.
func wrapLabel(s string, room vg.Length, width func(string) vg.Length) string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		for width(w) > room && len([]rune(w)) > 1 { // break a long word where it stops fitting
			r := []rune(w)
			n := len(r) - 1
			for n > 1 && width(string(r[:n])) > room {
				n--
			}
			if cur != "" {
				lines, cur = append(lines, cur), ""
			}
			lines = append(lines, string(r[:n]))
			w = string(r[n:])
		}
		switch {
		case cur == "":
			cur = w
		case width(cur+" "+w) <= room:
			cur += " " + w
		default:
			lines, cur = append(lines, cur), w
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return strings.Join(lines, "\n")
}
