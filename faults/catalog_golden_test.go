package faults_test

import (
	"os"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/faults"
)

// TestCatalogGolden pins the text of `seqgate faults` (captured before the faults/ refactor; the
// Markdown form is pinned by docs/faults.md in TestCatalog). Run with -update when a change is intended.
func TestCatalogGolden(t *testing.T) {
	var b strings.Builder
	if err := faults.WriteCatalog(&b); err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/catalog.txt"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("`seqgate faults` output differs from %s:\n%s", golden, b.String())
	}
}
