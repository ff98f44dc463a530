package power

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteJSON writes the result as indented JSON (power.json).
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteMarkdown writes the matrix as a Markdown table (power.md): one line per defect and seed with
// the defect arm (caught by the expected check or not, its failed checks and numbers) beside the
// correct arm (passed or not), then the detection and false-alarm rates. Overrides every run had
// (--set) head it: the figures hold for that configuration.
func WriteMarkdown(w io.Writer, r *Result) error {
	var b strings.Builder
	if len(r.Sets) > 0 {
		fmt.Fprintf(&b, "Every run with: `--set %s`\n\n", strings.Join(r.Sets, "` `--set "))
	}
	if r.DB != "" {
		fmt.Fprintf(&b, "Every run on the database server `--dsn %s`\n\n", r.DB)
	}
	if len(r.Rows) > 0 {
		fmt.Fprintf(&b, "| defect | scenario | expected check | seed | defect on: caught | failed checks | numbers | correct build |\n")
		fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|\n")
	}
	for _, row := range r.Rows {
		for i, d := range row.Defected {
			c := Arm{}
			if i < len(row.Correct) {
				c = row.Correct[i]
			}
			caught := "**no**"
			if d.OK {
				caught = "yes"
			}
			correct := fmt.Sprintf("**%s** (%s)", c.Verdict, strings.Join(c.Failed, ", "))
			if c.OK {
				correct = "pass"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s |\n", row.Defect, row.Scenario,
				strings.Join(row.Expect, ", "), d.Seed, caught, orDash(strings.Join(d.Failed, ", ")), nums(d), correct)
		}
	}
	if len(r.Controls) > 0 {
		if len(r.Rows) > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "| control (correct build only) | scenario | seed | verdict | failed checks | numbers |\n")
		fmt.Fprintf(&b, "|---|---|---|---|---|---|\n")
		for _, row := range r.Controls {
			for _, a := range row.Runs {
				verdict := fmt.Sprintf("**%s**", a.Verdict)
				if a.OK {
					verdict = "pass"
				}
				fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s |\n", row.Control, row.Scenario, a.Seed, verdict,
					orDash(strings.Join(a.Failed, ", ")), nums(a))
			}
		}
	}
	controls := 0
	for _, row := range r.Controls {
		controls += len(row.Runs)
	}
	fmt.Fprintf(&b, "\nDetection: %d of %d defect runs caught by their expected check (%.0f%%). "+
		"False alarms: %d of %d correct-build runs did not pass (%.0f%%; %d of the correct-build runs are controls).\n",
		r.Detected, r.DefectRuns, 100*r.DetectionRate, r.FalseAlarms, r.CorrectRuns, 100*r.FalseAlarmRate, controls)
	_, err := io.WriteString(w, b.String())
	return err
}

// nums shows the non-zero numbers of an arm, in a stable order.
func nums(a Arm) string {
	var keys []string
	for k, v := range a.Numbers {
		if v != 0 || k == "acked" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%g", k, a.Numbers[k]))
	}
	if a.Error != "" {
		parts = append(parts, "error: "+a.Error)
	}
	return orDash(strings.Join(parts, " "))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
