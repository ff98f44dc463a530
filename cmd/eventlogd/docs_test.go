package main

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"
)

// TestEveryFlagIsDocumented: docs/eventlogd.md names every flag (and docs/security.md every limit
// flag it describes stays a real flag).
func TestEveryFlagIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/eventlogd.md")
	if err != nil {
		t.Fatal(err)
	}
	var o options
	fs := flags(&o, io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(string(doc), "| `--"+f.Name+"` |") {
			t.Errorf("--%s is not in the flag table of docs/eventlogd.md", f.Name)
		}
	})
	sec, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(string(sec), "`--")[1:] {
		name, _, _ := strings.Cut(part, "`")
		name, _, _ = strings.Cut(name, " ")
		if fs.Lookup(name) == nil {
			t.Errorf("docs/security.md names --%s, which is not a flag", name)
		}
	}
}

// TestRunbookNamesEverySweepFlag: docs/runbook.md's table names every flag of `eventlogd sweep`.
func TestRunbookNamesEverySweepFlag(t *testing.T) {
	doc, err := os.ReadFile("../../docs/runbook.md")
	if err != nil {
		t.Fatal(err)
	}
	var o sweepOptions
	sweepFlags(&o, io.Discard).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(string(doc), "| `--"+f.Name+"` |") {
			t.Errorf("eventlogd sweep --%s is not in the flag table of docs/runbook.md", f.Name)
		}
	})
}
