package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/harness/scenario"
)

// A symbolic link planted in the run directory under any name the run writes stops the run before
// it starts anything, with an error naming the link, and the file it points at is left alone.
func TestRunDirSymlinkRefused(t *testing.T) {
	sc, err := scenario.Parse("e2e.yaml", []byte(e2eScenario))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range runDirNames(sc.Pods.Count) {
		t.Run(name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			victim := filepath.Join(outside, "victim")
			if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			target := victim
			if name == "pods" {
				target = outside // a directory link: pod logs would land outside the run directory
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			_, err := Run(context.Background(), Options{Scenario: sc, Dir: dir, Eventlogd: "/nonexistent/eventlogd"})
			if err == nil || !strings.Contains(err.Error(), name+" is a symbolic link") {
				t.Fatalf("error %v, want one naming %s as a symbolic link", err, name)
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
				t.Errorf("the link's target was written: %q", b)
			}
			if _, err := os.Lstat(filepath.Join(dir, "run.log")); err == nil && name != "run.log" {
				t.Error("the run started (run.log exists) despite the link")
			}
		})
	}
}

// The negative control: a reused run directory (regular files and a real pods/ under every name)
// passes the check.
func TestRunDirReusedPasses(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "pods"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range runDirNames(3)[1:] {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkRunDir(dir, 3); err != nil {
		t.Fatal(err)
	}
}

func TestCreateFile(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "linked.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "old.json"), []byte("a longer old content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		wantErr bool
	}{
		{"new.json", false},
		{"old.json", false}, // a regular file is replaced (a reused run directory)
		{"linked.json", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := writeFile(dir, tc.name, []byte("new\n"), 0o644)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), tc.name) {
					t.Errorf("error %v, want one naming %s", err, tc.name)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, tc.name)); string(b) != "new\n" {
				t.Errorf("content %q, want %q", b, "new\n")
			}
		})
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}
