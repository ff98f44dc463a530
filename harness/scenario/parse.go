package scenario

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ReadFile reads and validates the scenario file at path.
func ReadFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// Parse decodes and validates a scenario; file names it in errors.
func Parse(file string, data []byte) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		e := &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = m[2]
		}
		return nil, e
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: file, Msg: "empty scenario"}
	}
	doc := root.Content[0]
	if err := walk(doc, reflect.TypeOf(Scenario{}), ""); err != nil {
		return nil, withFile(err, file)
	}
	var s Scenario
	if err := doc.Decode(&s); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			e := &Error{File: file, Msg: te.Errors[0]}
			if m := yamlLine.FindStringSubmatch(te.Errors[0]); m != nil {
				e.Line, _ = strconv.Atoi(m[1])
				e.Msg = m[2]
			}
			return nil, e
		}
		return nil, withFile(err, file)
	}
	v := &validator{file: file, doc: doc}
	if err := v.check(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

func withFile(err error, file string) error {
	var e *Error
	if errors.As(err, &e) {
		e.File = file
		return e
	}
	e = &Error{File: file, Msg: err.Error()}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
	}
	return e
}

var (
	durationType    = reflect.TypeOf(Duration(0))
	unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
)

// walk checks that every mapping key names a field of t (listing the allowed ones otherwise) and that
// every duration parses, before any decoding, so errors carry the field's path and line.
func walk(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch {
	case t != durationType && reflect.PointerTo(t).Implements(unmarshalerType):
		// decodes and validates itself (the faults package's blocks)
	case t == durationType:
		if n.Kind != yaml.ScalarNode {
			return &Error{Line: n.Line, Field: path, Msg: "want a duration", Allowed: []string{`"250ms"`, `"30s"`, `"1m30s"`}}
		}
		if _, err := time.ParseDuration(n.Value); err != nil {
			return &Error{Line: n.Line, Field: path, Msg: fmt.Sprintf("bad duration %q", n.Value), Allowed: []string{`a Go duration such as "250ms", "30s", "1m30s"`}}
		}
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return &Error{Line: n.Line, Field: path, Msg: "want a mapping (key: value lines)"}
		}
		fields := map[string]reflect.StructField{}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if name == "" || name == "-" {
				continue
			}
			fields[name] = f
			names = append(names, name)
		}
		sort.Strings(names)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				return &Error{Line: k.Line, Field: join(path, k.Value), Msg: "unknown field", Allowed: names}
			}
			if err := walk(val, f.Type, join(path, k.Value)); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return &Error{Line: n.Line, Field: path, Msg: "want a list"}
		}
		for i, c := range n.Content {
			if err := walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			return &Error{Line: n.Line, Field: path, Msg: "want a mapping"}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := walk(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
