package scenario

import (
	"fmt"
	"testing"
)

func TestFieldErrorFindsTheLine(t *testing.T) {
	src := []byte("name: x\npods:\n  count: 1\n  eventlogd:\n    defect: late-commit-skp\n    flags:\n      retry-tenat-cap: \"3\"\nfaults:\n  - {at: 1s, kind: pod_crash}\n  - at: 2s\n    kind: outbox_poller_stall\n")
	for _, c := range []struct {
		field string
		line  int
	}{
		{"pods.eventlogd.defect", 5},
		{"pods.eventlogd.flags.retry-tenat-cap", 7},
		{"pods.eventlogd.flags.set-by-override", 6}, // absent: the closest parent
		{"name", 1},
		{"faults[1].kind", 11}, // a sequence entry by its index
		{"faults[0].kind", 9},
		{"faults[7].kind", 8}, // no such entry: the sequence's key
	} {
		e := FieldError("s.yaml", src, c.field, "bad", []string{"a", "b"})
		if e.Line != c.line || e.Error() != fmt.Sprintf("s.yaml:%d: %s: bad (allowed: a, b)", c.line, c.field) {
			t.Errorf("%s: %q (line %d), want line %d", c.field, e.Error(), e.Line, c.line)
		}
	}
	if e := FieldError("s.yaml", []byte(":\n\t-"), "pods.count", "bad", nil); e.Line != 0 || e.Error() != "s.yaml: pods.count: bad" {
		t.Errorf("unparsable data: %q", e.Error())
	}
}
