package faults

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Spec is one entry of a scenario's `faults:` timeline, as written in YAML:
//
//   - at: 30s            # when the (first) fault starts, from the run start
//     for: 10s           # how long it lasts (span kinds); omitted for instant kinds
//     every: 1m          # optional: repeat with this period ...
//     repeat: 3          # ... this many times in all (0 with every = until the run ends)
//     kind: tenant_db_stall
//     target: random     # a tenant or pod name, random (drawn from the seed), all; meta kinds: omit
//     params: {then: resume}
//
// Decoding is strict: unknown keys, unknown kinds and unknown params are errors with a line number.
type Spec struct {
	At     time.Duration
	For    time.Duration
	Every  time.Duration
	Repeat int
	Kind   string
	Target string
	// Params are the kind's typed parameters (every param, defaults filled in), decoded and validated
	// with the entry; nil in a Spec built in code means the kind's defaults.
	Params Params
	// Line is the YAML line of the entry (0 when built in code), used in error messages.
	Line int
}

var specKeys = []string{"at", "for", "every", "repeat", "kind", "target", "params"}

// UnmarshalYAML decodes one timeline entry strictly and validates it against its kind.
func (s *Spec) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a fault entry must be a mapping with keys %s", node.Line, strings.Join(specKeys, ", "))
	}
	*s = Spec{Line: node.Line}
	var params *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, val := node.Content[i], node.Content[i+1]
		if seen[key.Value] {
			return fmt.Errorf("line %d: key %q given twice", key.Line, key.Value)
		}
		seen[key.Value] = true
		var err error
		switch key.Value {
		case "at":
			s.At, err = scalarDuration(val, "at")
		case "for":
			s.For, err = scalarDuration(val, "for")
		case "every":
			s.Every, err = scalarDuration(val, "every")
		case "repeat":
			s.Repeat, err = scalarInt(val, "repeat")
		case "kind":
			s.Kind, err = scalarString(val, "kind")
		case "target":
			s.Target, err = scalarString(val, "target")
		case "params":
			params = val
		default:
			err = fmt.Errorf("line %d: unknown key %q in a fault entry (allowed: %s)", key.Line, key.Value, strings.Join(specKeys, ", "))
		}
		if err != nil {
			return err
		}
	}
	if s.Kind == "" {
		return fmt.Errorf("line %d: fault entry has no kind (allowed: %s)", node.Line, strings.Join(KindNames(), ", "))
	}
	k, ok := Lookup(s.Kind)
	if !ok {
		return fmt.Errorf("line %d: %v", node.Line, unknownKind(s.Kind))
	}
	p, err := k.decodeYAML(params)
	if err != nil {
		return within(err, "kind "+s.Kind)
	}
	s.Params = p
	return s.Validate()
}

// Validate checks the timing and target of a spec against its kind (Expand checks names).
func (s *Spec) Validate() error {
	k, ok := Lookup(s.Kind)
	if !ok {
		return s.errorf("%v", unknownKind(s.Kind))
	}
	if s.At < 0 || s.For < 0 || s.Every < 0 || s.Repeat < 0 {
		return s.errorf("at, for, every and repeat must not be negative")
	}
	switch k.Timing {
	case TimingSpan:
		if s.For <= 0 {
			return s.errorf("kind %s needs `for` (how long the fault lasts, e.g. for: 10s)", k.Name)
		}
	case TimingInstant:
		if s.For != 0 {
			return s.errorf("kind %s is instant: remove `for`", k.Name)
		}
	}
	if s.Repeat > 1 && s.Every == 0 {
		return s.errorf("repeat %d needs `every` (the period)", s.Repeat)
	}
	if s.Every > 0 && s.Every <= s.For {
		return s.errorf("every (%s) must be longer than for (%s) so repetitions do not overlap", s.Every, s.For)
	}
	switch k.Targets {
	case TargetMeta:
		if s.Target != "" && s.Target != TargetMetaDB {
			return s.errorf("kind %s targets the meta DB: omit target or write %q", k.Name, TargetMetaDB)
		}
	default:
		if s.Target == "" {
			return s.errorf("kind %s needs a target: a %s name, %q or %q", k.Name, k.Targets, TargetRandom, TargetAll)
		}
	}
	return nil
}

func (s *Spec) errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if s.Line > 0 {
		return fmt.Errorf("line %d: fault %s: %s", s.Line, s.Kind, msg)
	}
	return fmt.Errorf("fault %s: %s", s.Kind, msg)
}

// within names where an error happened while keeping its "line N: " prefix first, so callers that
// extract the line (the scenario parser) keep the whole message.
func within(err error, where string) error {
	msg := err.Error()
	if strings.HasPrefix(msg, "line ") {
		if line, rest, ok := strings.Cut(msg, ": "); ok {
			return fmt.Errorf("%s: %s: %s", line, where, rest)
		}
	}
	return fmt.Errorf("%s: %s", where, msg)
}

func scalarDuration(n *yaml.Node, field string) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("line %d: %s must be a duration (e.g. 10s)", n.Line, field)
	}
	d, err := parseDuration(n.Value)
	if err != nil {
		return 0, fmt.Errorf("line %d: %s: %v", n.Line, field, err)
	}
	return d, nil
}

func scalarInt(n *yaml.Node, field string) (int, error) {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return 0, fmt.Errorf("line %d: %s must be an integer, got %q", n.Line, field, n.Value)
	}
	return v, nil
}

func scalarString(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		return "", fmt.Errorf("line %d: %s must be a non-empty string", n.Line, field)
	}
	return n.Value, nil
}
