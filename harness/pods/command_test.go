package pods

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// A pod started by Command, told its listen address in its environment (no address line): it is
// ready on the port the fleet chose, and a restart gets the same one.
func TestCommandChosenPort(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	cfg := Config{Binary: exe, LogDir: t.TempDir(), Start: time.Now(), Sink: &ledger.Memory{},
		Command: func(pod, listen string) ([]string, []string, error) {
			seen = append(seen, pod+"@"+listen)
			return nil, []string{"SEQGATE_FAKE_POD=1", "FAKE_POD_LISTEN=" + listen}, nil
		}}
	f, err := Start(context.Background(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop(5 * time.Second)
	p := f.Pods()[0]
	if len(seen) != 1 || strings.HasSuffix(seen[0], ":0") || p.URL() != "http://"+strings.TrimPrefix(seen[0], "pod-1@") {
		t.Fatalf("command saw %v, pod URL %s", seen, p.URL())
	}
	if err := p.Kill(9); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait(context.Background())
	if err := p.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1] != seen[0] {
		t.Errorf("restart listened at %v, want the first address again", seen)
	}
}

// Bad starts fail with an error naming the cause, and leave no pod running.
func TestCommandBadStarts(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "not-exec")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(mode string) func(string, string) ([]string, []string, error) {
		return func(_, listen string) ([]string, []string, error) {
			return nil, []string{"SEQGATE_FAKE_POD=" + mode, "FAKE_POD_LISTEN=" + listen}, nil
		}
	}
	cases := []struct {
		name, bin, mode, want string
	}{
		{"missing", filepath.Join(dir, "nope"), "1", "pod binary " + filepath.Join(dir, "nope")},
		{"not executable", plain, "1", "pod binary " + plain},
		{"a directory", dir, "1", "is a directory"},
		{"exits at once, its log quoted", exe, "exit-early", "start-up line 15"},
		{"never ready", exe, "never-ready", "GET http://127.0.0.1:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Start(context.Background(), Config{Binary: c.bin, LogDir: t.TempDir(), Start: time.Now(), ReadyAfter: 2 * time.Second,
				Command: env(c.mode)}, 2)
			if err == nil {
				f.Stop(time.Second)
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
	// The control: the same binary with a healthy mode starts.
	f, err := Start(context.Background(), Config{Binary: exe, LogDir: t.TempDir(), Start: time.Now(), Command: env("1")}, 1)
	if err != nil {
		t.Fatalf("control: %v", err)
	}
	f.Stop(time.Second)
}
