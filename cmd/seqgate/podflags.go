package main

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/harness/scenario"
)

// checkPodFlags asks the pod binary bin whether it accepts the scenario's seeded defect
// (pods.eventlogd.defect) and pod flags (pods.eventlogd.flags), so a misspelt one is refused before
// any pod starts, naming the file, the line, the field and what the binary allows. data is the
// scenario file as written, for the lines. A scenario without a defect or flags needs no binary.
func checkPodFlags(ctx context.Context, bin, file string, data []byte, sc *scenario.Scenario) error {
	e := sc.Pods.Eventlogd
	if e.Defect == "" && len(e.Flags) == 0 {
		return nil
	}
	fc, err := pods.CheckFlags(ctx, bin, e.Defect, e.Flags)
	if err != nil {
		return fmt.Errorf("%s: pods.eventlogd: cannot check the pod flags: %w", file, err)
	}
	if len(fc.Problems) == 0 {
		return nil
	}
	p := fc.Problems[0]
	for _, q := range fc.Problems {
		if q.Flag == "defect" { // the defect first: it decides what the run is
			p = q
			break
		}
	}
	if p.Flag == "defect" {
		return scenario.FieldError(file, data, "pods.eventlogd.defect", fmt.Sprintf("%s%s", p.Error, suggest(e.Defect, fc.Defects)), fc.Defects)
	}
	var allowed []string
	for _, f := range fc.Flags {
		if !slices.Contains(scenario.HarnessFlags, f) { // the scenario may not give these
			allowed = append(allowed, f)
		}
	}
	msg := fmt.Sprintf("eventlogd refuses --%s=%s: %s", p.Flag, e.Flags[p.Flag], p.Error)
	if p.Error == "unknown flag" {
		return scenario.FieldError(file, data, "pods.eventlogd.flags."+p.Flag, msg+suggest(p.Flag, allowed), allowed)
	}
	return scenario.FieldError(file, data, "pods.eventlogd.flags."+p.Flag, msg, nil)
}

// suggest names the closest of names to s when it is a likely misspelling (at most a third of its
// letters away), as "; did you mean X?".
func suggest(s string, names []string) string {
	best, dist := "", len(s)/3+1
	for _, n := range names {
		if d := editDistance(s, n); d < dist {
			best, dist = n, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// readSource is the scenario file as written (for the lines of errors found after Parse); nil when
// it cannot be read, which only costs the line numbers.
func readSource(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}
