package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/child"
	"github.com/seqgate/seqgate/harness/scenario"
)

func TestSplitRunArgs(t *testing.T) {
	for _, c := range []struct {
		name       string
		args       []string
		sets, rest []string
		err        string
	}{
		{name: "nothing to split", args: []string{"--target=http://127.0.0.1:8080", "--api-key", "k"}, rest: []string{"--target=http://127.0.0.1:8080", "--api-key", "k"}},
		{name: "inline set", args: []string{"--set=pods.count=3", "--junit=x"}, sets: []string{"pods.count=3"}, rest: []string{"--junit=x"}},
		{name: "set then value", args: []string{"--set", "load[0].rate=5"}, sets: []string{"load[0].rate=5"}},
		{name: "seed and duration", args: []string{"--seed=7", "--duration", "20s"}, sets: []string{"seed=7", "duration=20s"}},
		{name: "set without value", args: []string{"--set"}, err: "value is missing"},
		{name: "set without =", args: []string{"--set=pods.count"}, err: "want PATH=VALUE"},
		{name: "out is the sweep's", args: []string{"--out=/tmp/x"}, err: "sweep's --out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sets, rest, err := SplitRunArgs(c.args)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(sets, c.sets) || !slices.Equal(rest, c.rest) {
				t.Fatalf("sets %q rest %q err %v; want sets %q rest %q", sets, rest, err, c.sets, c.rest)
			}
			// The folded arguments, as given, are exactly those not in rest.
			var want []string
			for _, a := range c.args {
				if !slices.Contains(c.rest, a) {
					want = append(want, a)
				}
			}
			if got := FoldedRunArgs(c.args); !slices.Equal(got, want) {
				t.Errorf("folded %q, want %q", got, want)
			}
		})
	}
}

// TestStepFilesCarryTheSets runs a sweep with overrides and without: every step file has the
// overrides (pods.count=3, seed=9) and the axis's own, and the record names the scenario's hash, the
// seed, pods, budget, sets and run arguments; without overrides the step files keep the scenario's.
func TestStepFilesCarryTheSets(t *testing.T) {
	for _, c := range []struct {
		name       string
		sets       []string
		pods       int
		seed       int64
		firstRate  float64 // load[0].rate of the first step (value 100 over a scenario offering 50/s)
		wantSetsMD string
		folded     []string // --run-args the sets came from
		wantMD     string
	}{
		{name: "overrides", sets: []string{"pods.count=3", "seed=9", "load[0].rate=20"}, pods: 3, seed: 9, firstRate: 100.0 * 20 / 80, wantSetsMD: "`pods.count=3` `seed=9` `load[0].rate=20`",
			folded: []string{"--set=seed=9"}, wantMD: "overrides given as `--run-arg`, written into the step files with the `--set`s: `--set=seed=9`"},
		{name: "none", pods: 2, seed: 1, firstRate: 100.0 * 10 / 50, wantSetsMD: "before the axis's own): none", wantMD: "(given to every step's run): `--dsn=root@tcp(127.0.0.1:1)/`\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			scen := filepath.Join(dir, "sw.yaml")
			os.WriteFile(scen, []byte(sweepBase), 0o644)
			out := filepath.Join(dir, "out")
			var ran []string
			runArgs := []string{"--dsn=root@tcp(127.0.0.1:1)/"}
			p := Plan{Scenario: scen, Axis: AxisRate, Values: []float64{100, 200}, Sets: c.sets, RunArgs: runArgs, FoldedRunArgs: c.folded,
				Limits: Limits{P99Ms: 1000, MaxDropped: 0.01, MaxSlipMs: 20, Cores: 2}}
			r, err := Run(context.Background(), p, out, fakeRun(t, 1e9, &ran), &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range r.Steps {
				b, err := os.ReadFile(st.File)
				if err != nil {
					t.Fatal(err)
				}
				sc, err := scenario.Parse(st.File, b)
				if err != nil {
					t.Fatal(err)
				}
				if sc.Pods.Count != c.pods || sc.Seed != c.seed {
					t.Errorf("step %d file: pods %d seed %d, want %d %d", i+1, sc.Pods.Count, sc.Seed, c.pods, c.seed)
				}
				if got := OfferedRate(sc); got != st.Value {
					t.Errorf("step %d file offers %g/s, want the axis value %g", i+1, got, st.Value)
				}
				if i == 0 && sc.Load[0].Rate != c.firstRate {
					t.Errorf("step 1 load[0].rate %g, want %g", sc.Load[0].Rate, c.firstRate)
				}
			}
			cfg := r.Config
			if cfg.ScenarioSHA256 != hashHex([]byte(sweepBase)) || cfg.Seed != c.seed || cfg.Pods != c.pods || cfg.Budget != 1e-4 ||
				!slices.Equal(cfg.Sets, c.sets) || !slices.Equal(cfg.RunArgs, runArgs) {
				t.Errorf("config %+v", cfg)
			}
			var md, js bytes.Buffer
			if err := WriteMarkdown(&md, r); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{hashHex([]byte(sweepBase)), "pods " + string(rune('0'+c.pods)), "loss budget 0.0001", c.wantSetsMD,
				"`--dsn=root@tcp(127.0.0.1:1)/`", "seqgate run " + r.Steps[0].File + " '--dsn=root@tcp(127.0.0.1:1)/'", c.wantMD} {
				if !strings.Contains(md.String(), want) {
					t.Errorf("sweep.md lacks %q:\n%s", want, md.String())
				}
			}
			if err := WriteJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			var back struct {
				Config Config `json:"config"`
			}
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Config.Pods != c.pods || !slices.Equal(back.Config.RunArgs, runArgs) {
				t.Errorf("sweep.json config %+v (%v)", back.Config, err)
			}
		})
	}
}

// TestRefineBisects runs the refine pass over a fake service that breaks at 300/s: from held 200 and
// broke 400 it must close in on 300 within the resolution, and stop at its step and time bounds.
func TestRefineBisects(t *testing.T) {
	for _, c := range []struct {
		name           string
		refine         float64
		steps          int
		tick           time.Duration // how far the fake clock moves per step run
		time           time.Duration
		held, broke    float64
		runs           []float64
		refined        string
		refineRowsInMD int
	}{
		{name: "off", held: 200, broke: 400, runs: []float64{100, 200, 400}},
		{name: "10%", refine: 0.1, held: 275, broke: 300, runs: []float64{100, 200, 400, 300, 250, 275}, refined: "between 275 and 300 (within 10%)", refineRowsInMD: 3},
		{name: "coarse 50%", refine: 0.5, held: 200, broke: 300, runs: []float64{100, 200, 400, 300}, refined: "between 200 and 300 (within 50%)", refineRowsInMD: 1},
		{name: "step bound", refine: 0.01, steps: 2, held: 250, broke: 300, runs: []float64{100, 200, 400, 300, 250}, refined: "stopped after 2 refine steps", refineRowsInMD: 2},
		{name: "time bound", refine: 0.01, tick: time.Hour, time: 90 * time.Minute, held: 250, broke: 300, runs: []float64{100, 200, 400, 300, 250}, refined: "time bound", refineRowsInMD: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			scen := filepath.Join(dir, "sw.yaml")
			os.WriteFile(scen, []byte(sweepBase), 0o644)
			var ran []string
			now := time.Unix(0, 0)
			fake := fakeRun(t, 300, &ran)
			var offered []float64
			run := func(ctx context.Context, s, d string) (res child.Result, err error) {
				b, _ := os.ReadFile(s)
				sc, _ := scenario.Parse(s, b)
				offered = append(offered, OfferedRate(sc))
				now = now.Add(c.tick)
				return fake(ctx, s, d)
			}
			p := Plan{Scenario: scen, Axis: AxisRate, Values: []float64{100, 200, 400, 800}, Refine: c.refine, RefineSteps: c.steps, RefineTime: c.time,
				Now: func() time.Time { return now }, Limits: Limits{P99Ms: 1000, MaxDropped: 0.01, MaxSlipMs: 20, Cores: 2}}
			r, err := Run(context.Background(), p, filepath.Join(dir, "out"), run, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Held != c.held || r.BrokeAt != c.broke || !slices.Equal(offered, c.runs) {
				t.Fatalf("held %g broke %g after runs %v; want %g %g after %v", r.Held, r.BrokeAt, offered, c.held, c.broke, c.runs)
			}
			if !strings.Contains(r.Refined, c.refined) || (c.refined == "") != (r.Refined == "") {
				t.Errorf("refined %q, want %q", r.Refined, c.refined)
			}
			var md bytes.Buffer
			WriteMarkdown(&md, r)
			if got := strings.Count(md.String(), "(refine) |"); got != c.refineRowsInMD {
				t.Errorf("%d refine rows in sweep.md, want %d:\n%s", got, c.refineRowsInMD, md.String())
			}
			if c.refined != "" && !strings.Contains(md.String(), "Refine: ") {
				t.Errorf("sweep.md lacks the refine line:\n%s", md.String())
			}
		})
	}
}

// FuzzSplitRunArgs: whatever the arguments, SplitRunArgs does not panic, keeps every argument it
// does not take (in order), and every override it takes is an assignment.
func FuzzSplitRunArgs(f *testing.F) {
	for _, s := range []string{"--set=pods.count=3\x00--junit=x", "--set\x00a=1", "--seed\x007\x00--duration=5s", "--set", "--out=x", "--set=a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		sets, rest, err := SplitRunArgs(args)
		if err != nil {
			return
		}
		for _, s := range sets {
			if !strings.Contains(s, "=") {
				t.Errorf("override %q is not PATH=VALUE", s)
			}
		}
		i := 0
		for _, a := range args {
			if i < len(rest) && a == rest[i] {
				i++
			}
		}
		if i != len(rest) || len(rest) > len(args) {
			t.Errorf("rest %q is not a subsequence of %q", rest, args)
		}
	})
}
