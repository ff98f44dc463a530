// Package power measures the gate's teeth: for every seeded defect of eventlogd it runs the defect's
// exposing scenario with the defect switched on and the same scenario on the correct build, over
// several seeds, and tabulates whether the expected check caught the defect (detection) and whether
// the correct build passed (no false alarm). It reads only what a run leaves behind (summary.json and
// the exit code), never the verifier's internals.
package power

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Entry is one row of the matrix file: a defect, the scenario that exposes it and the check(s) that
// must catch it. A check name ending in ":" or "." matches every failed check with that prefix (e.g.
// "threshold:metrics.max." for any threshold on a scraped maximum).
type Entry struct {
	Defect   string   `yaml:"defect"`
	Scenario string   `yaml:"scenario"` // relative to the matrix file's folder
	Expect   []string `yaml:"expect"`
	CI       bool     `yaml:"ci,omitempty"` // part of the fast subset CI runs
	Why      string   `yaml:"why"`          // the bug in the field it models, one line
}

// Control is a scenario run on the correct build only, over its own number of seeds: a gate whose
// verdict could depend on what a seed draws (a nemesis, timing) must pass on every one of them, and
// each of its runs counts in the false-alarm rate beside the defects' correct-build runs.
type Control struct {
	Name     string `yaml:"control"`
	Scenario string `yaml:"scenario"`        // relative to the matrix file's folder
	Seeds    int    `yaml:"seeds,omitempty"` // seeds to run (0: power's --seeds)
	CI       bool   `yaml:"ci,omitempty"`
	Why      string `yaml:"why"`
}

// Matrix is the parsed matrix file.
type Matrix struct {
	Entries  []Entry   `yaml:"defects"`
	Controls []Control `yaml:"controls"`
	dir      string
}

var defectName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ReadMatrix reads and checks a matrix file: every defect named once, every scenario present, every
// entry with at least one expected check. Errors name the file, the entry and the field.
func ReadMatrix(path string) (*Matrix, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Matrix
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.dir = filepath.Dir(path)
	seen := map[string]bool{}
	// entry checks what defects and controls share: a name used once, a scenario beside the matrix.
	entry := func(at, kind, name, scenario string) error {
		switch {
		case !defectName.MatchString(name):
			return fmt.Errorf("%s: %s %q is not a name ([a-z0-9-]+)", at, kind, name)
		case seen[name]:
			return fmt.Errorf("%s: %s %q is listed twice (a defect and a control share one namespace)", at, kind, name)
		case scenario == "" || filepath.IsAbs(scenario) || strings.Contains(scenario, ".."):
			return fmt.Errorf("%s (%s): scenario %q must be a file name relative to %s", at, name, scenario, m.dir)
		}
		if _, err := os.Stat(filepath.Join(m.dir, scenario)); err != nil {
			return fmt.Errorf("%s (%s): %w", at, name, err)
		}
		seen[name] = true
		return nil
	}
	for i, e := range m.Entries {
		at := fmt.Sprintf("%s: defects[%d]", path, i)
		if err := entry(at, "defect", e.Defect, e.Scenario); err != nil {
			return nil, err
		}
		if len(e.Expect) == 0 {
			return nil, fmt.Errorf("%s (%s): expect lists no check; name the check(s) that must fail, e.g. [skipped]", at, e.Defect)
		}
	}
	if len(m.Entries) == 0 {
		return nil, fmt.Errorf("%s: no defects", path)
	}
	for i, c := range m.Controls {
		at := fmt.Sprintf("%s: controls[%d]", path, i)
		if err := entry(at, "control", c.Name, c.Scenario); err != nil {
			return nil, err
		}
		if c.Seeds < 0 {
			return nil, fmt.Errorf("%s (%s): seeds %d: need 0 (power's --seeds) or more", at, c.Name, c.Seeds)
		}
	}
	return &m, nil
}

// scenarioPath is where the matrix scenario file name is.
func (m *Matrix) scenarioPath(name string) string { return filepath.Join(m.dir, name) }

// Selection is what one power run measures: defects (each with and without its defect) and
// controls (correct build only).
type Selection struct {
	Defects  []Entry
	Controls []Control
}

// Select returns the defects and controls named in names (every defect and control when names is
// empty; only those marked ci when ci). An unknown name is an error that lists the known ones.
func (m *Matrix) Select(names []string, ci bool) (Selection, error) {
	var sel Selection
	if len(names) == 0 {
		for _, e := range m.Entries {
			if !ci || e.CI {
				sel.Defects = append(sel.Defects, e)
			}
		}
		for _, c := range m.Controls {
			if !ci || c.CI {
				sel.Controls = append(sel.Controls, c)
			}
		}
		return sel, nil
	}
	var known []string
	for _, e := range m.Entries {
		known = append(known, e.Defect)
	}
	for _, c := range m.Controls {
		known = append(known, c.Name)
	}
	for _, n := range names {
		i := slices.Index(known, n)
		switch {
		case i < 0:
			return Selection{}, fmt.Errorf("unknown defect or control %q; the matrix has: %s", n, strings.Join(known, ", "))
		case i < len(m.Entries):
			sel.Defects = append(sel.Defects, m.Entries[i])
		default:
			sel.Controls = append(sel.Controls, m.Controls[i-len(m.Entries)])
		}
	}
	return sel, nil
}

// Caught reports whether any of the failed checks matches one of the expected ones.
func Caught(expect, failed []string) bool {
	for _, x := range expect {
		for _, f := range failed {
			if f == x || (strings.HasSuffix(x, ":") || strings.HasSuffix(x, ".")) && strings.HasPrefix(f, x) {
				return true
			}
		}
	}
	return false
}
