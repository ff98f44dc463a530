package faults

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ParamDoc documents one parameter of a fault kind. It is generated from the kind's typed parameter
// struct (tags yaml, help, enum; see fault.Def), so `seqgate faults` and the decoders can never disagree.
type ParamDoc struct {
	Name    string   // YAML key
	Type    string   // duration | string | int | bool
	Default string   // default value as YAML would write it
	Enum    []string // allowed values of a string parameter (empty = any)
	Help    string   // what it does, with its unit
	field   int
}

var durationType = reflect.TypeFor[time.Duration]()

func paramDocs(def any) ([]ParamDoc, error) {
	v := reflect.ValueOf(def)
	t := v.Type()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("params must be a struct, got %s", t)
	}
	var docs []ParamDoc
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			return nil, fmt.Errorf("field %s has no yaml name", f.Name)
		}
		help := f.Tag.Get("help")
		if help == "" {
			return nil, fmt.Errorf("param %s has no help", name)
		}
		d := ParamDoc{Name: name, Help: help, field: i}
		if e := f.Tag.Get("enum"); e != "" {
			d.Enum = strings.Split(e, ",")
		}
		fv := v.Field(i)
		switch {
		case f.Type == durationType:
			d.Type, d.Default = "duration", time.Duration(fv.Int()).String()
		case f.Type.Kind() == reflect.String:
			d.Type, d.Default = "string", fv.String()
		case f.Type.Kind() == reflect.Int:
			d.Type, d.Default = "int", strconv.FormatInt(fv.Int(), 10)
		case f.Type.Kind() == reflect.Bool:
			d.Type, d.Default = "bool", strconv.FormatBool(fv.Bool())
		default:
			return nil, fmt.Errorf("param %s: unsupported type %s", name, f.Type)
		}
		docs = append(docs, d)
	}
	return docs, nil
}

func paramNames(docs []ParamDoc) string {
	if len(docs) == 0 {
		return "none"
	}
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}

// decodeParams decodes a YAML mapping into *p strictly: unknown keys, wrong types and values outside
// an enum are errors naming the line and the allowed choices. A nil node keeps the defaults.
func decodeParams(node *yaml.Node, p any, docs []ParamDoc) error {
	if node == nil || node.Kind == 0 {
		return nil
	}
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		return nil
	}
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: params must be a mapping", node.Line)
	}
	v := reflect.ValueOf(p).Elem()
	seen := map[string]bool{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, val := node.Content[i], node.Content[i+1]
		idx := slices.IndexFunc(docs, func(d ParamDoc) bool { return d.Name == key.Value })
		if idx < 0 {
			return fmt.Errorf("line %d: unknown param %q (allowed: %s)", key.Line, key.Value, paramNames(docs))
		}
		if seen[key.Value] {
			return fmt.Errorf("line %d: param %q given twice", key.Line, key.Value)
		}
		seen[key.Value] = true
		d := docs[idx]
		if val.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: param %s: want a %s", val.Line, d.Name, d.Type)
		}
		if err := setParam(v.Field(d.field), d, val.Value); err != nil {
			return fmt.Errorf("line %d: param %s: %v", val.Line, d.Name, err)
		}
	}
	return nil
}

func setParam(f reflect.Value, d ParamDoc, s string) error {
	switch d.Type {
	case "duration":
		dur, err := parseDuration(s)
		if err != nil {
			return err
		}
		if dur < 0 {
			return fmt.Errorf("%q is negative", s)
		}
		f.SetInt(int64(dur))
	case "string":
		if len(d.Enum) > 0 && !slices.Contains(d.Enum, s) {
			return fmt.Errorf("%q is not allowed (allowed: %s)", s, strings.Join(d.Enum, ", "))
		}
		f.SetString(s)
	case "int":
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a non-negative integer", s)
		}
		f.SetInt(int64(n))
	case "bool":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		f.SetBool(b)
	}
	return nil
}

// checkParams applies the decoders' rules to a parameter struct built in code (*p): no negative
// duration or int, strings within their enum.
func checkParams(p any, docs []ParamDoc) error {
	v := reflect.ValueOf(p).Elem()
	for _, d := range docs {
		f := v.Field(d.field)
		switch d.Type {
		case "duration":
			if f.Int() < 0 {
				return fmt.Errorf("param %s: %s is negative", d.Name, time.Duration(f.Int()))
			}
		case "int":
			if f.Int() < 0 {
				return fmt.Errorf("param %s: %d is negative", d.Name, f.Int())
			}
		case "string":
			if len(d.Enum) > 0 && !slices.Contains(d.Enum, f.String()) {
				return fmt.Errorf("param %s: %q is not allowed (allowed: %s)", d.Name, f.String(), strings.Join(d.Enum, ", "))
			}
		}
	}
	return nil
}

// parseDuration accepts Go duration strings with a unit ("250ms", "1m30s"); a bare number is refused
// because "30" could mean seconds or milliseconds.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return 0, fmt.Errorf("%q has no unit (write e.g. %ss or %sms)", s, s, s)
		}
		return 0, fmt.Errorf("%q is not a duration (e.g. 500ms, 10s, 2m)", s)
	}
	return d, nil
}

// canonicalParams returns every parameter (defaults included) as a map fit for JSON and the ledger:
// durations as strings ("5s"), so a recorded schedule reads back exactly. encoding/json prints a map
// with its keys sorted, which is the order schedule.json has always had.
func canonicalParams(p any, docs []ParamDoc) map[string]any {
	v := reflect.ValueOf(p).Elem()
	m := make(map[string]any, len(docs))
	for _, d := range docs {
		f := v.Field(d.field)
		switch d.Type {
		case "duration":
			m[d.Name] = time.Duration(f.Int()).String()
		case "string":
			m[d.Name] = f.String()
		case "int":
			m[d.Name] = int(f.Int())
		case "bool":
			m[d.Name] = f.Bool()
		}
	}
	return m
}

// decodeJSONParams decodes a schedule.json params object into *p (which holds the defaults) as
// strictly as decodeParams does YAML: unknown keys, wrong JSON types and invalid values are errors
// naming the param. Empty input or null keeps the defaults.
func decodeJSONParams(raw []byte, p any, docs []ParamDoc) error {
	var m map[string]json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("params must be an object: %v", err)
		}
	}
	keys := slices.Sorted(maps.Keys(m))
	v := reflect.ValueOf(p).Elem()
	for _, key := range keys {
		idx := slices.IndexFunc(docs, func(d ParamDoc) bool { return d.Name == key })
		if idx < 0 {
			return fmt.Errorf("unknown param %q (allowed: %s)", key, paramNames(docs))
		}
		d := docs[idx]
		s, err := jsonScalar(m[key], d.Type)
		if err == nil {
			err = setParam(v.Field(d.field), d, s)
		}
		if err != nil {
			return fmt.Errorf("param %s: %v", d.Name, err)
		}
	}
	return nil
}

// jsonScalar returns a JSON value of the param type typ as the text setParam parses: durations and
// strings are JSON strings, ints JSON numbers, bools JSON booleans.
func jsonScalar(raw json.RawMessage, typ string) (string, error) {
	switch typ {
	case "duration", "string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("want a JSON string, got %s", raw)
		}
		return s, nil
	case "int":
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", fmt.Errorf("want a JSON number, got %s", raw)
		}
		return n.String(), nil
	case "bool":
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return "", fmt.Errorf("want true or false, got %s", raw)
		}
		return strconv.FormatBool(b), nil
	}
	return "", fmt.Errorf("unsupported param type %s", typ)
}
