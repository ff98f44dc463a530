package run

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/dbserver"
)

// docs/run.md lists the phases a run goes through; the list here is what runs.
func TestPhasesMatchDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "run.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^\d+\. \*\*(\w+)\*\*`).FindAllStringSubmatch(string(b), -1) {
		documented = append(documented, m[1])
	}
	var names []string
	for _, p := range phases {
		names = append(names, p.name)
		if _, err := os.Stat("phase_" + p.name + ".go"); err != nil {
			t.Errorf("phase %s has no file phase_%s.go", p.name, p.name)
		}
	}
	names = append(names, "verify") // cmd/seqgate's step: the harness does not judge
	if strings.Join(documented, " ") != strings.Join(names, " ") {
		t.Errorf("docs/run.md lists the phases %v, the run has %v", documented, names)
	}
}

func TestRunPhases(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		failAt  string // "": none fails
		wantRan string
		wantErr string
	}{
		{"all run in order", "", "a b c", ""},
		{"the first error stops the list", "b", "a b", "b: boom"},
		{"the first phase fails", "a", "a", "a: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran []string
			var logged bytes.Buffer
			mk := func(name string) phase {
				return phase{name, func(_ context.Context, _ *state, log *slog.Logger) error {
					ran = append(ran, name)
					log.Info("step")
					if name == tc.failAt {
						return boom
					}
					return nil
				}}
			}
			s := &state{log: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{ReplaceAttr: dropTime})).With("run", "r1")}
			err := s.runPhases(context.Background(), []phase{mk("a"), mk("b"), mk("c")})
			if got := strings.Join(ran, " "); got != tc.wantRan {
				t.Errorf("ran %q, want %q", got, tc.wantRan)
			}
			if (err == nil) != (tc.wantErr == "") || (err != nil && (err.Error() != tc.wantErr || !errors.Is(err, boom))) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			for _, name := range strings.Fields(tc.wantRan) {
				if !strings.Contains(logged.String(), `level=INFO msg=step run=r1 phase=`+name+"\n") {
					t.Errorf("no step line of phase %s with run and phase fields:\n%s", name, logged.String())
				}
			}
			if tc.wantErr != "" && !strings.Contains(logged.String(), `level=ERROR msg="run failed" run=r1 phase=`+tc.failAt+" err=boom") {
				t.Errorf("the failure is not logged with its phase:\n%s", logged.String())
			}
		})
	}
}

// A phase that fails after pods, proxies, the DB server and the consumers are up (schedule, with a
// replay directory that has no schedule.json) still stops all of them: no child process is left
// (noChildren) and no goroutine (goleak in TestMain).
func TestPhaseErrorCleansUp(t *testing.T) {
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	sc, err := scenario.Parse("e2e.yaml", []byte(e2eScenario))
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-run")
	res, err := Run(context.Background(), Options{Scenario: sc, Dir: t.TempDir(), Eventlogd: eventlogdBin, Replay: missing,
		Log: testWriter{t}, Progress: testWriter{t}})
	if err == nil || !strings.HasPrefix(err.Error(), "schedule: ") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("result %v, error %v: want a schedule error naming %s", res, err, missing)
	}
	noChildren(t)
}
