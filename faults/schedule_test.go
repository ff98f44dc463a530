package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"pgregory.net/rapid"

	"github.com/seqgate/seqgate/faults/kinds"
)

var testTargets = TargetSet{Tenants: []string{"t1", "t2", "t3", "t4"}, Pods: []string{"pod-1", "pod-2", "pod-3"}}

func decodeScenario(t *testing.T, src string) scenarioDoc {
	t.Helper()
	var doc scenarioDoc
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

const mixedScenario = `
faults:
  - at: 10s
    for: 5s
    kind: tenant_db_stall
    target: random
  - at: 20s
    every: 30s
    repeat: 3
    for: 4s
    kind: pod_crash
    target: random
  - at: 25s
    for: 10s
    kind: meta_db_latency
  - at: 40s
    kind: consumer_disconnect
    target: all
nemesis:
  kinds: [pod_pause, tenant_db_down, consumer_slow]
  mean_interval: 7s
  duration: [1s, 3s]
  start: 5s
  stop: 110s
`

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExpandDeterministic: the same seed gives the same schedule; another seed a different one.
func TestExpandDeterministic(t *testing.T) {
	doc := decodeScenario(t, mixedScenario)
	expand := func(seed int64) string {
		in, err := Expand(doc.Faults, doc.Nemesis, seed, 2*time.Minute, testTargets)
		if err != nil {
			t.Fatal(err)
		}
		return mustJSON(t, in)
	}
	a, b, c := expand(42), expand(42), expand(43)
	if a != b {
		t.Fatalf("same seed, different schedules:\n%s\n%s", a, b)
	}
	if a == c {
		t.Fatal("seeds 42 and 43 gave the same schedule: the seed is not used")
	}
}

// TestExpandTimeline checks repetitions, target resolution, ordering and ids of a timeline.
func TestExpandTimeline(t *testing.T) {
	doc := decodeScenario(t, mixedScenario)
	in, err := Expand(doc.Faults, nil, 7, 2*time.Minute, testTargets)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range in {
		got = append(got, x.ID+" "+x.Kind+" "+x.At.String()+" "+x.For.String())
	}
	want := []string{
		"f001 tenant_db_stall 10s 5s",
		"f002 pod_crash 20s 4s",
		"f003 meta_db_latency 25s 10s",
		"f004 consumer_disconnect 40s 0s",
		"f005 pod_crash 50s 4s",
		"f006 pod_crash 1m20s 4s",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("schedule\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if in[2].Target != TargetMetaDB || in[3].Target != TargetAll || len(in[3].Targets) != 4 {
		t.Errorf("targets: meta %q, all %q %v", in[2].Target, in[3].Target, in[3].Targets)
	}
	if !slices.Contains(testTargets.Tenants, in[0].Target) || !slices.Contains(testTargets.Pods, in[1].Target) {
		t.Errorf("random targets %q %q not drawn from the run's names", in[0].Target, in[1].Target)
	}
	if in[0].Params.Value() != (kinds.StallParams{Then: kinds.ThenReset}) {
		t.Errorf("default params not filled: %v", in[0].Params)
	}
	// Adding a nemesis must not change what the timeline drew.
	withN, err := Expand(doc.Faults, doc.Nemesis, 7, 2*time.Minute, testTargets)
	if err != nil {
		t.Fatal(err)
	}
	var timeline []Instance
	for _, x := range withN {
		if strings.HasPrefix(x.Source, "faults[") {
			timeline = append(timeline, x)
		}
	}
	for i := range timeline {
		if timeline[i].Target != in[i].Target || timeline[i].At != in[i].At {
			t.Fatalf("nemesis changed timeline entry %d: %+v vs %+v", i, timeline[i], in[i])
		}
	}
	if len(withN) == len(in) {
		t.Fatal("nemesis added nothing in 110s at a 7s mean interval")
	}
}

func TestExpandErrors(t *testing.T) {
	cases := []struct {
		name, src string
		run       time.Duration
		ts        TargetSet
		want      []string
	}{
		{"unknown tenant", "faults:\n  - {at: 1s, for: 1s, kind: tenant_db_down, target: t9}\n", time.Minute, testTargets, []string{"faults[0] line 2", `unknown tenant "t9"`, "tenant_1..tenant_4 or a tenant id (t1, t2, t3, t4), random, all"}},
		{"after run end", "faults:\n  - {at: 50s, for: 20s, kind: pod_pause, target: pod-1}\n", time.Minute, testTargets, []string{"ends at 1m10s", "before the drain"}},
		{"overlap", "faults:\n  - {at: 1s, for: 10s, kind: tenant_db_stall, target: t1}\n  - {at: 5s, for: 1s, kind: tenant_db_latency, target: all}\n", time.Minute, testTargets, []string{"faults[1] line 3", "overlaps faults[0] line 2"}},
		{"no pods", "faults:\n  - {at: 1s, for: 1s, kind: pod_crash, target: random}\n", time.Minute, TargetSet{Tenants: []string{"t1"}}, []string{"no pod to target"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := decodeScenario(t, c.src)
			_, err := Expand(doc.Faults, doc.Nemesis, 1, c.run, c.ts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	// The negative control: distinct resources at the same time do not conflict.
	doc := decodeScenario(t, "faults:\n  - {at: 1s, for: 10s, kind: tenant_db_stall, target: t1}\n  - {at: 1s, for: 10s, kind: tenant_db_stall, target: t2}\n  - {at: 1s, for: 10s, kind: pod_pause, target: pod-1}\n")
	if _, err := Expand(doc.Faults, nil, 1, time.Minute, testTargets); err != nil {
		t.Fatalf("distinct resources: %v", err)
	}
}

// TestNemesisProperties: for any seed, nemesis faults stay in their window, draw from the listed kinds
// and duration range, never overlap on a resource, and repeat exactly for the same seed.
func TestNemesisProperties(t *testing.T) {
	doc := decodeScenario(t, mixedScenario)
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Int64().Draw(rt, "seed")
		in, err := Expand(doc.Faults, doc.Nemesis, seed, 2*time.Minute, testTargets)
		if err != nil {
			rt.Fatal(err)
		}
		again, _ := Expand(doc.Faults, doc.Nemesis, seed, 2*time.Minute, testTargets)
		if !reflect.DeepEqual(in, again) {
			rt.Fatal("not deterministic")
		}
		for i, x := range in {
			if x.End() > 2*time.Minute {
				rt.Fatalf("%s ends at %s after the run", x.ID, x.End())
			}
			if conflict(append(append([]Instance(nil), in[:i]...), in[i+1:]...), x) != nil {
				rt.Fatalf("%s overlaps another fault on its resource", x.ID)
			}
			if !strings.HasPrefix(x.Source, "nemesis") {
				continue
			}
			if !slices.Contains(doc.Nemesis.Kinds, x.Kind) || x.At < 5*time.Second || x.End() > 110*time.Second {
				rt.Fatalf("nemesis fault out of spec: %+v", x)
			}
			if k, _ := Lookup(x.Kind); k.Timing == TimingSpan && (x.For < time.Second || x.For > 3*time.Second) {
				rt.Fatalf("duration %s out of [1s, 3s]", x.For)
			}
		}
	})
}

// TestScheduleRoundTrip: what SaveSchedule writes, LoadSchedule reads back identically (the replay
// path), and a corrupted schedule is refused with the fault's id.
func TestScheduleRoundTrip(t *testing.T) {
	doc := decodeScenario(t, mixedScenario)
	in, err := Expand(doc.Faults, doc.Nemesis, 99, 2*time.Minute, testTargets)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ScheduleFile)
	want := Schedule{Scenario: "mixed", Seed: 99, RunDuration: "2m0s", Faults: in}
	if err := SaveSchedule(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := LoadSchedule(path)
	if err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, got.Faults) != mustJSON(t, in) || got.Seed != 99 || got.Version != ScheduleVersion {
		t.Fatalf("round trip changed the schedule")
	}
	// Params read back from JSON are the same typed params (not a map of float64s and strings).
	if !reflect.DeepEqual(got.Faults, in) {
		t.Fatalf("round trip changed the typed schedule:\n%+v\n%+v", got.Faults, in)
	}
	// The first stall that ends with a reset is the one the corruptions below hit.
	var stall Instance
	for _, x := range in {
		if x.Params != nil && x.Params.Map()["then"] == kinds.ThenReset {
			stall = x
			break
		}
	}
	if stall.ID == "" {
		t.Fatal("no stall with then=reset in the schedule")
	}
	firstOfKind := in[slices.IndexFunc(in, func(x Instance) bool { return x.Kind == stall.Kind })].ID
	at := func(id string) string { return fmt.Sprintf("fault %s (%s): ", id, stall.Kind) }
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"then": "reset"`, `"then": "reset", "bogus": 1`, at(stall.ID) + `unknown param "bogus" (allowed: then)`},
		{`"then": "reset"`, `"then": "later"`, at(stall.ID) + `param then: "later" is not allowed (allowed: reset, resume)`},
		{`"then": "reset"`, `"then": 1`, at(stall.ID) + `param then: want a JSON string, got 1`},
		{`"kind": "` + stall.Kind + `"`, `"kind": "db_explode"`, "fault " + firstOfKind + `: unknown fault kind "db_explode"`},
	} {
		bad := strings.Replace(string(b), c.from, c.to, 1)
		if bad == string(b) {
			t.Fatalf("%s not found in the schedule", c.from)
		}
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSchedule(path); err == nil || !strings.Contains(err.Error(), path+": "+c.want) {
			t.Errorf("corrupt schedule (%s): error %v, want %q", c.to, err, c.want)
		}
	}
}

// TestSlotsAndRebind: a tenant can be named by its slot (tenant_<N>); every instance records its slots;
// Rebind maps a recorded schedule onto a new run's tenant ids by position (the --replay path) and
// refuses a slot the new run does not have.
func TestSlotsAndRebind(t *testing.T) {
	doc := decodeScenario(t, `
faults:
  - {at: 1s, for: 2s, kind: tenant_db_stall, target: tenant_2}
  - {at: 1s, for: 2s, kind: pod_pause, target: random}
  - {at: 5s, for: 2s, kind: tenant_db_down, target: all}
  - {at: 9s, for: 2s, kind: meta_db_down}
nemesis:
  kinds: [tenant_db_latency]
  mean_interval: 2s
  duration: [1s, 1s]
  start: 12s
  targets: [tenant_3]
`)
	first := TargetSet{Tenants: []string{"ta", "tb", "tc"}, Pods: []string{"pod-1", "pod-2"}}
	in, err := Expand(doc.Faults, doc.Nemesis, 5, 30*time.Second, first)
	if err != nil {
		t.Fatal(err)
	}
	if in[0].Target != "tb" || !slices.Equal(in[0].Slots, []string{"tenant_2"}) {
		t.Fatalf("slot target: %+v", in[0])
	}
	for _, x := range in {
		if x.Kind == kinds.TenantDBLatencyName && !slices.Equal(x.Targets, []string{"tc"}) {
			t.Fatalf("nemesis targets [tenant_3] drew %v", x.Targets)
		}
	}
	second := TargetSet{Tenants: []string{"tx", "ty", "tz"}, Pods: []string{"pod-1", "pod-2"}}
	re, err := Rebind(in, second)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if !slices.Equal(re[i].Slots, in[i].Slots) || re[i].At != in[i].At || re[i].Kind != in[i].Kind {
			t.Fatalf("rebind changed more than the names: %+v vs %+v", re[i], in[i])
		}
	}
	if re[0].Target != "ty" || !slices.Equal(re[2].Targets, []string{"tx", "ty", "tz"}) || re[2].Target != TargetAll || re[3].Target != TargetMetaDB || re[1].Target != in[1].Target {
		t.Fatalf("rebind: %+v", re)
	}
	if _, err := Rebind(in, TargetSet{Tenants: []string{"only"}, Pods: second.Pods}); err == nil || !strings.Contains(err.Error(), `tenant "tenant_2" does not exist`) {
		t.Fatalf("rebind onto fewer tenants: %v", err)
	}
}

// TestSaveScheduleRefusesLinks: SaveSchedule never writes through a symbolic link, at schedule.json
// or at its temp file: the link is refused, named, and the file it points to is untouched. A stale
// regular temp file and an existing schedule are replaced (the controls).
func TestSaveScheduleRefusesLinks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		plant   func(t *testing.T, path, victim string)
		wantErr string // "" = saved
	}{
		{name: "link at the schedule", plant: func(t *testing.T, path, victim string) { symlink(t, victim, path) },
			wantErr: ScheduleFile + " is a symbolic link"},
		{name: "link at the temp file", plant: func(t *testing.T, path, victim string) { symlink(t, victim, path+".tmp") },
			wantErr: ScheduleFile + ".tmp is a symbolic link"},
		{name: "stale temp file", plant: func(t *testing.T, path, _ string) { writeTestFile(t, path+".tmp", "stale") }},
		{name: "earlier schedule", plant: func(t *testing.T, path, _ string) { writeTestFile(t, path, "{}") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, victim := filepath.Join(dir, ScheduleFile), filepath.Join(dir, "victim")
			writeTestFile(t, victim, "precious")
			tc.plant(t, path, victim)
			err := SaveSchedule(path, Schedule{Scenario: "s", Seed: 1, RunDuration: "1m0s"})
			if b, _ := os.ReadFile(victim); string(b) != "precious" {
				t.Fatalf("the file a link pointed to was written: %q", b)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("SaveSchedule = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, err := LoadSchedule(path); err != nil || got.Scenario != "s" {
				t.Fatalf("LoadSchedule = %+v, %v", got, err)
			}
			if _, err := os.Lstat(path + ".tmp"); err == nil {
				t.Error("the temp file was left behind")
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
