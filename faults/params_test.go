package faults

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// TestParamsOf: a kind takes only its own parameter struct, within the decoders' rules; a valid one is
// carried as is (typed), and Build refuses params bound to another kind.
func TestParamsOf(t *testing.T) {
	stall, _ := Lookup(kinds.TenantDBStallName)
	latency, _ := Lookup(kinds.TenantDBLatencyName)
	cases := []struct {
		name string
		kind Kind
		v    any
		want string // substring of the error; "" = accepted
	}{
		{"own struct", stall, kinds.StallParams{Then: kinds.ThenResume}, ""},
		{"zero durations allowed", latency, kinds.LatencyParams{Direction: "upstream"}, ""},
		{"another kind's struct", stall, kinds.LatencyParams{}, "kind tenant_db_stall takes kinds.StallParams params, got kinds.LatencyParams"},
		{"a map", stall, map[string]any{"then": "reset"}, "got map[string]interface {}"},
		{"outside the enum", stall, kinds.StallParams{Then: "later"}, `param then: "later" is not allowed (allowed: reset, resume)`},
		{"empty enum value", latency, kinds.LatencyParams{Latency: time.Second}, `param direction: "" is not allowed`},
		{"negative duration", latency, kinds.LatencyParams{Latency: -time.Second, Direction: "both"}, "param latency: -1s is negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.kind.ParamsOf(c.v)
			if c.want == "" {
				if err != nil || p.Value() != c.v {
					t.Fatalf("ParamsOf(%#v) = %v, %v", c.v, p, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParamsOf(%#v) error %v, want %q", c.v, err, c.want)
			}
		})
	}
	env := faultstest.NewEnv(t)
	in := Instance{ID: "f001", Kind: kinds.TenantDBStallName, Target: "t1", Targets: []string{"t1"}, For: time.Second, Params: latency.Defaults()}
	if _, err := Build(env, in); err == nil || !strings.Contains(err.Error(), "given the params of kind tenant_db_latency") {
		t.Fatalf("Build with another kind's params: %v", err)
	}
}

// TestParamsDecodeOnce: the YAML and the JSON decoders give the same typed value for the same params,
// defaults fill what is not given, and Map prints durations as strings.
func TestParamsDecodeOnce(t *testing.T) {
	k, _ := Lookup(kinds.ConsumerSlowName)
	var node yaml.Node
	if err := yaml.Unmarshal([]byte("{count: 2}"), &node); err != nil {
		t.Fatal(err)
	}
	fromYAML, err := k.decodeYAML(node.Content[0])
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := k.decodeJSON([]byte(`{"count": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	want := kinds.ConsumerSlowParams{ReadDelay: 200 * time.Millisecond, Count: 2}
	if fromYAML.Value() != want || fromJSON.Value() != want {
		t.Fatalf("yaml %#v, json %#v, want %#v", fromYAML.Value(), fromJSON.Value(), want)
	}
	if m := fromJSON.Map(); !reflect.DeepEqual(m, map[string]any{"read_delay": "200ms", "count": 2}) {
		t.Fatalf("Map() = %#v", m)
	}
	if b, err := json.Marshal(fromYAML); err != nil || string(b) != `{"count":2,"read_delay":"200ms"}` {
		t.Fatalf("json.Marshal(params) = %s, %v", b, err)
	}
	if b, err := yaml.Marshal(fromYAML); err != nil || string(b) != "count: 2\nread_delay: 200ms\n" {
		t.Fatalf("yaml.Marshal(params) = %q, %v", b, err)
	}
	if _, err := k.decodeJSON([]byte(`{"count": 1.5}`)); err == nil || !strings.Contains(err.Error(), `param count: "1.5" is not a non-negative integer`) {
		t.Fatalf("count 1.5: %v", err)
	}
}

// FuzzScheduleParams: whatever a schedule.json holds as a kind's params, decoding never panics, and
// params it accepts print (Map) and decode back to the same typed value.
func FuzzScheduleParams(f *testing.F) {
	files, _ := filepath.Glob("testdata/schedules/all-kinds.*.json")
	for _, file := range files {
		var s struct {
			Faults []struct {
				Kind   string          `json:"kind"`
				Params json.RawMessage `json:"params"`
			} `json:"faults"`
		}
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if err := json.Unmarshal(b, &s); err != nil {
			f.Fatal(err)
		}
		for _, x := range s.Faults {
			f.Add(x.Kind, []byte(x.Params))
		}
	}
	f.Add("tenant_db_stall", []byte(`{"then": 1}`))
	f.Add("pod_restart", []byte(`{"grace": "-1s"}`))
	f.Fuzz(func(t *testing.T, kind string, raw []byte) {
		k, ok := Lookup(kind)
		if !ok {
			return
		}
		p, err := k.decodeJSON(raw)
		if err != nil {
			return
		}
		b, err := json.Marshal(p.Map())
		if err != nil {
			t.Fatal(err)
		}
		again, err := k.decodeJSON(b)
		if err != nil {
			t.Fatalf("%s: printed params %s do not decode: %v", kind, b, err)
		}
		if again.Value() != p.Value() {
			t.Fatalf("%s: %#v printed as %s reads back as %#v", kind, p.Value(), b, again.Value())
		}
		if _, err := k.ParamsOf(p.Value()); err != nil {
			t.Fatalf("%s: decoded params fail the code path's check: %v", kind, err)
		}
	})
}
