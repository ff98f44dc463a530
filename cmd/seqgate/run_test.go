package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/run"
	"github.com/seqgate/seqgate/harness/service"
)

// Flags that cannot work together are refused before anything starts, naming the flag.
func TestRunRefusesBadTargetFlags(t *testing.T) {
	dir := t.TempDir()
	noPods := filepath.Join(dir, "nopods.yaml")
	if err := os.WriteFile(noPods, []byte("name: x\nduration: 5s\ntenants: [{count: 1}]\nload:\n  - {tenants: g1, executor: constant-arrival-rate, rate: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := runFlags{profile: "eventlogd", ready: time.Minute}
	with := func(edit func(*runFlags)) runFlags { f := base; edit(&f); return f }
	for _, tc := range []struct {
		name string
		f    runFlags
		want string
	}{
		{"no pods without --target", base, "nopods.yaml declares no pods"},
		{"--api-key without --target", with(func(f *runFlags) { f.apiKey = "k" }), "--api-key needs --target"},
		{"--audit-db without --target", with(func(f *runFlags) { f.auditDB = "x" }), "--audit-db needs --target"},
		{"unknown profile", with(func(f *runFlags) { f.target, f.profile = "http://127.0.0.1:1", "drive8" }), `--target-profile "drive8": unknown (allowed: eventlogd, drive9, generic)`},
		{"generic without --audit-db", with(func(f *runFlags) {
			f.target, f.profile, f.dsn = "http://127.0.0.1:1", "generic", "root@tcp(127.0.0.1:1)/"
		}), "--audit-db TEMPLATE is required"},
		{"--tenant-id without --api-key", with(func(f *runFlags) { f.target, f.tenantID = "http://127.0.0.1:1", "t" }), "--tenant-id needs --api-key"},
		{"drive9 --api-key without --tenant-id", with(func(f *runFlags) {
			f.target, f.profile, f.dsn, f.apiKey = "http://127.0.0.1:1", "drive9", "root@tcp(127.0.0.1:1)/", "k"
		}), "give --tenant-id with --api-key"},
		{"bad --provision-concurrency", with(func(f *runFlags) { f.target, f.provConc = "http://127.0.0.1:1", 257 }), "--provision-concurrency 257: allowed 1..256"},
		{"negative --provision-concurrency", with(func(f *runFlags) { f.target, f.provConc = "http://127.0.0.1:1", -1 }), "--provision-concurrency -1: allowed 1..256"},
		{"bad --ready-timeout", with(func(f *runFlags) { f.target, f.ready = "http://127.0.0.1:1", -time.Second }), "--ready-timeout -1s"},
		{"--shard 0/3", with(func(f *runFlags) { f.target, f.shard = "http://127.0.0.1:1", "0/3" }), `--shard "0/3": K is 0`},
		{"--shard 4/3", with(func(f *runFlags) { f.target, f.shard = "http://127.0.0.1:1", "4/3" }), `--shard "4/3": K is 4`},
		{"--shard a/b", with(func(f *runFlags) { f.target, f.shard = "http://127.0.0.1:1", "a/b" }), `--shard "a/b": K and N are whole numbers`},
		{"--shard without --target", with(func(f *runFlags) { f.shard = "1/1"; f.sets = []string{"pods.count=1"} }), "--shard 1/1 needs --target"},
		{"--shard with more agents than tenants", with(func(f *runFlags) { f.target, f.shard = "http://127.0.0.1:1", "1/2" }), "--shard 1/2: scenario x has 1 tenants, so at most 1 agents"},
		{"--shard with --replay", with(func(f *runFlags) { f.target, f.shard, f.replay = "http://127.0.0.1:1", "1/1", dir }), "--replay with --shard"},
		{"bad --run-id", with(func(f *runFlags) { f.target, f.runID = "http://127.0.0.1:1", "../x" }), `--run-id "../x": want 1-64 letters`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.out = filepath.Join(dir, "run-"+strings.ReplaceAll(tc.name, " ", "_"))
			err := runRun(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, noPods, tc.f)
			var xe *exitError
			if !errors.As(err, &xe) || xe.code != exitUnusable || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("runRun = %v, want exit %d and %q", err, exitUnusable, tc.want)
			}
			if _, err := os.Stat(tc.f.out); err == nil {
				t.Error("a run directory was made for flags that were refused")
			}
		})
	}
}

// Bad pod profiles, binaries and faults a profile cannot take end the run with exit 3, naming the
// input, before any run directory is made; the control (the same flags, good) gets past these checks.
func TestRunRefusesBadPods(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sc := write("s.yaml", "name: x\nduration: 5s\ntenants: [{count: 1}]\npods: {count: 1}\nload:\n  - {tenants: g1, executor: constant-arrival-rate, rate: 1}\n", 0o644)
	adminFault := write("admin.yaml", "name: x\nduration: 5s\ntenants: [{count: 1}]\npods: {count: 1}\nload:\n  - {tenants: g1, executor: constant-arrival-rate, rate: 1}\nfaults:\n  - {at: 1s, for: 1s, kind: pod_crash, target: pod-1}\n  - {at: 2s, for: 1s, kind: outbox_poller_stall, target: pod-1}\n", 0o644)
	flagsSc := write("flags.yaml", "name: x\nduration: 5s\ntenants: [{count: 1}]\npods: {count: 1, eventlogd: {flags: {sse-queue-size: \"8\"}}}\nload:\n  - {tenants: g1, executor: constant-arrival-rate, rate: 1}\n", 0o644)
	exe := write("pod", "#!/bin/sh\nexit 1\n", 0o755)
	notExe := write("pod.txt", "#!/bin/sh\n", 0o644)
	badPh := write("bad.yaml", "name: p\nenv: {LISTEN: \"{listen}\", POD: \"{pod_name}\"}\nlayout: admin_dsn\ntarget: drive9\n", 0o644)
	good := write("good.yaml", "name: p\nenv: {LISTEN: \"{listen}\", POD: \"{pod}\"}\nlayout: admin_dsn\ntarget: drive9\n", 0o644)
	base := runFlags{profile: "eventlogd", ready: time.Minute}
	with := func(edit func(*runFlags)) runFlags { f := base; edit(&f); return f }
	for _, tc := range []struct {
		name, scenario string
		f              runFlags
		want           string
	}{
		{"unknown pod profile", sc, with(func(f *runFlags) { f.profile = "drive8" }), `--target-profile "drive8": no pod profile of that name`},
		{"--pods-profile missing", sc, with(func(f *runFlags) { f.podsProf = filepath.Join(dir, "none.yaml") }), "none.yaml: no such file"},
		{"unknown placeholder", sc, with(func(f *runFlags) { f.podsProf = badPh }), "bad.yaml:2: env.POD: unknown placeholder {pod_name}"},
		{"--pods-profile and --target-profile", sc, with(func(f *runFlags) { f.podsProf, f.profile = good, "drive9" }), "both name the pods' profile"},
		{"--pods-bin missing", sc, with(func(f *runFlags) { f.profile, f.podsBin = "drive9", filepath.Join(dir, "nope") }), "--pods-bin: pod binary " + filepath.Join(dir, "nope")},
		{"--pods-bin not executable", sc, with(func(f *runFlags) { f.profile, f.podsBin = "drive9", notExe }), "--pods-bin: pod binary " + notExe + ": exec: \"" + notExe + "\": permission denied"},
		{"drive9-server not on PATH", sc, with(func(f *runFlags) { f.profile = "drive9" }), "pod binary drive9-server"},
		{"admin-hook fault on drive9", adminFault, with(func(f *runFlags) { f.profile, f.podsBin = "drive9", exe }), "admin.yaml:9: faults[1].kind: fault kind outbox_poller_stall needs an admin hook"},
		{"eventlogd flags on drive9", flagsSc, with(func(f *runFlags) { f.profile, f.podsBin = "drive9", exe }), "flags.yaml:4: pods.eventlogd: a seeded defect and eventlogd flags are for eventlogd pods"},
		{"--pods-bin with --target", sc, with(func(f *runFlags) { f.target, f.podsBin = "http://127.0.0.1:1", exe }), "--pods-profile and --pods-bin start pods"},
		{"--eventlogd and --pods-bin", sc, with(func(f *runFlags) { f.eventlogd, f.podsBin = exe, exe }), "--eventlogd and --pods-bin both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", dir) // no drive9-server on it
			tc.f.out = filepath.Join(dir, "run-"+strings.ReplaceAll(tc.name, " ", "_"))
			err := runRun(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, tc.scenario, tc.f)
			var xe *exitError
			if !errors.As(err, &xe) || xe.code != exitUnusable || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("runRun = %v, want exit %d and %q", err, exitUnusable, tc.want)
			}
			if _, err := os.Stat(tc.f.out); err == nil {
				t.Error("a run directory was made for flags that were refused")
			}
		})
	}
	// The control: good flags pass checkPods.
	for _, f := range []runFlags{with(func(f *runFlags) { f.profile, f.podsBin = "drive9", exe }), with(func(f *runFlags) { f.podsProf, f.podsBin = good, exe }), base} {
		s, err := readScenario(sc, f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checkPods(sc, s, f); err != nil {
			t.Errorf("%+v: %v", f, err)
		}
	}
}

// docs/run.md lists every flag of `seqgate run`, and docs/external.md every target profile, placeholder
// and target flag, so the docs cannot drift from the code.
func TestRunDocsListFlagsAndProfiles(t *testing.T) {
	runDoc, err := os.ReadFile("../../docs/run.md")
	if err != nil {
		t.Fatal(err)
	}
	extDoc, err := os.ReadFile("../../docs/external.md")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`(?m)^\s+--([a-z-]+)`).FindAllStringSubmatch(newRunCmd().Flags().FlagUsages(), -1)
	if len(names) < 10 {
		t.Fatalf("found %d flags in the usage text", len(names))
	}
	for _, m := range names {
		if !strings.Contains(string(runDoc), "| `--"+m[1]) {
			t.Errorf("docs/run.md has no row for --%s", m[1])
		}
	}
	for _, name := range service.Shipped.Names() {
		if !strings.Contains(string(extDoc), "| `"+name+"` |") {
			t.Errorf("docs/external.md has no row for profile %s", name)
		}
	}
	for _, s := range []string{"{tenant}", "{tenant_nodash}", "{pool}", "--audit-db", "--tenant-column", "--ready-timeout", "--api-key", "--tenant-id", "parseTime=true",
		"The real drive9 server, by hand"} {
		if !strings.Contains(string(extDoc), s) {
			t.Errorf("docs/external.md does not mention %s", s)
		}
	}
}

// TestFinalLineRate: the final line's offered rate is the configured one (1000/s) when the load phase
// ran a little past its schedule, and says so when it was cut short.
func TestFinalLineRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  run.Result
		want string
	}{
		{"ran a little long", run.Result{RunID: "r", ScheduledSeconds: 30, LoadSeconds: 30.25, Offered: 30000, Acked: 29000},
			"offered 1000.0/s, acked 966.7/s over the scheduled 30s (30000 offered, 29000 acked"},
		{"cut short", run.Result{RunID: "r", ScheduledSeconds: 30, LoadSeconds: 10, Offered: 10000, Acked: 10000},
			"offered 1000.0/s, acked 1000.0/s over the 10.0s the load ran (cut short)"},
		{"the load's start on the run's clock", run.Result{RunID: "r", ScheduledSeconds: 30, LoadSeconds: 30, LoadStartSeconds: 1.8094},
			"; the load began at 1.809s of the run (the scenario's at: times count from there, the times above from the run's start)"},
	} {
		if got := finalLine(&tc.res); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q\nwant it to contain %q", tc.name, got, tc.want)
		}
	}
}

// scenario lint against a pod profile refuses what run would refuse for it, and passes the same file
// for a profile that can take it.
func TestLintAgainstPodProfile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "admin.yaml")
	if err := os.WriteFile(file, []byte("name: x\nduration: 5s\ntenants: [{count: 1}]\npods: {count: 1}\nload:\n  - {tenants: g1, executor: constant-arrival-rate, rate: 1}\nfaults:\n  - {at: 2s, for: 1s, kind: event_insert_fail, target: tenant_1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"drive9", "eventlogd"} {
		prof, err := podProfileOf(runFlags{profile: name})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err = lintProfile(context.Background(), &out, []string{file}, "", prof)
		refused := strings.Contains(out.String(), "admin.yaml:8: faults[0].kind: fault kind event_insert_fail needs an admin hook")
		if want := name == "drive9"; refused != want || (err != nil) != want {
			t.Errorf("%s: lint %v, output %q; want refused %v", name, err, out.String(), want)
		}
	}
}

// The drive9 variants of the shipped scenarios lint clean against the drive9 pod profile.
func TestDrive9ScenariosLint(t *testing.T) {
	files, _ := filepath.Glob("../../scenarios/drive9/*.yaml")
	if len(files) < 4 { // faults, gate, pod-crash, tenant-db-stall
		t.Fatalf("found %d drive9 scenarios", len(files))
	}
	prof, err := podProfileOf(runFlags{profile: "drive9"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := lintProfile(context.Background(), &out, files, "", prof); err != nil {
		t.Errorf("%v\n%s", err, out.String())
	}
}

// A --dsn that refuses connections ends a pods run with exit 3 before any pod starts, naming the
// server; nothing is left running.
func TestRunRefusesDeadDSN(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(sc, []byte("name: x\nduration: 5s\ntenants: [{count: 1}]\npods: {count: 1}\nload:\n  - {tenants: g1, executor: constant-arrival-rate, rate: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := filepath.Join(dir, "pod")
	if err := os.WriteFile(pod, []byte("#!/bin/sh\nsleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	f := runFlags{profile: "drive9", podsBin: pod, dsn: "root@tcp(" + addr + ")/", ready: time.Minute, out: filepath.Join(dir, "run")}
	err = runRun(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, sc, f)
	var xe *exitError
	if !errors.As(err, &xe) || xe.code != exitUnusable || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("runRun = %v, want exit 3 naming %s", err, addr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "run", "run.log")); strings.Contains(string(b), "starting pods") {
		t.Error("pods were started against a dead --dsn")
	}
}

// --ready-timeout left out is 0, so the run takes the pod profile's own wait for tenants (drive9's
// 3 minutes, run.TestTenantsTimeout); given, it is what it says.
func TestReadyTimeoutAbsentIsTheProfiles(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--target-profile", "drive9"}, "0s"},
		{[]string{"--target-profile", "drive9", "--ready-timeout", "90s"}, "1m30s"},
	} {
		cmd := newRunCmd()
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		if got := cmd.Flags().Lookup("ready-timeout").Value.String(); got != c.want {
			t.Errorf("%q: --ready-timeout %s, want %s", c.args, got, c.want)
		}
	}
	if d9, _ := service.Shipped.Pods(service.Drive9); d9.Ready.Tenants != 3*time.Minute {
		t.Errorf("drive9's pod profile waits %v for its tenants", d9.Ready.Tenants)
	}
	if usage := newRunCmd().Flags().Lookup("ready-timeout").Usage; !strings.Contains(usage, "drive9's 3m0s; else 1m0s") {
		t.Errorf("--ready-timeout's help: %s", usage)
	}
}
