package provenance

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
)

func TestRedact(t *testing.T) {
	in := []string{"run", "s.yaml", "--api-key", "k3y", "--dsn=root:pw@tcp(127.0.0.1:3306)/", "--api-key=k2", "--dsn", "root@tcp(h:1)/", "--set=seed=3"}
	want := []string{"run", "s.yaml", "--api-key", "REDACTED", "--dsn=root:REDACTED@tcp(127.0.0.1:3306)/", "--api-key=REDACTED", "--dsn", "root@tcp(h:1)/", "--set=seed=3"}
	if got := Redact(in); !slices.Equal(got, want) {
		t.Errorf("Redact:\n got %q\nwant %q", got, want)
	}
	if in[3] != "k3y" {
		t.Error("Redact changed its input")
	}
}

func TestParseLoadAvg(t *testing.T) {
	for in, want := range map[string][]float64{
		"0.52 1.10 2.00 1/234 5678\n": {0.52, 1.1, 2},
		"1 2":                         nil,
		"a b c":                       nil,
		"-1 0 0":                      nil,
	} {
		if got := parseLoadAvg(in); !slices.Equal(got, want) {
			t.Errorf("parseLoadAvg(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestLine(t *testing.T) {
	for _, c := range []struct {
		b    ledger.Build
		want string
	}{
		{ledger.Build{Module: "m", Version: "v1.2.3", Revision: "0123456789abcdef", Modified: true, Go: "go1.26"}, "m v1.2.3 (revision 0123456789ab, modified) go1.26"},
		{ledger.Build{Module: "m", Version: "(devel)"}, "m (devel) (no VCS revision)"},
		{ledger.Build{}, "? ? (no VCS revision)"},
	} {
		if got := Line(c.b); got != c.want {
			t.Errorf("Line(%+v) = %q, want %q", c.b, got, c.want)
		}
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "m", Version: "v1"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "t"}}}
	if got := fromInfo(bi); got != (ledger.Build{Module: "m", Version: "v1", Revision: "abc", Time: "t", Modified: true, Go: "go1.26"}) {
		t.Errorf("fromInfo = %+v", got)
	}
}

// TestDescribe: a Go binary gets its hash and build info; a file that is not Go gets its hash and
// no build info; a missing one is an error.
func TestDescribe(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Describe(t.Context(), self, false)
	if err != nil || len(b.SHA256) != 64 || b.Build == nil || !strings.HasPrefix(b.Build.Go, "go") {
		t.Errorf("Describe(test binary) = %+v, %v", b, err)
	}
	script := filepath.Join(t.TempDir(), "pod")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'pod 1.0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err = Describe(t.Context(), script, true)
	if err != nil || b.Build != nil || b.Version != "pod 1.0" || b.SHA256 == "" {
		t.Errorf("Describe(script) = %+v, %v", b, err)
	}
	if _, err := Describe(t.Context(), filepath.Join(t.TempDir(), "none"), false); err == nil {
		t.Error("Describe of a missing file: no error")
	}
}
