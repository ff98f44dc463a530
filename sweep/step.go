package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seqgate/seqgate/harness/child"
	"github.com/seqgate/seqgate/internal/proccpu"

	"github.com/seqgate/seqgate/ledger"
)

// Step is one measured step of a sweep.
type Step struct {
	Index   int      `json:"index"`
	Value   float64  `json:"value"` // the axis value (offered/s, pods or tenants)
	Dir     string   `json:"dir"`
	File    string   `json:"file"`             // the step's scenario file (rerun it with seqgate run FILE)
	Sets    []string `json:"sets"`             // the axis's overrides of this step, after the sweep's --set
	Refine  bool     `json:"refine,omitempty"` // a step of the refine pass
	Exit    int      `json:"exit"`
	Verdict string   `json:"verdict"`
	Failed  []string `json:"failed_checks"`

	OfferedPerS   float64 `json:"offered_per_s"` // arrivals the schedule drew
	SentPerS      float64 `json:"sent_per_s"`
	AckedPerS     float64 `json:"acked_per_s"`
	DeliveredPerS float64 `json:"delivered_per_s"`
	Dropped       int64   `json:"dropped"` // arrivals the open model did not send (slots busy)
	DroppedFrac   float64 `json:"dropped_fraction"`

	P50Ms        float64            `json:"latency_p50_ms"`
	P99Ms        float64            `json:"latency_p99_ms"`
	Lost         float64            `json:"lost"`
	LostByReason map[string]float64 `json:"lost_by_reason,omitempty"`
	Projection   float64            `json:"projection"`
	BufferMax    float64            `json:"buffer_depth_max"`

	CPUCores    float64 `json:"cpu_cores"`     // CPU of the whole run (seqgate, pods, DB) per wall second
	MachineBusy float64 `json:"machine_busy"`  // share of the machine's CPU busy during the step (any process)
	SlipP99Ms   float64 `json:"slip_p99_ms"`   // the harness's schedule slip: send time minus intended time
	Concurrency float64 `json:"concurrency"`   // mean mutations in flight (Little's law over the ledger)
	MaxInFlight float64 `json:"max_in_flight"` // highest number of mutations in flight at once
	// Components is each component's CPU over the step's load phase (the run's result.json cpu
	// block: seqgate, every pod, the DB server); nil when the run did not measure it.
	Components *proccpu.Window `json:"cpu_by_component"`
	RanOut     string          `json:"ran_out"` // which component ran out of CPU, or "none" and the busiest

	Broke   []string `json:"broke,omitempty"`   // the SLIs this step broke
	Harness string   `json:"harness,omitempty"` // why the harness, not the service, may be the limit
}

// Limits are the SLIs a step must hold beyond the scenario's own verdict.
type Limits struct {
	P99Ms      float64 `json:"p99_max_ms"`  // delivery p99 bound in ms (0: none beyond the scenario's thresholds)
	MaxDropped float64 `json:"max_dropped"` // open-model drops as a fraction of arrivals
	MaxSlipMs  float64 `json:"max_slip_ms"` // the harness's p99 schedule slip above which the harness is the limit
	Cores      int     `json:"cores"`       // cores of this machine; a run using nearly all of them saturated it
}

// measure fills a step from its run directory: summary.json (the verdict), result.json (the load) and
// the ledger (slip and concurrency, from the mutation records in one streaming pass).
func measure(st *Step, lim Limits) error {
	sum, err := child.ReadSummary(st.Dir)
	if err != nil {
		return err
	}
	st.Verdict, st.Failed = sum.Verdict, sum.Failed
	num := func(path string) float64 { v, _ := sum.Number(path); return v }
	st.P50Ms = num("latency_ms.p50")
	st.P99Ms = num("latency_ms.p99")
	st.Lost = num("lost")
	st.Projection = num("projection.fraction")
	st.BufferMax = num("metrics.max.drive9_sse_event_retry_buffer_depth")
	st.LostByReason = sum.Numbers("lost_by_reason")
	var res struct {
		Offered     int64           `json:"offered"`
		Dropped     int64           `json:"dropped"`
		Acked       int64           `json:"acked"`
		Delivered   int64           `json:"events_delivered"`
		LoadSeconds float64         `json:"load_seconds"`
		Scheduled   float64         `json:"scheduled_seconds"`
		CPU         *proccpu.Window `json:"cpu"`
	}
	if err := readJSON(filepath.Join(st.Dir, "result.json"), &res); err != nil {
		return err
	}
	secs := rateSeconds(res.Scheduled, res.LoadSeconds)
	if secs <= 0 {
		return errors.New("result.json: no load phase")
	}
	st.OfferedPerS = float64(res.Offered) / secs
	st.SentPerS = float64(res.Offered-res.Dropped) / secs
	st.AckedPerS = float64(res.Acked) / secs
	st.DeliveredPerS = float64(res.Delivered) / secs
	st.Dropped = res.Dropped
	st.Components = res.CPU
	if res.Offered > 0 {
		st.DroppedFrac = float64(res.Dropped) / float64(res.Offered)
	}
	if err := ledgerStats(st, secs); err != nil {
		return err
	}
	judge(st, lim)
	return nil
}

// rateSeconds is what a step's rates divide by: the scheduled duration, as the run's own
// result.json does (an offered rate then equals the step's rate; the load phase's overrun of a few
// ms does not lower it), or the elapsed time when the phase was cut short (or the run predates
// scheduled_seconds).
func rateSeconds(scheduled, load float64) float64 {
	if scheduled <= 0 || (load > 0 && load < scheduled) {
		return load
	}
	return scheduled
}

// ledgerStats reads the mutation records: the p99 of t - intended_t, the mean number in flight
// (sum of durations over the load phase) and the highest number in flight at once.
func ledgerStats(st *Step, loadSeconds float64) error {
	paths, _ := filepath.Glob(filepath.Join(st.Dir, "ledger.jsonl*"))
	if len(paths) == 0 {
		return errors.New("no ledger in the run directory")
	}
	r, err := ledger.Open(paths[0])
	if err != nil {
		return err
	}
	defer r.Close()
	var slips []int64
	var busy float64
	type edge struct {
		t     int64
		delta int
	}
	var edges []edge
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if rec.K != "mut" {
			continue
		}
		slips = append(slips, rec.T-rec.IntendedT)
		if rec.DoneT > rec.T {
			busy += float64(rec.DoneT-rec.T) / 1e9
			edges = append(edges, edge{rec.T, 1}, edge{rec.DoneT, -1})
		}
	}
	if len(slips) > 0 {
		sort.Slice(slips, func(i, j int) bool { return slips[i] < slips[j] })
		st.SlipP99Ms = float64(slips[(len(slips)*99)/100]) / 1e6
	}
	st.Concurrency = busy / loadSeconds
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].delta < edges[j].delta
	})
	cur := 0
	for _, e := range edges {
		cur += e.delta
		st.MaxInFlight = max(st.MaxInFlight, float64(cur))
	}
	return nil
}

// ranOut says which component ran out of CPU in a step: the machine when its cores were all busy
// (90% or more, any process counted), else a component at 0.9 of a core or more (a part bound to one
// core would have run out), else "none" with the busiest.
func ranOut(st *Step, lim Limits) string {
	w := st.Components
	if w == nil {
		return "not measured (the run wrote no cpu block)"
	}
	u, near, ok := w.Busiest()
	busiest := ""
	if ok {
		busiest = fmt.Sprintf("; busiest %s at %.2f cores", u.Name, u.Cores)
	}
	cores := lim.Cores
	if cores == 0 {
		cores = w.Cores
	}
	switch {
	case st.MachineBusy >= 0.9 || (cores > 0 && st.CPUCores >= 0.9*float64(cores)):
		return fmt.Sprintf("the machine: all %d cores busy (%.0f%%)%s", cores, 100*max(st.MachineBusy, st.CPUCores/float64(max(cores, 1))), busiest)
	case !ok:
		return "not measured: " + notes(w)
	case near:
		return fmt.Sprintf("%s: %.2f cores, near a full core", u.Name, u.Cores)
	}
	return "none" + busiest
}

// notes joins the reasons components have no figure.
func notes(w *proccpu.Window) string {
	var ns []string
	for _, c := range w.Components {
		if !c.Measured {
			ns = append(ns, c.Name+" "+c.Note)
		}
	}
	return strings.Join(ns, "; ")
}

// judge names the SLIs the step broke and whether the harness may have been the limit.
func judge(st *Step, lim Limits) {
	st.RanOut = ranOut(st, lim)
	if st.Verdict != "pass" {
		if len(st.Failed) == 0 {
			st.Broke = append(st.Broke, "verdict "+st.Verdict)
		}
		st.Broke = append(st.Broke, st.Failed...)
	}
	if lim.P99Ms > 0 && st.P99Ms > lim.P99Ms {
		st.Broke = append(st.Broke, fmt.Sprintf("latency p99 %.0f ms > %.0f ms", st.P99Ms, lim.P99Ms))
	}
	if st.DroppedFrac > lim.MaxDropped {
		st.Broke = append(st.Broke, fmt.Sprintf("dropped %.1f%% of arrivals > %.1f%% (the open model could not send them)", 100*st.DroppedFrac, 100*lim.MaxDropped))
	}
	switch {
	case lim.MaxSlipMs > 0 && st.SlipP99Ms > lim.MaxSlipMs:
		st.Harness = fmt.Sprintf("the load generator slipped behind its schedule (p99 %.1f ms > %.1f ms)", st.SlipP99Ms, lim.MaxSlipMs)
	case lim.Cores > 0 && st.CPUCores >= 0.9*float64(lim.Cores):
		st.Harness = fmt.Sprintf("the machine was saturated (%.2f of %d cores for seqgate, pods and DB together)", st.CPUCores, lim.Cores)
	case st.MachineBusy >= 0.9:
		st.Harness = fmt.Sprintf("the machine's CPU was %.0f%% busy during the step (other processes included): the service, the DB and seqgate competed for it", 100*st.MachineBusy)
	}
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
