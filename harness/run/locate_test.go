package run

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindEventlogdNeverBuilds: with no eventlogd at the flag, beside seqgate or on PATH, a source
// tree with cmd/eventlogd planted in a parent of the working directory is not built: the answer is
// ErrNoEventlogd and no binary appears. The honest cases find the flag's file and one on PATH; a
// flag naming a directory or a file that is not executable is refused by name.
func TestFindEventlogdNeverBuilds(t *testing.T) {
	if exe, err := os.Executable(); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(exe), "eventlogd")); err == nil {
			t.Skip("an eventlogd lies beside the test binary")
		}
	}
	planted := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":                "module planted\n\ngo 1.22\n",
		"cmd/eventlogd/main.go": "package main\n\nfunc main() {}\n",
	} {
		p := filepath.Join(planted, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	work := filepath.Join(planted, "runs", "here")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)

	bins := t.TempDir()
	exe := filepath.Join(bins, "eventlogd")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(bins, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()

	cases := []struct {
		name, flag, path string
		want, how        string // want: the path found ("" for an error), how: how, or the error's text
	}{
		{"planted tree, nothing else", "", empty, "", ErrNoEventlogd.Error()},
		{"the flag's file", exe, empty, exe, "--eventlogd"},
		{"on PATH", "", bins, exe, "on PATH"},
		{"flag names a directory", bins, bins, "", "not an executable file"},
		{"flag names a file that is not executable", plain, bins, "", "not an executable file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			got, how, err := FindEventlogd(tc.flag)
			switch {
			case tc.want == "" && (err == nil || !strings.Contains(err.Error(), tc.how)):
				t.Errorf("FindEventlogd(%q) = %q, %q, %v; want an error containing %q", tc.flag, got, how, err, tc.how)
			case tc.want != "" && (err != nil || got != tc.want || how != tc.how):
				t.Errorf("FindEventlogd(%q) = %q, %q, %v; want %q (%s)", tc.flag, got, how, err, tc.want, tc.how)
			}
			if tc.name == cases[0].name && !errors.Is(err, ErrNoEventlogd) {
				t.Errorf("error %v is not ErrNoEventlogd", err)
			}
		})
	}
	// Nothing was built anywhere in the planted tree or the working directory.
	_ = filepath.WalkDir(planted, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "eventlogd" {
			t.Errorf("a binary was built: %s", p)
		}
		return nil
	})
}
