package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxOverrides bounds how many --set assignments one command line may carry.
const maxOverrides = 64

var overrideStep = regexp.MustCompile(`^([a-z_][a-z0-9_-]*)((?:\[[0-9]{1,4}\])*)$`)

// Override applies assignments PATH=VALUE to the scenario YAML src and returns the new YAML, keeping
// everything else (comments, faults, order) as written. PATH is dotted field names with list indexes,
// e.g. `seed`, `duration`, `load[0].rate`, `pods.eventlogd.flags.retry-tenant-cap`; VALUE is parsed as
// YAML (`600`, `10s`, `{write: 1}`). A missing mapping on the way is created; a list index must
// exist. The result still has to pass Parse: Override checks only the shape of the assignment, and its
// errors name the assignment.
func Override(src []byte, sets []string) ([]byte, error) {
	if len(sets) > maxOverrides {
		return nil, fmt.Errorf("%d --set assignments: at most %d", len(sets), maxOverrides)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the scenario is not a YAML mapping")
	}
	for _, a := range sets {
		path, value, ok := strings.Cut(a, "=")
		if !ok || path == "" {
			return nil, fmt.Errorf("--set %q: want PATH=VALUE, e.g. load[0].rate=600", a)
		}
		var v yaml.Node
		if err := yaml.Unmarshal([]byte(value), &v); err != nil {
			return nil, fmt.Errorf("--set %q: value %q is not YAML: %v", a, value, err)
		}
		val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
		if len(v.Content) == 1 {
			val = v.Content[0]
		}
		if err := assign(doc.Content[0], strings.Split(path, "."), val); err != nil {
			return nil, fmt.Errorf("--set %q: %w", a, err)
		}
	}
	return yaml.Marshal(&doc)
}

func assign(cur *yaml.Node, steps []string, val *yaml.Node) error {
	for i, step := range steps {
		m := overrideStep.FindStringSubmatch(step)
		if m == nil {
			return fmt.Errorf("path step %q is not a field name with optional [index]", step)
		}
		name, idx := m[1], parseIndexes(m[2])
		if cur.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", strings.Join(steps[:i], "."))
		}
		last := i == len(steps)-1 && len(idx) == 0
		next := lookupKey(cur, name)
		switch {
		case last && next != nil:
			*next = *val
			return nil
		case last:
			cur.Content = append(cur.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}, val)
			return nil
		case next == nil && len(idx) > 0:
			return fmt.Errorf("%s has no list %s", orRoot(steps[:i]), name)
		case next == nil || next.Kind == yaml.ScalarNode && next.Tag == "!!null":
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if next == nil {
				cur.Content = append(cur.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}, n)
			} else {
				*next = *n
				n = next
			}
			next = n
		}
		for j, k := range idx {
			if next.Kind != yaml.SequenceNode {
				return fmt.Errorf("%s is not a list", name)
			}
			if k >= len(next.Content) {
				return fmt.Errorf("%s[%d]: the list has %d entries", name, k, len(next.Content))
			}
			if i == len(steps)-1 && j == len(idx)-1 {
				*next.Content[k] = *val
				return nil
			}
			next = next.Content[k]
		}
		cur = next
	}
	return nil
}

func lookupKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func parseIndexes(s string) []int {
	var out []int
	for _, p := range strings.Split(s, "[") {
		if p = strings.TrimSuffix(p, "]"); p != "" {
			n, _ := strconv.Atoi(p)
			out = append(out, n)
		}
	}
	return out
}

func orRoot(steps []string) string {
	if len(steps) == 0 {
		return "the scenario"
	}
	return strings.Join(steps, ".")
}
