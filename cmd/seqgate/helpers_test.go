package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/seqgate/seqgate/internal/dbserver"
)

// needDB skips a test that runs pods on a machine without a MySQL-compatible server binary.
func needDB(t *testing.T) {
	t.Helper()
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
}

// buildEventlogd builds cmd/eventlogd into a directory of the test and returns the binary's path.
func buildEventlogd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "eventlogd")
	if out, err := exec.Command("go", "build", "-o", bin, "../eventlogd").CombinedOutput(); err != nil {
		t.Fatalf("build eventlogd: %v\n%s", err, out)
	}
	return bin
}

// writeTestFile writes data to dir/name (a scenario) and returns its path.
func writeTestFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readJSON decodes the JSON file at path (a run's summary.json, verify --json's output) into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
