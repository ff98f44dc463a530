package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outsideRefs are the places a clone of the repository does not have.
var outsideRefs = []string{"../shared/", "/work/shared", "shared/seeds/", "shared/spec/", "shared/design/"}

// outsideRef returns the first reference in text to a document outside the repository, or "".
func outsideRef(text string) string {
	for _, r := range outsideRefs {
		if i := strings.Index(text, r); i >= 0 {
			return text[max(0, i-30):min(len(text), i+len(r)+30)]
		}
	}
	return ""
}

// TestDocsStandAlone: no page of docs/, nor README.md or CONTRIBUTING.md, points at notes outside
// the repository; the check finds such a reference where there is one (the control).
func TestDocsStandAlone(t *testing.T) {
	if outsideRef("see `../shared/seeds/000_x` for the design") == "" || outsideRef("see docs/ledger-v1.md") != "" {
		t.Fatal("outsideRef does not tell an outside reference from an inside one")
	}
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) < 10 {
		t.Fatalf("docs: %v (%d files)", err, len(files))
	}
	for _, f := range append(files, "../../README.md", "../../CONTRIBUTING.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if ref := outsideRef(string(b)); ref != "" {
			t.Errorf("%s points outside the repository: %q (say what it says in our own words)", f, ref)
		}
	}
}
