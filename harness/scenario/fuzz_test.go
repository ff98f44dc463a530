package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: any bytes either parse into a valid scenario or give an error that names the file; a
// parsed scenario's resolved form (what the run directory keeps) parses again.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"../../scenarios", "../../scenarios/ci"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("seed: 1\nduration: 1x\n"))
	f.Add([]byte("{{"))
	f.Add([]byte(base + "    kind: pull-then-stream\n    resync_structural: true\n    page_size: 3\n"))
	f.Add([]byte(base + "    resync: false\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatalf("marshal of a valid scenario: %v", err)
		}
		if _, err := Parse("resolved.yaml", out); err != nil {
			t.Fatalf("resolved scenario does not parse again: %v\n%s", err, out)
		}
	})
}
