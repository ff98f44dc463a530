package api

import (
	"fmt"
	"strings"
	"testing"
)

// TestTakeGroup: a group is its head and every later write whose path it does not hold yet, within
// groupMaxWrites and groupMaxBytes (the head whatever its size); the rest stays queued in order.
func TestTakeGroup(t *testing.T) {
	w := func(path string, size int) *groupWrite { return &groupWrite{path: path, body: make([]byte, size)} }
	many := make([]*groupWrite, groupMaxWrites+3)
	for i := range many {
		many[i] = w(fmt.Sprintf("/m%d", i), 1)
	}
	for _, c := range []struct {
		name                string
		pending             []*groupWrite
		wantGroup, wantRest string
	}{
		{"alone", []*groupWrite{w("/a", 1)}, "/a", ""},
		{"distinct", []*groupWrite{w("/a", 1), w("/b", 1), w("/c", 1)}, "/a /b /c", ""},
		{"a path twice waits", []*groupWrite{w("/a", 1), w("/b", 1), w("/a", 1), w("/c", 1), w("/b", 1)}, "/a /b /c", "/a /b"},
		{"big head alone", []*groupWrite{w("/big", groupMaxBytes*2), w("/b", 1)}, "/big", "/b"},
		{"bytes bound", []*groupWrite{w("/a", groupMaxBytes/2), w("/b", groupMaxBytes/2), w("/c", 1), w("/d", 0)}, "/a /b /d", "/c"},
		{"count bound", many, strings.TrimSpace(paths(many[:groupMaxWrites])), paths(many[groupMaxWrites:])},
	} {
		t.Run(c.name, func(t *testing.T) {
			group, rest := takeGroup(c.pending)
			if got := paths(group); got != c.wantGroup {
				t.Fatalf("group %q, want %q", got, c.wantGroup)
			}
			if got := paths(rest); got != c.wantRest {
				t.Fatalf("rest %q, want %q", got, c.wantRest)
			}
		})
	}
}

func paths(ws []*groupWrite) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.path)
	}
	return strings.Join(s, " ")
}
