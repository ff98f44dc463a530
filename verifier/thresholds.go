package verifier

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Threshold is one scenario limit on a summary number, e.g. latency_ms.p99 < 500.
type Threshold struct {
	Path  string  // a summary JSON path, one of ValidPaths
	Op    string  // < <= > >= ==
	Value float64 // the limit
	Num   string  // the limit as written, for names and messages
}

// Thresholds is a parsed thresholds field, sorted by path then expression.
type Thresholds []Threshold

// Name is how a broken threshold appears in failed_checks: threshold:<path><op><value>.
func (t Threshold) Name() string { return "threshold:" + t.Path + t.Op + t.Num }

// Holds reports whether the measured value v satisfies the threshold.
func (t Threshold) Holds(v float64) bool {
	switch t.Op {
	case "<":
		return v < t.Value
	case "<=":
		return v <= t.Value
	case ">":
		return v > t.Value
	case ">=":
		return v >= t.Value
	case "==":
		return v == t.Value
	}
	return false
}

var exprRE = regexp.MustCompile(`^\s*(<=|>=|==|<|>)\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*$`)

// ParseThresholds parses the run record's thresholds field, {summary path: [expressions]}. An unknown
// path or a malformed expression is an error that names it and lists what is valid.
func ParseThresholds(m map[string][]string) (Thresholds, error) {
	var out Thresholds
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range m {
			if !yield(p) {
				return
			}
		}
	})
	for _, p := range paths {
		if !validPath(p) {
			return nil, fmt.Errorf("threshold path %q is not a summary number; valid paths: %s", p, strings.Join(ValidPaths(), ", "))
		}
		if len(m[p]) == 0 {
			return nil, fmt.Errorf("threshold %q has no expressions; want e.g. [\"< 500\"] (operators < <= > >= ==)", p)
		}
		for _, e := range m[p] {
			sm := exprRE.FindStringSubmatch(e)
			if sm == nil {
				return nil, fmt.Errorf("threshold %q: expression %q is not <op> <number> (operators < <= > >= ==, e.g. \"< 500\", \"<= 1e-4\")", p, e)
			}
			v, err := strconv.ParseFloat(sm[2], 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("threshold %q: expression %q: %q is not a finite number", p, e, sm[2])
			}
			out = append(out, Threshold{Path: p, Op: sm[1], Value: v, Num: sm[2]})
		}
	}
	return out, nil
}

// summaryPaths are the numeric leaves of the summary JSON, derived from the Summary type so that the
// list can never drift from the fields; a map field M contributes "M.<key>".
var summaryPaths = func() []string {
	var out []string
	walkPaths(reflect.TypeFor[Summary](), "", &out)
	slices.Sort(out)
	return out
}()

// ValidPaths lists the summary paths a threshold may name (a ".<key>" suffix stands for any key).
func ValidPaths() []string { return slices.Clone(summaryPaths) }

func walkPaths(t reflect.Type, prefix string, out *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			walkPaths(f.Type, prefix, out)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		switch ft := f.Type; ft.Kind() {
		case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint64, reflect.Float64:
			*out = append(*out, prefix+name)
		case reflect.Struct:
			if name != "run" {
				walkPaths(ft, prefix+name+".", out)
			}
		case reflect.Map:
			if k := ft.Elem().Kind(); k == reflect.Int64 || k == reflect.Float64 {
				*out = append(*out, prefix+name+".<key>")
			}
		}
	}
}

func validPath(p string) bool {
	if slices.Contains(summaryPaths, p) {
		return true
	}
	for _, v := range summaryPaths {
		if base, ok := strings.CutSuffix(v, ".<key>"); ok {
			if key, ok := strings.CutPrefix(p, base+"."); ok && key != "" {
				return true
			}
		}
	}
	return false
}

// measure reads the value at path from the summary as the JSON shows it (a missing map key is 0).
func measure(doc map[string]any, path string) float64 {
	var cur any = doc
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0
		}
		cur = m[part]
	}
	v, _ := cur.(float64)
	return v
}

// summaryDoc is the summary as generic JSON, the form threshold paths address.
func summaryDoc(s *Summary) map[string]any {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Summary only holds marshalable values
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(err)
	}
	return doc
}
