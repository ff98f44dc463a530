package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVerifyCmdExitCodes(t *testing.T) {
	dir := t.TempDir()
	clean, err := os.ReadFile("../../verifier/testdata/clean.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	noEnd := filepath.Join(dir, "noend.jsonl")
	lines := strings.SplitAfter(strings.TrimSuffix(string(clean), "\n"), "\n")
	if err := os.WriteFile(noEnd, []byte(strings.Join(lines[:len(lines)-1], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.jsonl")
	if err := os.WriteFile(garbage, []byte("{\"k\":\"run\",\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args    []string
		flags   verifyFlags
		code    int
		errHas  string
		outHead string
	}{
		{args: []string{"../../verifier/testdata/clean.jsonl"}, code: exitPass, outHead: "verdict: PASS"},
		{args: []string{"../../verifier/testdata/skipped.jsonl"}, code: exitFail, outHead: "verdict: FAIL"},
		{args: []string{noEnd}, code: exitInconclusive, outHead: "verdict: INCONCLUSIVE"},
		{args: []string{garbage}, code: exitUnusable, errHas: "garbage.jsonl:1"},
		{args: []string{filepath.Join(dir, "missing.jsonl")}, code: exitUnusable, errHas: "missing.jsonl"},
		{args: []string{"../../verifier/testdata/clean.jsonl"}, flags: verifyFlags{budget: 2, budgetSet: true}, code: exitUnusable, errHas: "--budget"},
		// --threshold judges an old ledger against a new gate: a bound it breaks fails it, one it keeps
		// passes, by tenant too; a bad path, expression, tenant or a missing colon names the flag value.
		{args: []string{"../../verifier/testdata/clean.jsonl"}, flags: verifyFlags{thresholds: []string{"latency_ms.max: < 1"}}, code: exitFail,
			outHead: "verdict: FAIL (exit 1)"},
		{args: []string{"../../verifier/testdata/clean.jsonl"}, flags: verifyFlags{thresholds: []string{"latency_ms.max: < 500", "per_tenant.A.lost: == 0"}}, code: exitPass,
			outHead: "verdict: PASS"},
		{args: []string{"../../verifier/testdata/clean.jsonl"}, flags: verifyFlags{thresholds: []string{"latency_ms.p98: < 5"}}, code: exitUnusable,
			errHas: `--threshold "latency_ms.p98: < 5": threshold path "latency_ms.p98" is not a summary number`},
		{args: []string{"../../verifier/testdata/clean.jsonl"}, flags: verifyFlags{thresholds: []string{"latency_ms.p99: <<5"}}, code: exitUnusable,
			errHas: `--threshold "latency_ms.p99: <<5": threshold "latency_ms.p99": expression "<<5" is not <op> <number>`},
		{args: []string{"../../verifier/testdata/clean.jsonl"}, flags: verifyFlags{thresholds: []string{"latency_ms.p99 < 5"}}, code: exitUnusable,
			errHas: `--threshold "latency_ms.p99 < 5": want 'PATH: EXPR'`},
		{args: []string{"../../verifier/testdata/clean.jsonl"}, flags: verifyFlags{thresholds: []string{"per_tenant.tenant_9.lost: == 0"}}, code: exitUnusable,
			errHas: `--threshold: threshold "per_tenant.tenant_9.lost": the ledger has no tenant "tenant_9" (its tenants: A, B)`},
		{args: []string{"../../verifier/testdata/clean.jsonl"}, flags: verifyFlags{slowest: -1}, code: exitUnusable, errHas: "--slowest -1"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if c.flags.witnesses == 0 {
			c.flags.witnesses = 20
		}
		err := runVerify(&out, &errOut, c.args, c.flags)
		code := exitPass
		var xe *exitError
		if errors.As(err, &xe) {
			code = xe.code
		} else if err != nil {
			t.Errorf("%v: non-exit error %v", c.args, err)
		}
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (%v)", c.args, code, c.code, err)
		}
		if c.errHas != "" && (err == nil || !strings.Contains(err.Error(), c.errHas)) {
			t.Errorf("%v: error %v lacks %q", c.args, err, c.errHas)
		}
		if !strings.HasPrefix(out.String(), c.outHead) {
			t.Errorf("%v: output starts %.40q, want %q", c.args, out.String(), c.outHead)
		}
	}
}

func TestVerifyCmdJSONAndJUnit(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "j.xml")
	var out, errOut bytes.Buffer
	err := runVerify(&out, &errOut, []string{"../../verifier/testdata/skipped.jsonl"},
		verifyFlags{jsonPath: "-", junitPath: junit, witnesses: 20})
	var xe *exitError
	if !errors.As(err, &xe) || xe.code != exitFail {
		t.Fatalf("err %v, want exit 1", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("stdout is not the summary JSON: %v\n%s", err, out.String())
	}
	if doc["skipped"] != 1.0 || !strings.HasPrefix(errOut.String(), "verdict: FAIL") {
		t.Errorf("skipped=%v, stderr starts %.30q", doc["skipped"], errOut.String())
	}
	x, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(x), `<testcase name="skipped"`) || !strings.Contains(string(x), "<failure") {
		t.Errorf("junit: %v\n%s", err, x)
	}
}
