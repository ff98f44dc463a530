package api_test

import (
	"os"
	"strings"
	"testing"
)

// TestEveryMetricIsDocumented: every eventlogd_/drive9_ family a pod registers is in the metrics
// table of docs/eventlogd.md.
func TestEveryMetricIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/eventlogd.md")
	if err != nil {
		t.Fatal(err)
	}
	p := newEnv(t).pod("p", nil)
	p.raw(t, "GET", "/healthz", "", nil, nil)
	mfs, err := p.srv.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "eventlogd_") && !strings.HasPrefix(name, "drive9_") {
			continue
		}
		n++
		if !strings.Contains(string(doc), "| `"+name+"` |") {
			t.Errorf("%s is not in the metrics table of docs/eventlogd.md", name)
		}
	}
	if n == 0 {
		t.Fatal("no eventlogd metric gathered: the test checks nothing")
	}
}
