package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Config is everything a sweep was run with, recorded in sweep.json and sweep.md so that a step can be
// rerun by hand on the same system: the scenario file and its hash, the overrides every step file
// carries, the arguments every step's run got, and the values of the resolved scenario a reader asks
// for first (seed, pods, budget).
type Config struct {
	Scenario       string    `json:"scenario"`
	ScenarioSHA256 string    `json:"scenario_sha256"` // of the file as read, before any override
	Seed           int64     `json:"seed"`
	Pods           int       `json:"pods"` // pods.count after the overrides (per step on the pods axis)
	Budget         float64   `json:"budget"`
	Axis           Axis      `json:"axis"`
	Values         []float64 `json:"values"`
	Group          string    `json:"group,omitempty"`
	Sets           []string  `json:"sets"`     // applied to every step file, in order, before the axis's own
	RunArgs        []string  `json:"run_args"` // passed to every step's `seqgate run`
	// FoldedRunArgs are the --run-args, as given, that were overrides (--set, --seed, --duration) and
	// so went into the step files (they are in Sets) instead of the runs' arguments.
	FoldedRunArgs []string `json:"folded_run_args"`
	Limits        Limits   `json:"limits"`
	Refine        float64  `json:"refine,omitempty"` // the refine pass's resolution (0: off)
	RefineSteps   int      `json:"refine_steps,omitempty"`
	RefineSeconds float64  `json:"refine_seconds,omitempty"`
}

// hashHex is the SHA-256 of b in hex.
func hashHex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// SplitRunArgs takes the scenario overrides out of the arguments meant for every step's run: a
// `--set PATH=VALUE` (also `--set=...`), `--seed N` and `--duration D` change the scenario, so they
// must be written into the step files (or a step file rerun by hand would run another system). It
// returns them as --set assignments, in order, and the remaining arguments. Flags sweep itself gives
// every step (`--out`) are refused.
func SplitRunArgs(args []string) (sets, rest []string, err error) {
	sets, rest, _, err = splitRunArgs(args)
	return sets, rest, err
}

// FoldedRunArgs returns the arguments of args that SplitRunArgs takes as overrides, as given.
func FoldedRunArgs(args []string) []string {
	_, _, folded, _ := splitRunArgs(args)
	return folded
}

func splitRunArgs(args []string) (sets, rest, folded []string, err error) {
	overrides := map[string]string{"--set": "", "--seed": "seed=", "--duration": "duration="}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, inline := strings.Cut(a, "=")
		if name == "--out" || name == "-o" {
			return nil, nil, nil, fmt.Errorf("--run-arg %q: sweep gives each step its own --out (use sweep's --out)", a)
		}
		prefix, ok := overrides[name]
		if !ok {
			rest = append(rest, a)
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return nil, nil, nil, fmt.Errorf("--run-arg %q: its value is missing (write --set=PATH=VALUE, or better sweep's own --set)", a)
			}
			i++
			value = args[i]
			folded = append(folded, a)
		}
		folded = append(folded, args[i])
		if name == "--set" && !strings.Contains(value, "=") {
			return nil, nil, nil, fmt.Errorf("--run-arg %s=%q: want PATH=VALUE (use sweep's own --set)", name, value)
		}
		sets = append(sets, prefix+value)
	}
	return sets, rest, folded, nil
}
