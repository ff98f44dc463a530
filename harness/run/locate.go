package run

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ErrNoEventlogd is FindEventlogd's error when no binary is at any of the places it looks.
var ErrNoEventlogd = errors.New("no eventlogd: pass --eventlogd PATH, or put eventlogd next to seqgate or on PATH (make build puts both in bin/)")

// FindEventlogd returns the eventlogd binary to run and how it was found: the flag's path, else
// eventlogd next to this executable, else on PATH. It never builds one: building whatever source
// tree lies above the working directory would run code nobody chose (a tree planted in a parent
// directory, built and run as the user of seqgate).
func FindEventlogd(flag string) (path, how string, err error) {
	if flag != "" {
		if st, err := os.Stat(flag); err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			return "", "", fmt.Errorf("--eventlogd %s: not an executable file", flag)
		}
		return flag, "--eventlogd", nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "eventlogd")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, "next to seqgate", nil
		}
	}
	if p, err := exec.LookPath("eventlogd"); err == nil {
		return p, "on PATH", nil
	}
	return "", "", ErrNoEventlogd
}
