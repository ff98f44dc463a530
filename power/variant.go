package power

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Variant returns the scenario src with its seed set to seed and its pods' defect set to defect
// (removed when defect is empty: the correct build). Everything else, comments and faults included,
// is kept as written, so the two arms of a pair differ in exactly these two fields.
func Variant(src []byte, seed int64, defect string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("scenario is not a YAML mapping")
	}
	root := doc.Content[0]
	set(root, "seed", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(seed)})
	pods := child(root, "pods")
	el := child(pods, "eventlogd")
	if defect == "" {
		del(el, "defect")
	} else {
		set(el, "defect", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: defect})
	}
	return yaml.Marshal(&doc)
}

// child returns the mapping under key in m, creating an empty one when absent.
func child(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind != yaml.MappingNode { // e.g. "eventlogd: {}" written as null
				*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			return v
		}
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

func del(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
