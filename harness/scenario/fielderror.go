package scenario

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// HarnessFlags are the eventlogd flags the harness sets on every pod itself, and --version (which
// prints and exits): a scenario may not give them in pods.eventlogd.flags.
var HarnessFlags = []string{"listen", "pod", "meta-dsn", "pools", "fs-events-retention", "defect", "test-defects", "admin", "admin-token",
	"provision-token", "provision-token-file", "open-provisioning", "version"}

// FieldError is a problem with a field found by a check Parse cannot make alone (one that asks the pod
// binary, say): field is its dotted path (`pods.eventlogd.flags.retry-tenant-cap`), and the error
// carries the field's line in the scenario data, or its closest present parent's (a field set by
// --set has no line of its own).
func FieldError(file string, data []byte, field, msg string, allowed []string) *Error {
	e := &Error{File: file, Field: field, Msg: msg, Allowed: allowed}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) == nil && len(root.Content) == 1 {
		v := &validator{file: file, doc: root.Content[0]}
		var path []any
		for _, p := range strings.Split(field, ".") {
			// faults[2] is the key faults, then the sequence's third entry
			name, idx, ok := strings.Cut(p, "[")
			n, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			if !ok || err != nil || !strings.HasSuffix(idx, "]") {
				path = append(path, p)
				continue
			}
			path = append(path, name, n)
		}
		e.Line = v.at(path...)
	}
	return e
}
