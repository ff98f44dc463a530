package faults

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// TestRegisterValidatesResource: a kind registers only with one of fault.Resources, so a typo in
// its Def (which would match no other kind's resource and so turn the schedule's conflict check
// off for it) panics at start-up, naming the kind, the bad value and the allowed ones.
func TestRegisterValidatesResource(t *testing.T) {
	type noParams struct{}
	def := func(r fault.Resource) fault.Def[noParams] {
		return fault.Def[noParams]{Name: "test_kind", Simulates: "s", Mechanism: "m", Targets: fault.TargetPod,
			Timing: fault.TimingSpan, Resource: r,
			Build: func(fault.Env, string, time.Duration, noParams) (fault.Fault, error) { return nil, nil }}
	}
	for _, tc := range []struct {
		resource  fault.Resource
		wantPanic string // "" when it must register
	}{
		{fault.ResourcePod, ""},
		{fault.ResourceDB, ""},
		{"pods", `faults: kind test_kind: resource "pods" is not one of [db pod consumers events tenant]`},
		{"", `faults: kind test_kind: resource "" is not one of`},
	} {
		t.Run(string(tc.resource), func(t *testing.T) {
			got := func() (msg string) {
				defer func() {
					if r := recover(); r != nil {
						msg = fmt.Sprint(r)
					}
				}()
				k := register(def(tc.resource))
				if k.resource != tc.resource {
					t.Errorf("registered resource %q, want %q", k.resource, tc.resource)
				}
				return ""
			}()
			if tc.wantPanic == "" && got != "" || tc.wantPanic != "" && !strings.HasPrefix(got, tc.wantPanic) {
				t.Fatalf("register with resource %q: panic %q, want %q", tc.resource, got, tc.wantPanic)
			}
		})
	}
	for _, k := range Registry {
		if !k.resource.Valid() {
			t.Errorf("kind %s holds resource %q, not one of %v", k.Name, k.resource, fault.Resources)
		}
	}
}
