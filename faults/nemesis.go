package faults

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// NemesisSpec is a scenario's `nemesis:` block: faults drawn at random from the scenario seed, one at a
// time, with exponential gaps of mean MeanInterval between the end of one and the start of the next:
//
//	nemesis:
//	  kinds: [pod_crash, tenant_db_stall]   # drawn uniformly
//	  mean_interval: 30s                    # mean gap between faults
//	  duration: [2s, 10s]                   # each span fault lasts uniform in [min, max]
//	  start: 10s                            # optional: first fault not before (default 0)
//	  stop: 2m                              # optional: last fault healed by (default: run end)
//	  targets: [tenant_1, pod-0]            # optional: only these names (default: any valid target)
//	  params:                               # optional: params per kind (default: the kind's defaults)
//	    tenant_db_stall: {then: resume}
type NemesisSpec struct {
	Kinds        []string
	MeanInterval time.Duration
	MinDuration  time.Duration
	MaxDuration  time.Duration
	Start        time.Duration
	Stop         time.Duration // 0 = the run's end
	Targets      []string
	// Params holds each kind's typed params (the kind's defaults for kinds not listed).
	Params map[string]Params
	Line   int
}

var nemesisKeys = []string{"kinds", "mean_interval", "duration", "start", "stop", "targets", "params"}

// UnmarshalYAML decodes a nemesis block strictly (unknown keys, kinds and params are errors with a line).
func (n *NemesisSpec) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: nemesis must be a mapping with keys %s", node.Line, strings.Join(nemesisKeys, ", "))
	}
	*n = NemesisSpec{Line: node.Line}
	var params *yaml.Node
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, val := node.Content[i], node.Content[i+1]
		var err error
		switch key.Value {
		case "kinds":
			n.Kinds, err = stringList(val, "kinds")
		case "mean_interval":
			n.MeanInterval, err = scalarDuration(val, "mean_interval")
		case "duration":
			n.MinDuration, n.MaxDuration, err = durationRange(val)
		case "start":
			n.Start, err = scalarDuration(val, "start")
		case "stop":
			n.Stop, err = scalarDuration(val, "stop")
		case "targets":
			n.Targets, err = stringList(val, "targets")
		case "params":
			params = val
		default:
			err = fmt.Errorf("line %d: unknown key %q in nemesis (allowed: %s)", key.Line, key.Value, strings.Join(nemesisKeys, ", "))
		}
		if err != nil {
			return err
		}
	}
	n.Params = map[string]Params{}
	if params != nil {
		if params.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: nemesis params must map kind names to params", params.Line)
		}
		for i := 0; i+1 < len(params.Content); i += 2 {
			key, val := params.Content[i], params.Content[i+1]
			if !slices.Contains(n.Kinds, key.Value) {
				return fmt.Errorf("line %d: nemesis params for %q, which is not in kinds (%s)", key.Line, key.Value, strings.Join(n.Kinds, ", "))
			}
			k, _ := Lookup(key.Value)
			p, err := k.decodeYAML(val)
			if err != nil {
				return within(err, "nemesis params "+key.Value)
			}
			n.Params[key.Value] = p
		}
	}
	return n.Validate()
}

// Validate checks the block's kinds, interval, duration range and window, and fills default params.
func (n *NemesisSpec) Validate() error {
	if len(n.Kinds) == 0 {
		return n.errorf("kinds is empty (allowed: %s)", strings.Join(KindNames(), ", "))
	}
	if n.Params == nil {
		n.Params = map[string]Params{}
	}
	for _, name := range n.Kinds {
		k, ok := Lookup(name)
		if !ok {
			return n.errorf("%v", unknownKind(name))
		}
		if _, ok := n.Params[name]; !ok {
			n.Params[name] = k.Defaults()
		}
	}
	if n.MeanInterval <= 0 {
		return n.errorf("mean_interval must be > 0 (e.g. mean_interval: 30s)")
	}
	if n.MinDuration <= 0 || n.MaxDuration < n.MinDuration {
		return n.errorf("duration must be [min, max] with 0 < min <= max, got [%s, %s]", n.MinDuration, n.MaxDuration)
	}
	if n.Start < 0 || n.Stop < 0 || (n.Stop > 0 && n.Stop <= n.Start) {
		return n.errorf("window start %s, stop %s: need 0 <= start < stop", n.Start, n.Stop)
	}
	return nil
}

func (n *NemesisSpec) errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if n.Line > 0 {
		return fmt.Errorf("line %d: nemesis: %s", n.Line, msg)
	}
	return fmt.Errorf("nemesis: %s", msg)
}

func stringList(n *yaml.Node, field string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: %s must be a list, e.g. [a, b]", n.Line, field)
	}
	var out []string
	for _, c := range n.Content {
		s, err := scalarString(c, field)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// durationRange accepts `[2s, 10s]`, `{min: 2s, max: 10s}` or a single duration (min = max).
func durationRange(n *yaml.Node) (lo, hi time.Duration, err error) {
	switch n.Kind {
	case yaml.ScalarNode:
		d, err := scalarDuration(n, "duration")
		return d, d, err
	case yaml.SequenceNode:
		if len(n.Content) != 2 {
			return 0, 0, fmt.Errorf("line %d: duration must be [min, max]", n.Line)
		}
		if lo, err = scalarDuration(n.Content[0], "duration min"); err != nil {
			return 0, 0, err
		}
		hi, err = scalarDuration(n.Content[1], "duration max")
		return lo, hi, err
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			switch key.Value {
			case "min":
				lo, err = scalarDuration(val, "duration min")
			case "max":
				hi, err = scalarDuration(val, "duration max")
			default:
				err = fmt.Errorf("line %d: unknown key %q in duration (allowed: min, max)", key.Line, key.Value)
			}
			if err != nil {
				return 0, 0, err
			}
		}
		return lo, hi, nil
	}
	return 0, 0, fmt.Errorf("line %d: duration must be [min, max]", n.Line)
}
