package podprofile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxFile bounds a profile file: a profile is a few lines.
const maxFile = 1 << 20

// Read reads and checks the pod profile file at path; targets are the target profiles its target
// may name (the registry's, package harness/service).
func Read(path string, targets []string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--pods-profile: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("--pods-profile %s: %w", path, err)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("--pods-profile %s: larger than %d bytes", path, maxFile)
	}
	return Parse(path, data, targets)
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// Parse decodes a pod profile strictly (an unknown field is an error) and checks it; file names it in
// errors, which give the line and the field; targets are the target profiles its target may name.
func Parse(file string, data []byte, targets []string) (*Profile, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(file, err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: empty pod profile (want name, args or env, layout, target)", file)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, yamlError(file, err)
	}
	p.file = file
	doc := root.Content[0]
	if err := p.check(func(path ...string) int { return lineOf(doc, path) }, targets); err != nil {
		return nil, err
	}
	return &p, nil
}

func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return fmt.Errorf("%s:%d: %s", file, n, m[2])
	}
	return fmt.Errorf("%s: %s", file, msg)
}

// lineOf finds the line of the node at path (mapping keys and sequence indexes), or of its nearest
// ancestor found.
func lineOf(n *yaml.Node, path []string) int {
	line := n.Line
	for _, key := range path {
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					line, n, found = n.Content[i].Line, n.Content[i+1], true
					break
				}
			}
			if !found {
				return line
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line
		}
	}
	return line
}
