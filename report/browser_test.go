package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// chromiumPath finds a Chromium or Chrome binary ("" when there is none).
func chromiumPath() string {
	if p := os.Getenv("SEQGATE_CHROMIUM"); p != "" {
		return p
	}
	for _, n := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// browserFigure is what the page shows of one plot, measured in the browser.
type browserFigure struct {
	ID                string
	Timed             bool
	X0, X1, W, T0, T1 float64
	Width, Height     float64      // the SVG's rendered size in CSS pixels
	Bands             [][2]float64 // x and width of every fault band, in SVG units
	Title             string
}

// TestReportInChromium renders the report of a real run (testdata/faults-tour.jsonl.gz, a ledger of
// `seqgate run scenarios/faults-tour.yaml`) in headless Chromium: the page loads with no console
// error, shows the verdict and every plot, every timed plot has a band for every fault of the
// schedule where the ledger's fault records put it, and a witness link places the timeline cursor.
func TestReportInChromium(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		t.Skip("no chromium binary found (/usr/bin/chromium, or SEQGATE_CHROMIUM): the browser test needs one; CI installs Debian's chromium")
	}
	const ledgerPath = "testdata/faults-tour.jsonl.gz"
	in, err := Build([]string{ledgerPath}, nil, nil, verifier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := WriteFiles(page, in); err != nil {
		t.Fatal(err)
	}
	faults := faultSchedule(t, ledgerPath)
	if len(faults) < 3 {
		t.Fatalf("the real run has %d faults: the band check would prove little", len(faults))
	}

	bctx := newBrowser(t, bin)
	problems := watchConsole(t, bctx)
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("#verdict"))); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	verdict, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(".verdict .word")))
	if err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	figs, err := chromedp.Run(bctx, chromedp.Evaluate[[]browserFigure](`Array.from(document.querySelectorAll('figure.plot')).map(f => {
			const svg = f.querySelector('svg'); const r = svg.getBoundingClientRect(); const d = f.dataset;
			const bands = Array.from(svg.querySelectorAll('path')).filter(p => p.style.fillOpacity === '0.2')
				.map(p => { const b = p.getBBox(); return [b.x, b.width]; });
			return {ID: f.id, Timed: f.classList.contains('timed'), X0: +d.x0, X1: +d.x1, W: +d.w, T0: +d.t0, T1: +d.t1,
				Width: r.width, Height: r.height, Bands: bands, Title: f.querySelector('figcaption strong').textContent};
		})`))
	if err != nil {
		t.Fatal(err)
	}
	if verdict != in.Summary.Verdict || !strings.Contains(title, strings.ToUpper(in.Summary.Verdict)) {
		t.Errorf("page shows verdict %q (title %q), the summary says %q", verdict, title, in.Summary.Verdict)
	}
	wantFigs, err := figures(in.Data, nil)
	if err != nil {
		t.Fatal(err)
	}
	panels, err := tenantPanels(in.Data, in.Summary)
	if err != nil {
		t.Fatal(err)
	}
	if len(panels.Panels) == 0 {
		t.Fatal("the real run's report has no per-tenant panel")
	}
	if len(figs) != len(wantFigs)+2*len(panels.Panels) {
		t.Errorf("page shows %d plots, the report made %d and %d tenant panels of 2", len(figs), len(wantFigs), len(panels.Panels))
	}
	checkTextInside(t, bctx)
	checkTenantSelector(t, bctx, panels)
	timed := 0
	for _, f := range figs {
		if f.Width < 300 || f.Height < 100 {
			t.Errorf("plot %s renders at %.0fx%.0f px", f.ID, f.Width, f.Height)
		}
		if !f.Timed {
			if len(f.Bands) != 0 {
				t.Errorf("plot %s is not over time but has %d bands", f.ID, len(f.Bands))
			}
			continue
		}
		timed++
		if len(f.Bands) != len(faults) {
			t.Errorf("plot %s: %d bands for %d faults", f.ID, len(f.Bands), len(faults))
			continue
		}
		unit := (f.T1 - f.T0) / (f.X1 - f.X0) // seconds per SVG unit
		for i, fl := range faults {
			x, w := f.Bands[i][0], f.Bands[i][1]
			start, stop := f.T0+(x-f.X0)*unit, f.T0+(x+w-f.X0)*unit
			tol := 1.6 * unit // the band's edges are drawn to the point; an instantaneous fault is 1.5 units wide
			if diff := start - fl.start; diff > tol || diff < -tol {
				t.Errorf("plot %s: band of %s starts at %.3f s, the schedule says %.3f s", f.ID, fl.id, start, fl.start)
			}
			if diff := stop - fl.stop; diff > tol || diff < -tol {
				t.Errorf("plot %s: band of %s stops at %.3f s, the schedule says %.3f s", f.ID, fl.id, stop, fl.stop)
			}
		}
	}
	if timed < 6 {
		t.Errorf("%d plots over time, want at least 6", timed)
	}

	// A witness link puts the cursor at the witness's time on every plot over time (checked on the
	// anomaly plot).
	linkT, err := chromedp.Run(bctx, chromedp.Evaluate[float64](`parseFloat(document.querySelector('a.tl').getAttribute('data-t'))`))
	if err != nil {
		t.Fatalf("witness link: %v", err)
	}
	// The real run's only witnesses are of a check that is no failure, so their table starts closed.
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.querySelectorAll('details.witness').forEach(d => d.open = true), true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("a.tl"))); err != nil {
		t.Fatalf("witness link: %v", err)
	}
	cursorShown, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`getComputedStyle(document.querySelector('#plot-anomalies .cursor')).display === 'block'`))
	if err != nil {
		t.Fatal(err)
	}
	cursorLeft, err := chromedp.Run(bctx, chromedp.Evaluate[float64](`parseFloat(document.querySelector('#plot-anomalies .cursor').style.left)`))
	if err != nil {
		t.Fatal(err)
	}
	var wantLeft float64
	for _, f := range figs {
		if f.ID == "plot-anomalies" {
			wantLeft = 100 * (f.X0 + (linkT-f.T0)/(f.T1-f.T0)*(f.X1-f.X0)) / f.W
		}
	}
	if !cursorShown || cursorLeft < wantLeft-0.5 || cursorLeft > wantLeft+0.5 {
		t.Errorf("after the witness link (t=%.2f s) the cursor is shown=%v at %.2f%%, want %.2f%%", linkT, cursorShown, cursorLeft, wantLeft)
	}
	for _, p := range problems() {
		t.Errorf("browser: %s", p)
	}
}

// checkTextInside: no text of any plot (legend labels, titles, band labels' start) runs past its
// SVG's right edge, where the browser would cut it off.
func checkTextInside(t *testing.T, bctx context.Context) {
	t.Helper()
	type overflow struct {
		Fig, Text   string
		Right, Edge float64
	}
	over, err := chromedp.Run(bctx, chromedp.Evaluate[[]overflow](`Array.from(document.querySelectorAll('figure.plot svg')).flatMap(svg => {
			const edge = svg.viewBox.baseVal.width;
			return Array.from(svg.querySelectorAll('text')).map(el => { const b = el.getBBox(); return {Fig: svg.closest('figure').id, Text: el.textContent, Right: b.x + b.width, Edge: edge}; })
				.filter(o => o.Right > o.Edge + 0.5);
		})`))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range over {
		t.Errorf("plot %s: text %q ends at %.1f, past the SVG's edge %.1f (cut off)", o.Fig, o.Text, o.Right, o.Edge)
	}
	n, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('figure.plot svg text').length`))
	if err != nil || n < 50 {
		t.Errorf("%d texts in the plots (%v): the overflow check saw too little", n, err)
	}
}

// checkTenantSelector: choosing a tenant shows its panel alone; the empty choice shows them all.
func checkTenantSelector(t *testing.T, bctx context.Context, panels panelSet) {
	t.Helper()
	visible := func() []string {
		v, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('section.tenant-panel')).filter(s => s.offsetParent !== null).map(s => s.dataset.tenant)`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := visible(); len(got) != len(panels.Panels) {
		t.Errorf("%d tenant panels visible, want all %d", len(got), len(panels.Panels))
	}
	pick := panels.Panels[len(panels.Panels)-1].ID
	if err := chromedp.Do(bctx, chromedp.SetValue(chromedp.CSS("#tenant-select"), pick)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.getElementById('tenant-select').dispatchEvent(new Event('change'))`)); err != nil {
		t.Fatal(err)
	}
	if got := visible(); len(got) != 1 || got[0] != pick {
		t.Errorf("after choosing %s the visible panels are %v", pick, got)
	}
	if err := chromedp.Do(bctx, chromedp.SetValue(chromedp.CSS("#tenant-select"), "")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.getElementById('tenant-select').dispatchEvent(new Event('change'))`)); err != nil {
		t.Fatal(err)
	}
	if got := visible(); len(got) != len(panels.Panels) {
		t.Errorf("after choosing all, %d panels visible", len(got))
	}
}

type scheduledFault struct {
	id          string
	start, stop float64
}

// faultSchedule reads the fault records of a ledger on their own, apart from the report's code.
func faultSchedule(t *testing.T, path string) []scheduledFault {
	t.Helper()
	r, err := ledger.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []scheduledFault
	ix := map[string]int{}
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.K != ledger.KindFault {
			continue
		}
		switch rec.Phase {
		case "start":
			ix[rec.ID] = len(out)
			out = append(out, scheduledFault{id: rec.ID, start: float64(rec.T) / 1e9})
		case "stop":
			out[ix[rec.ID]].stop = float64(rec.T) / 1e9
		}
	}
	return out
}

// newBrowser starts headless Chromium for the test; it is stopped when the test ends.
func newBrowser(t *testing.T, bin string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.Flag("headless", true),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1000))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() { bcancel(); acancel(); cancel() })
	return bctx
}

// watchConsole collects the console errors and uncaught exceptions of the page in bctx from now on;
// the returned func stops the browser and returns them.
func watchConsole(t *testing.T, bctx context.Context) func() []string {
	msgs := chromedp.Console(bctx) // subscribes now, before the page loads
	var problems []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleException:
				problems = append(problems, fmt.Sprintf("%s: %s %s", m.Type, m.Text, m.URL))
			case chromedp.ConsoleWarning:
				t.Logf("browser warning: %s", m.Text)
			}
		}
	}()
	return func() []string {
		if err := chromedp.Cancel(bctx); err != nil {
			t.Logf("stopping chromium: %v", err)
		}
		<-done
		return problems
	}
}

// TestConsoleWatchSeesErrors is the negative control of the console check: a page with a script
// error and a console.error is caught.
func TestConsoleWatchSeesErrors(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		t.Skip("no chromium binary found (/usr/bin/chromium, or SEQGATE_CHROMIUM); CI installs Debian's chromium")
	}
	page := filepath.Join(t.TempDir(), "bad.html")
	html := `<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body><p id="x">x</p>` +
		`<script>console.error("planted error"); undefinedFunction();</script>` +
		`<script>document.body.setAttribute("data-done", "1")</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	bctx := newBrowser(t, bin)
	problems := watchConsole(t, bctx)
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS("body[data-done]"))); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems(), "\n")
	if !strings.Contains(got, "planted error") || !strings.Contains(got, "undefinedFunction") {
		t.Errorf("console watch missed the planted problems; saw %q", got)
	}
}
