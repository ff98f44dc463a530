package verifier

import (
	"fmt"
	"math"
	"testing"
)

// TestEntrySmallFields round-trips the entry's small fields at and beyond the values they hold
// themselves: a tenant, pod or consumer index that does not fit is escaped, never wrapped onto
// another (the spec's "no index may wrap").
func TestEntrySmallFields(t *testing.T) {
	cases := []struct {
		name         string
		tenant, pod  int32
		consumers    int // consumers of the tenant before the one that receives first
		evN          uint32
		wantN        uint32
		status       int
		wantStatus   int16
		extraStatus  int // distinct statuses set before this one
		otherTenants int // consumers of other tenants registered first
	}{
		{name: "small", tenant: 0, pod: 1, evN: 1, wantN: 1, status: 200, wantStatus: 200},
		{name: "tenant at the edge", tenant: tenantEsc - 1, pod: podEsc - 1, consumers: consEsc - 2, evN: evNEsc - 1, wantN: evNEsc - 1, status: 503, wantStatus: 503},
		{name: "tenant escaped", tenant: tenantEsc, pod: podEsc, consumers: consEsc - 1, evN: evNEsc, wantN: evNEsc, status: -1, wantStatus: -1},
		{name: "a million tenants", tenant: 1_000_000, pod: 65_536, consumers: 1000, evN: maxEvN, wantN: maxEvN, status: 1 << 20, wantStatus: math.MaxInt16},
		{name: "count saturates", tenant: 65_536, pod: math.MaxInt32, evN: maxEvN + 5, wantN: maxEvN, status: math.MinInt32, wantStatus: math.MinInt16},
		{name: "statuses beyond the codes", tenant: 3, pod: 0, evN: 0, wantN: 0, status: 299, wantStatus: 299, extraStatus: 40},
		{name: "consumers of other tenants first", tenant: 2, pod: 2, consumers: 3, evN: 2, wantN: 2, status: 0, wantStatus: 0, otherTenants: 300},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tenants := make([]string, c.tenant+2)
			for i := range tenants {
				tenants[i] = fmt.Sprint("t", i)
			}
			tb := newMutTable(&tenants)
			for i := range c.otherTenants {
				tb.addConsumer(c.tenant+1, int32(i))
			}
			for i := range c.extraStatus {
				tb.setKind(&mutation{}, opEvent, resOK, 1000+i)
			}
			for i := range c.consumers {
				tb.addConsumer(c.tenant, int32(c.otherTenants+i))
			}
			cs := &consumerState{idx: int32(c.otherTenants + c.consumers), tenant: c.tenant}
			cs.ord = tb.addConsumer(c.tenant, cs.idx)
			other := &consumerState{idx: 7, tenant: c.tenant + 1, ord: 0} // of another tenant: escaped
			name := tenants[c.tenant]
			_, h := tb.find(name, "/p/m1")
			m := tb.at(tb.add(name, c.tenant, "/p/m1", h, mutation{}))
			_, h2 := tb.find(name, "/p/m2")
			m2 := tb.at(tb.add(name, c.tenant, "/p/m2", h2, mutation{}))
			if tb.evCons(m) != -1 {
				t.Fatalf("a new entry has first consumer %d, want none", tb.evCons(m))
			}
			tb.setPod(m, c.pod)
			tb.setEvCons(m, cs)
			tb.setEvCons(m2, other)
			tb.setEvN(m, c.evN)
			tb.setKind(m, opStructural, resTimeout, c.status)
			if got := tb.tenantOf(m); got != c.tenant {
				t.Errorf("tenant %d, want %d", got, c.tenant)
			}
			if id, _ := tb.find(name, "/p/m1"); id != 0 {
				t.Errorf("entry found as %d, want 0", id)
			}
			if got := tb.pod(m); got != c.pod {
				t.Errorf("pod %d, want %d", got, c.pod)
			}
			if got := tb.evCons(m); got != cs.idx {
				t.Errorf("first consumer %d, want %d", got, cs.idx)
			}
			if got := tb.evCons(m2); got != other.idx {
				t.Errorf("another tenant's consumer read back as %d, want %d", got, other.idx)
			}
			if !tb.isEvCons(m, cs) || tb.isEvCons(m, other) || !tb.isEvCons(m2, other) || tb.isEvCons(m2, cs) {
				t.Errorf("isEvCons disagrees with evCons")
			}
			if c.tenant > 0 { // a consumer of another tenant with the same ordinal is not the first
				if twin := (&consumerState{idx: 99, tenant: c.tenant - 1, ord: cs.ord}); tb.isEvCons(m, twin) {
					t.Errorf("another tenant's consumer of ordinal %d taken for the first", cs.ord)
				}
			}
			if got := tb.evN(m); got != c.wantN {
				t.Errorf("count %d, want %d", got, c.wantN)
			}
			if got := tb.status(m); got != c.wantStatus {
				t.Errorf("status %d, want %d", got, c.wantStatus)
			}
			if m.op() != opStructural || m.res() != resTimeout {
				t.Errorf("op %d res %d, want %d %d", m.op(), m.res(), opStructural, resTimeout)
			}
			tb.setEvN(m, 0)
			if tb.evN(m) != 0 {
				t.Errorf("count %d after reset, want 0", tb.evN(m))
			}
		})
	}
}
