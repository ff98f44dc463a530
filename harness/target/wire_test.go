package target

import (
	"slices"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/harness/scenario"
)

// Every mutation a scenario may name has a request on the wire (the write variants are writes, a
// batch has its own path), and no request is left without a method.
func TestWireHasEveryOp(t *testing.T) {
	for _, op := range scenario.Ops {
		if op == "batch" || strings.HasPrefix(op, "write_") {
			continue
		}
		r, ok := Drive9Wire.Ops[op]
		if !ok || r.Method == "" {
			t.Errorf("op %s: no request on the drive9 wire (%+v)", op, r)
		}
	}
	for op := range Drive9Wire.Ops {
		if !slices.Contains(scenario.Ops, op) {
			t.Errorf("the wire has a request for %s, which no scenario can name", op)
		}
	}
	// A service that names no wire speaks drive9's.
	for _, sv := range []*Service{pooled, perTenant, bare} {
		p, err := New(Options{Service: sv, AuditDB: "x", TenantColumn: "none"}, false)
		if err != nil || p.Wire() != Drive9Wire {
			t.Errorf("%s: wire %+v %v", sv.Name, p, err)
		}
	}
}
