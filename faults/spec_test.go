package faults

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seqgate/seqgate/faults/kinds"
)

type scenarioDoc struct {
	Faults  []Spec       `yaml:"faults"`
	Nemesis *NemesisSpec `yaml:"nemesis"`
}

func TestDecodeSpec(t *testing.T) {
	src := `
faults:
  - at: 30s
    for: 10s
    kind: tenant_db_stall
    target: random
    params: {then: resume}
  - at: 1m
    every: 20s
    repeat: 3
    for: 5s
    kind: pod_crash
    target: pod-1
  - at: 2m
    kind: consumer_disconnect
    target: all
nemesis:
  kinds: [pod_pause, meta_db_down]
  mean_interval: 30s
  duration: [2s, 10s]
  params:
    pod_pause: {}
`
	var doc scenarioDoc
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Faults) != 3 {
		t.Fatalf("got %d faults", len(doc.Faults))
	}
	f := doc.Faults[0]
	if f.At != 30*time.Second || f.For != 10*time.Second || f.Kind != kinds.TenantDBStallName || f.Target != "random" || f.Params.Value() != (kinds.StallParams{Then: kinds.ThenResume}) || f.Line != 3 {
		t.Errorf("faults[0] = %+v", f)
	}
	if p := doc.Faults[1].Params; p.Value() != (kinds.PodCrashParams{Restart: true}) {
		t.Errorf("pod_crash default restart: %v", p)
	}
	n := doc.Nemesis
	if n == nil || n.MinDuration != 2*time.Second || n.MaxDuration != 10*time.Second || n.MeanInterval != 30*time.Second || len(n.Params) != 2 {
		t.Errorf("nemesis = %+v", n)
	}
}

func TestDecodeSpecErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // substrings of the error
	}{
		{"unknown param", "faults:\n  - at: 1s\n    for: 2s\n    kind: tenant_db_stall\n    target: t1\n    params: {then: resume, foo: 1}\n", []string{"line 6", `unknown param "foo"`, "allowed: then"}},
		{"bad enum", "faults:\n  - at: 1s\n    for: 2s\n    kind: tenant_db_stall\n    target: t1\n    params: {then: later}\n", []string{"line 6", `"later" is not allowed`, "reset, resume"}},
		{"unknown kind", "faults:\n  - at: 1s\n    kind: db_explode\n", []string{"line 2", `unknown fault kind "db_explode"`, "tenant_db_stall"}},
		{"unknown key", "faults:\n  - at: 1s\n    duration: 2s\n    kind: pod_pause\n", []string{"line 3", `unknown key "duration"`, "allowed: at, for"}},
		{"bare number", "faults:\n  - at: 30\n    for: 2s\n    kind: pod_pause\n    target: p\n", []string{"line 2", "no unit"}},
		{"missing for", "faults:\n  - at: 1s\n    kind: pod_pause\n    target: p\n", []string{"line 2", "needs `for`"}},
		{"instant with for", "faults:\n  - at: 1s\n    for: 1s\n    kind: consumer_disconnect\n    target: t\n", []string{"instant"}},
		{"missing target", "faults:\n  - at: 1s\n    for: 1s\n    kind: pod_pause\n", []string{"needs a target"}},
		{"meta target", "faults:\n  - at: 1s\n    for: 1s\n    kind: meta_db_down\n    target: t1\n", []string{"meta DB"}},
		{"overlapping repeat", "faults:\n  - at: 1s\n    for: 5s\n    every: 5s\n    repeat: 2\n    kind: pod_pause\n    target: p\n", []string{"every (5s) must be longer"}},
		{"bad duration param", "faults:\n  - at: 1s\n    for: 5s\n    kind: tenant_db_latency\n    target: t\n    params: {latency: fast}\n", []string{"line 6", "param latency", "not a duration"}},
		{"nemesis unknown key", "nemesis:\n  kinds: [pod_pause]\n  mean: 1s\n", []string{"line 3", `unknown key "mean"`}},
		{"nemesis params kind", "nemesis:\n  kinds: [pod_pause]\n  mean_interval: 1s\n  duration: 1s\n  params: {pod_crash: {}}\n", []string{"line 5", "not in kinds"}},
		{"nemesis range", "nemesis:\n  kinds: [pod_pause]\n  mean_interval: 1s\n  duration: [5s, 1s]\n", []string{"0 < min <= max"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var doc scenarioDoc
			err := yaml.Unmarshal([]byte(c.src), &doc)
			if err == nil {
				t.Fatalf("no error for %q", c.src)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
