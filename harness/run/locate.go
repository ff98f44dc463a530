package run

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// FindEventlogd returns the eventlogd binary to run and how it was found: the flag's path, else
// eventlogd next to this executable, else on PATH, else `go build ./cmd/eventlogd` into dir (when
// this is the seqgate source tree).
func FindEventlogd(ctx context.Context, flag, dir string) (path, how string, err error) {
	if flag != "" {
		if st, err := os.Stat(flag); err != nil || st.IsDir() {
			return "", "", fmt.Errorf("--eventlogd %s: not an executable file", flag)
		}
		return flag, "--eventlogd", nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "eventlogd")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, "next to seqgate", nil
		}
	}
	if p, err := exec.LookPath("eventlogd"); err == nil {
		return p, "on PATH", nil
	}
	root, ok := sourceRoot()
	if !ok {
		return "", "", fmt.Errorf("no eventlogd: pass --eventlogd PATH, put it next to seqgate or on PATH (make build puts it in bin/)")
	}
	out := filepath.Join(dir, "eventlogd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/eventlogd")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build ./cmd/eventlogd in %s: %v\n%s", root, err, b)
	}
	return out, "built from " + root, nil
}

// sourceRoot finds the module root holding cmd/eventlogd: the working directory or one of its parents.
func sourceRoot() (string, bool) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", false
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for i := 0; i < 8; i++ {
		if _, err := os.Stat(filepath.Join(dir, "cmd", "eventlogd", "main.go")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", false
}
