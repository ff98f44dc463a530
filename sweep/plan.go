// Package sweep plans capacity: it reruns a scenario at increasing load (the offered rate, the number
// of pods or of tenants), each step a full verified `seqgate run`, stops at the first step that breaks
// an SLI, tells a limit of the system under test from a limit of the harness, and fits the Universal
// Scalability Law to the steps. Like power, it reads only what a run leaves behind.
package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/seqgate/seqgate/harness/scenario"
)

// Axis is what a sweep varies.
type Axis string

// The axes a sweep can vary.
const (
	AxisRate    Axis = "rate"    // total offered mutations/s; every load block is scaled by one factor
	AxisPods    Axis = "pods"    // pods.count
	AxisTenants Axis = "tenants" // the count of one tenant group
)

// maxSteps bounds a sweep's length: each step is a full run.
const maxSteps = 32

// ParseValues reads the step values from --rates (a list) or --ramp START:FACTOR with steps steps.
// Values must be positive, finite and strictly increasing.
func ParseValues(list, ramp string, steps int) ([]float64, error) {
	var out []float64
	switch {
	case list != "" && ramp != "":
		return nil, fmt.Errorf("give --rates or --ramp, not both")
	case list != "":
		for _, f := range strings.Split(list, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("--rates: %q is not a positive number", f)
			}
			out = append(out, v)
		}
	case ramp != "":
		a, b, ok := strings.Cut(ramp, ":")
		start, err1 := strconv.ParseFloat(a, 64)
		factor, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil || start <= 0 || factor <= 1 || math.IsInf(start*factor, 0) {
			return nil, fmt.Errorf("--ramp %q: want START:FACTOR with START > 0 and FACTOR > 1, e.g. 100:2", ramp)
		}
		if steps < 2 || steps > maxSteps {
			return nil, fmt.Errorf("--steps %d: want 2..%d", steps, maxSteps)
		}
		for i := range steps {
			out = append(out, start*math.Pow(factor, float64(i)))
		}
	default:
		return nil, fmt.Errorf("give the steps: --rates 100,200,400 or --ramp 100:2")
	}
	if len(out) > maxSteps {
		return nil, fmt.Errorf("%d steps: at most %d (each step is a full run)", len(out), maxSteps)
	}
	for i := 1; i < len(out); i++ {
		if out[i] <= out[i-1] {
			return nil, fmt.Errorf("step values must increase: %g after %g", out[i], out[i-1])
		}
	}
	return out, nil
}

// OfferedRate is the scenario's total offered mutations/s at full load: each constant block's rate
// times the tenants of its group, per its time unit; a ramping block counts at its highest target.
func OfferedRate(sc *scenario.Scenario) float64 {
	var total float64
	for _, l := range sc.Load {
		unit := l.TimeUnit.D().Seconds()
		if unit <= 0 {
			unit = 1
		}
		r := l.Rate
		if l.Executor == "ramping-arrival-rate" {
			r = l.StartRate
			for _, st := range l.Stages {
				r = math.Max(r, st.Target)
			}
		}
		total += r * float64(groupCount(sc, l.Tenants)) / unit
	}
	return total
}

func groupCount(sc *scenario.Scenario, group string) int {
	n := 0
	for _, g := range sc.Tenants {
		if g.Group == group {
			n += g.Count
		}
	}
	return n
}

// Sets returns the --set assignments that turn sc into the step with value v on axis a (group names
// the tenant group for AxisTenants; empty means the first group with load).
func Sets(sc *scenario.Scenario, a Axis, v float64, group string) ([]string, error) {
	switch a {
	case AxisRate:
		base := OfferedRate(sc)
		if base <= 0 {
			return nil, fmt.Errorf("the scenario offers no load to scale")
		}
		f := v / base
		var sets []string
		for i, l := range sc.Load {
			if l.Executor == "ramping-arrival-rate" {
				sets = append(sets, fmt.Sprintf("load[%d].start_rate=%g", i, l.StartRate*f))
				for j, st := range l.Stages {
					sets = append(sets, fmt.Sprintf("load[%d].stages[%d].target=%g", i, j, st.Target*f))
				}
				continue
			}
			sets = append(sets, fmt.Sprintf("load[%d].rate=%g", i, l.Rate*f))
		}
		return sets, nil
	case AxisPods:
		if v != math.Trunc(v) || v < 1 {
			return nil, fmt.Errorf("pods axis: %g is not a whole number of pods", v)
		}
		return []string{fmt.Sprintf("pods.count=%d", int(v))}, nil
	case AxisTenants:
		if v != math.Trunc(v) || v < 1 {
			return nil, fmt.Errorf("tenants axis: %g is not a whole number of tenants", v)
		}
		idx := -1
		for i, g := range sc.Tenants {
			if (group == "" && !g.Cold && loaded(sc, g.Group)) || g.Group == group {
				idx = i
				break
			}
		}
		if idx < 0 {
			return nil, fmt.Errorf("tenants axis: no tenant group %q with load in the scenario", group)
		}
		return []string{fmt.Sprintf("tenants[%d].count=%d", idx, int(v))}, nil
	}
	return nil, fmt.Errorf("axis %q: want rate, pods or tenants", a)
}

func loaded(sc *scenario.Scenario, group string) bool {
	for _, l := range sc.Load {
		if l.Tenants == group {
			return true
		}
	}
	return false
}
