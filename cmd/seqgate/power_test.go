package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPowerRefusesSetsItVaries: `seqgate power --set` may not name the seed or the defect (power
// varies both per run): exit 3 naming the override, before any run or output directory. A valid
// override gets past the check (and fails later on the missing matrix, not on the override).
func TestPowerRefusesSetsItVaries(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		set, want string
	}{{"seed=3", `"seed=3"`}, {"pods.eventlogd.defect=late-commit-skip", "pods.eventlogd.defect"}, {"pods.count", "want PATH=VALUE"}, {"pods.count=2", "nope.yaml"}} {
		out := filepath.Join(dir, strings.NewReplacer("=", "_", ".", "_").Replace(c.set))
		err := runPower(t.Context(), &bytes.Buffer{}, &bytes.Buffer{}, powerFlags{matrix: filepath.Join(dir, "nope.yaml"), seeds: 1, out: out, sets: []string{c.set}})
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUnusable || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("--set %s: %v, want exit 3 naming %s", c.set, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("--set %s: output directory made (%v)", c.set, err)
		}
	}
}

// TestPowerDSN: `seqgate power --dsn` runs every scenario on that server (each child `seqgate run`
// gets the DSN) and power.md and power.json name it with its password hidden; a DSN that seqgate run
// would refuse is refused first, naming --dsn, before any run or output directory.
func TestPowerDSN(t *testing.T) {
	dir := t.TempDir()
	scen := "name: s\nseed: 10\nduration: 1s\ndrain_timeout: 1s\ntenants: [{group: a, count: 1, mode: dedicated}]\npods: {count: 1}\nload: [{tenants: a, executor: constant-arrival-rate, rate: 1}]\nconsumers: [{count: 1}]\n"
	must(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scen), 0o644))
	matrix := filepath.Join(dir, "m.yaml")
	must(t, os.WriteFile(matrix, []byte("defects:\n  - {defect: late-commit-skip, scenario: s.yaml, expect: [skipped]}\n"), 0o644))
	// A stand-in for the seqgate binary: it notes its arguments and writes a passing summary into
	// its --out directory (so the defect counts as missed and the matrix is written).
	argsFile := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "fake-seqgate")
	must(t, os.WriteFile(fake, []byte(`#!/bin/sh
echo "$@" >> `+argsFile+`
out=""; prev=""
for a in "$@"; do [ "$prev" = "--out" ] && out="$a"; prev="$a"; done
mkdir -p "$out" && echo '{"verdict":"pass","failed_checks":[]}' > "$out/summary.json"
`), 0o755))

	for _, c := range []struct{ dsn, want string }{
		{"root@unix(/tmp/db.sock)/", "only tcp(host:port)"},
		{"root@tcp(127.0.0.1:4000", `--dsn "root@tcp(127.0.0.1:4000"`},
	} {
		out := filepath.Join(dir, "refused")
		err := runPower(t.Context(), &bytes.Buffer{}, &bytes.Buffer{}, powerFlags{matrix: matrix, seeds: 1, out: out, seqgate: fake, dsn: c.dsn})
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUnusable || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("--dsn %s: %v, want exit 3 naming %s", c.dsn, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) || fileExists(argsFile) {
			t.Fatalf("--dsn %s: a run was started or its directory made", c.dsn)
		}
	}

	const dsn = "root:s3cret@tcp(127.0.0.1:4000)/"
	out := filepath.Join(dir, "out")
	var stdout bytes.Buffer
	err := runPower(t.Context(), &stdout, &bytes.Buffer{}, powerFlags{matrix: matrix, seeds: 1, out: out, seqgate: fake, dsn: dsn})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFail {
		t.Fatalf("power with the defect missed: %v, want exit 1", err)
	}
	args, err := os.ReadFile(argsFile)
	must(t, err)
	if lines := strings.Split(strings.TrimSpace(string(args)), "\n"); len(lines) != 2 ||
		!strings.Contains(lines[0], "--dsn="+dsn) || !strings.Contains(lines[1], "--dsn="+dsn) {
		t.Fatalf("the runs were started with:\n%s\nwant --dsn=%s in both", args, dsn)
	}
	md, err := os.ReadFile(filepath.Join(out, "power.md"))
	must(t, err)
	js, err := os.ReadFile(filepath.Join(out, "power.json"))
	must(t, err)
	for name, text := range map[string]string{"power.md": string(md), "power.json": string(js), "stdout": stdout.String()} {
		if !strings.Contains(text, "root:REDACTED@tcp(127.0.0.1:4000)/") || strings.Contains(text, "s3cret") {
			t.Errorf("%s does not name the server with its password hidden:\n%s", name, text)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
