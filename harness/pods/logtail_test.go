package pods

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLogTail(t *testing.T) {
	long := strings.Repeat("x", 5000) + "\nfirst kept\nsecond kept\n"
	var many strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&many, "line %02d\n", i)
	}
	for _, c := range []struct {
		name, log string
		want      []string // lines in the tail
		notWant   []string
		empty     bool
	}{
		{name: "empty log", log: "", empty: true},
		{name: "short log", log: "eventlogd: --retry-tenat-cap: unknown flag\n", want: []string{"\n    eventlogd: --retry-tenat-cap: unknown flag"}},
		{name: "a long line cut by the window is dropped", log: long, want: []string{"first kept", "second kept"}, notWant: []string{"xxx"}},
		{name: "only the last lines", log: many.String(), want: []string{"line 21", "line 30"}, notWant: []string{"line 20"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pod-1.log")
			os.WriteFile(path, []byte(c.log), 0o644)
			got := logTail(path)
			if c.empty != (got == "") {
				t.Fatalf("tail %q", got)
			}
			if n := strings.Count(got, "\n    "); n > tailLines {
				t.Errorf("%d lines in the tail, want at most %d", n, tailLines)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("tail %q lacks %q", got, w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("tail %q has %q", got, w)
				}
			}
		})
	}
	if logTail(filepath.Join(t.TempDir(), "missing.log")) != "" {
		t.Error("a missing log has a tail")
	}
}

// TestStartUpExitQuotesTheLog: a pod that exits before printing its address fails Start with the
// last lines of its log in the error (the reason is there); a pod that starts has no such error.
func TestStartUpExitQuotesTheLog(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SEQGATE_FAKE_POD", "exit-early")
	_, err = Start(context.Background(), Config{Binary: exe, LogDir: t.TempDir(), Start: time.Now()}, 1)
	if err == nil {
		t.Fatal("a pod that exits at start-up started")
	}
	for _, want := range []string{"pod-1 exited before printing its address", "pod-1.log:", "fake pod: start-up line 15", "fake pod: start-up line 6"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "start-up line 5\n") {
		t.Errorf("error %q quotes more than the last %d lines", err, tailLines)
	}
	t.Setenv("SEQGATE_FAKE_POD", "1")
	f, err := Start(context.Background(), Config{Binary: exe, LogDir: t.TempDir(), Start: time.Now()}, 1)
	if err != nil {
		t.Fatalf("control: a pod that serves did not start: %v", err)
	}
	f.Stop(5 * time.Second)
}
