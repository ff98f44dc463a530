package verifier

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seqgate/seqgate/internal/provenance"
)

// Defects are the seeded defects the judged pods ran with (the run record's provenance), none for a
// clean build or a ledger without provenance.
func Defects(s *Summary) []string {
	if p := s.Run.Provenance; p != nil {
		return p.Defects
	}
	return nil
}

// DefectNote qualifies a verdict on a defect build, in the verdict line itself: " (defect build:
// late-commit-skip)"; "" for a clean build.
func DefectNote(s *Summary) string {
	d := Defects(s)
	if len(d) == 0 {
		return ""
	}
	return " (defect build: " + strings.Join(d, ", ") + ")"
}

// ProvenanceItem is one named fact of what a run judged (a line of the text summary and summary.md,
// a row of the report's header, a JUnit property).
type ProvenanceItem struct {
	Name, Value string
}

// Provenance lists what the run judged, in a fixed order: the builds, the pods' binary, flags and
// defects, the overrides and command line, the scenario file and seed, the machine. A ledger
// without provenance gives one item saying so.
func Provenance(s *Summary) []ProvenanceItem {
	p := s.Run.Provenance
	if p == nil {
		return []ProvenanceItem{{"provenance", "none in the ledger (written by a seqgate without it, or by another tool)"}}
	}
	items := []ProvenanceItem{{"seqgate", provenance.Line(p.Seqgate)}}
	if b := p.Pods; b != nil {
		v := b.Path + " sha256 " + b.SHA256
		if b.Version != "" {
			v += ", --version: " + b.Version
		}
		if b.Build != nil {
			v += ", build: " + provenance.Line(*b.Build)
		} else {
			v += ", not a Go binary"
		}
		items = append(items, ProvenanceItem{"pods binary", v})
	} else {
		t := s.Run.Target
		if s.Run.Profile != "" {
			t += " (profile " + s.Run.Profile + ")"
		}
		items = append(items, ProvenanceItem{"pods binary", "none started by the run: target " + t})
	}
	items = append(items,
		ProvenanceItem{"defects", listOr(p.Defects, "none (a clean build)")},
		ProvenanceItem{"pod flags", listOr(p.PodFlags, "none beyond the harness's own")},
		ProvenanceItem{"overrides (--set)", listOr(p.Sets, "none")},
		ProvenanceItem{"command line", listOr(p.Args, "not recorded")},
		ProvenanceItem{"scenario file", fmt.Sprintf("%s sha256 %s, seed %d", orDash(p.ScenarioFile), orDash(p.ScenarioSHA256), s.Run.Seed)},
		ProvenanceItem{"machine", machineLine(s)})
	return items
}

func machineLine(s *Summary) string {
	m := s.Run.Provenance.Machine
	return fmt.Sprintf("%d cores, %s/%s, load average (1/5/15 min) %s at the start, %s at the end",
		m.Cores, orDash(m.OS), orDash(m.Arch), loadLine(m.LoadAvg), loadLine(s.Run.LoadAvgEnd))
}

func loadLine(l []float64) string {
	if len(l) == 0 {
		return "unknown"
	}
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strings.Join(parts, " ")
}

func listOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(xs, " ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
