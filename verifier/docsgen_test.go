package verifier

import (
	"errors"
	"strings"
)

// The docs' tables generated from the descriptors sit between these markers.
const (
	genBegin = "<!-- generated from the verifier's descriptors (verifier/checks.go): go test ./verifier/ -run TestDocsTables -update -->"
	genEnd   = "<!-- end of the generated table -->"
)

// replaceGenerated puts table between doc's markers.
func replaceGenerated(doc, table string) (string, error) {
	i := strings.Index(doc, genBegin)
	j := strings.Index(doc, genEnd)
	if i < 0 || j < i {
		return "", errors.New("no generated table: want the markers " + genBegin + " and " + genEnd)
	}
	return doc[:i+len(genBegin)] + "\n" + table + doc[j:], nil
}

// checksTable is docs/verify.md's table of checks: one row per Title, in the order of checks.
func checksTable() string {
	var b strings.Builder
	b.WriteString("| check (file) | what it means | definition | fails the run | witness fields |\n|---|---|---|---|---|\n")
	var titles []string
	rows := map[string][]*descriptor{}
	for _, d := range checks {
		if d.Title == "" {
			continue
		}
		if rows[d.Title] == nil {
			titles = append(titles, d.Title)
		}
		rows[d.Title] = append(rows[d.Title], d)
	}
	for _, title := range titles {
		ds := rows[title]
		var doc, wit string
		var fails, meanings []string
		gate := "only by threshold"
		for _, d := range ds {
			meanings = append(meanings, "`"+d.Name+"`: "+d.Meaning)
			if doc == "" {
				doc, wit = d.Doc, d.WitnessDoc
			}
			switch {
			case d.Gate == gateFails:
				f := "`" + d.Name + "`"
				if d.FailsDoc != "" {
					f += " " + d.FailsDoc
				}
				fails = append(fails, f)
			case d.Gate == gateInconclusive:
				gate = "makes the run inconclusive (see exit codes)"
			case d.FailsDoc != "":
				gate += " " + d.FailsDoc
			}
		}
		if len(fails) > 0 {
			gate = strings.Join(fails, "; ")
		}
		b.WriteString("| " + title + " (`" + ds[0].File + "`) | " + strings.Join(meanings, "; ") + " | " + doc + " | " + gate + " | " + wit + " |\n")
	}
	b.WriteString("| thresholds (`thresholds.go`) | a bound the scenario sets on one number, with that number's meaning | the run record's `thresholds`, see docs/thresholds.md | `threshold:<path><op><value>` | – (the failure carries the measured value) |\n")
	return b.String()
}

// numbersTable is docs/thresholds.md's table of the checks' numbers.
func numbersTable() string {
	var b strings.Builder
	b.WriteString("| path | check (file) | gates the verdict | needs the audit | witnesses |\n|---|---|---|---|---|\n")
	for _, d := range checks {
		if d.Path == "" {
			continue
		}
		audit, wit := "no", "–"
		if d.NeedsAudit {
			audit = "yes"
		}
		if d.Witness != "" {
			wit = "`" + string(d.Witness) + "`"
		}
		b.WriteString("| `" + d.Path + "` | " + d.Name + " (`" + d.File + "`) | " + d.Gate.String() + " | " + audit + " | " + wit + " |\n")
	}
	return b.String()
}
