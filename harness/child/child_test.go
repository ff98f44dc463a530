package child

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSeqgateExitAndLog runs a stand-in binary (a shell script) through the real exec path: the exit
// code, the log file and the arguments are what a caller sees; a cancelled run gets SIGINT first.
func TestSeqgateExitAndLog(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake-seqgate")
	script := "#!/bin/sh\necho \"args: $*\"\ncase \"$2\" in\n  *fail*) exit 1 ;;\n  *slow*) trap 'echo got-int; exit 3' INT; sleep 30 & wait ;;\nesac\nexit 0\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	run := Seqgate(bin, "--seed", "7")
	for _, c := range []struct {
		scen string
		exit int
	}{{"ok.yaml", 0}, {"fail.yaml", 1}} {
		out := filepath.Join(dir, c.scen+".d")
		res, err := run(context.Background(), c.scen, out)
		if err != nil || res.Exit != c.exit || res.MachineBusy < -1 || res.MachineBusy > 1 {
			t.Errorf("%s: %+v %v, want exit %d", c.scen, res, err, c.exit)
		}
		b, _ := os.ReadFile(filepath.Join(out, "child.log"))
		if want := "args: run " + c.scen + " --out " + out + " --seed 7"; !strings.Contains(string(b), want) {
			t.Errorf("%s: log %q lacks %q", c.scen, b, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	out := filepath.Join(dir, "slow.d")
	if _, err := run(ctx, "slow.yaml", out); err == nil {
		t.Error("a cancelled run reported no error")
	}
	b, _ := os.ReadFile(filepath.Join(out, "child.log"))
	if !strings.Contains(string(b), "got-int") {
		t.Errorf("the cancelled child did not get SIGINT: %q", b)
	}
}
