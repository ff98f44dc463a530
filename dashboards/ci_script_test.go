package dashboards

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// hostWide matches a command that acts on processes or services CI did not start: a system service
// (systemctl, service), or processes picked by name (pkill, killall, pgrep-fed kills), whoever owns them.
var hostWide = regexp.MustCompile(`(^|[\s;&|(])(systemctl|service|pkill|killall|pgrep)(\s|$)`)

// hostWideLines returns the lines of a shell script (comments left out) that reach beyond it.
func hostWideLines(script string) []string {
	var out []string
	for _, l := range strings.Split(script, "\n") {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		if hostWide.MatchString(l) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// TestCIScriptStaysInItsLane: .ci/run neither stops a host service nor signals processes by name
// (another user's prometheus, say), and is valid bash; the control is the old script's two lines,
// which the check catches.
func TestCIScriptStaysInItsLane(t *testing.T) {
	b, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if bad := hostWideLines(string(b)); len(bad) > 0 {
		t.Errorf(".ci/run acts beyond what it started: %q", bad)
	}
	if out, err := exec.Command("bash", "-n", "../.ci/run").CombinedOutput(); err != nil {
		t.Errorf("bash -n .ci/run: %v\n%s", err, out)
	}
	old := "systemctl disable --now prometheus >/dev/null 2>&1 || true\npkill -x prometheus >/dev/null 2>&1 || true\n# pkill in a comment is fine\n"
	if got := hostWideLines(old); len(got) != 2 {
		t.Errorf("control: caught %q, want the two commands", got)
	}
}
