package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier/synth"
)

// TestGenLedgerCmd: flags reach the generator, the ledger goes where --out says (gzip by name), the
// truth lands beside it, and bad flags exit 3 naming the flag without leaving a file behind.
func TestGenLedgerCmd(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, string, error) {
		cmd := newGenLedgerCmd()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(args)
		err := cmd.Execute()
		return out.String(), errOut.String(), err
	}

	gz := filepath.Join(dir, "l.jsonl.gz")
	if _, _, err := run("--seed", "4", "--tenants", "3", "--events", "3000", "--skipped", "2", "--lost", "1", "--out", gz, "--quiet"); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(gz)
	if !bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		t.Error("--out *.gz is not gzip")
	}
	var truth synth.Truth
	b, err := os.ReadFile(gz + ".truth.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	if truth.Skipped != 2 || truth.Lost != 1 || truth.Acked != 3000 || truth.Verdict != "fail" {
		t.Errorf("truth = skipped %d lost %d acked %d verdict %s", truth.Skipped, truth.Lost, truth.Acked, truth.Verdict)
	}
	r, err := ledger.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != truth.Records {
		t.Errorf("ledger has %d records, truth says %d", n, truth.Records)
	}

	// stdout, truth only with --truth
	tp := filepath.Join(dir, "t.json")
	out, _, err := run("--events", "100", "--quiet", "--truth", tp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, `{"k":"run"`) {
		t.Errorf("stdout starts %.40q", out)
	}
	if _, err := os.Stat(tp); err != nil {
		t.Errorf("--truth not written: %v", err)
	}

	bad := filepath.Join(dir, "bad.jsonl")
	_, _, err = run("--events", "10", "--lost", "5", "--out", bad)
	var xe *exitError
	if !errors.As(err, &xe) || xe.code != exitUnusable || !strings.Contains(err.Error(), "--events 10") {
		t.Errorf("bad flags: %v", err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a file was left for a rejected run: %v", err)
	}
}
