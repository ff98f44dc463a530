package ledger

import "testing"

// TestFieldSet: membership, union, difference and the lowest field, across both words of the set
// (fields 0-63 and 64 and above).
func TestFieldSet(t *testing.T) {
	tests := []struct {
		name  string
		in    []field
		out   []field // not in the set
		first field
	}{
		{"low word", []field{0, 5, 63}, []field{1, 64, 127}, 0},
		{"high word only", []field{64, 65, 127}, []field{0, 63, 66}, 64},
		{"both words", []field{63, 64}, []field{62, 65}, 63},
		{"65th field", []field{64}, []field{0, 63, 65}, 64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := setOf(tc.in...)
			for _, f := range tc.in {
				if !s.has(f) {
					t.Errorf("has(%d) = false, want true", f)
				}
			}
			for _, f := range tc.out {
				if s.has(f) {
					t.Errorf("has(%d) = true, want false", f)
				}
			}
			if f, ok := s.first(); !ok || f != tc.first {
				t.Errorf("first() = %d, %v; want %d, true", f, ok, tc.first)
			}
			if s.empty() {
				t.Error("empty() = true for a non-empty set")
			}
			if !s.intersects(setOf(tc.in[len(tc.in)-1])) {
				t.Error("intersects its own last field = false")
			}
			if s.intersects(setOf(tc.out...)) {
				t.Error("intersects the fields it lacks = true")
			}
			if rest := s.andNot(setOf(tc.in...)); !rest.empty() {
				t.Errorf("s andNot s = %v, want empty", rest)
			}
			if u := s.or(setOf(tc.out...)); !u.has(tc.out[0]) || !u.has(tc.in[0]) {
				t.Errorf("or lost a field: %v", u)
			}
		})
	}
	if _, ok := (fieldSet{}).first(); ok {
		t.Error("first() of the empty set: ok = true")
	}
}

// TestFieldNames: every field has a distinct JSON name, except "tenants", which is both the run's
// list and the audit's count.
func TestFieldNames(t *testing.T) {
	seen := map[string]field{}
	for f := field(0); f < fCount; f++ {
		n := fieldNames[f]
		if n == "" {
			t.Errorf("field %d has no name", f)
		}
		if g, dup := seen[n]; dup && n != "tenants" {
			t.Errorf("fields %d and %d are both %q", g, f, n)
		}
		seen[n] = f
	}
}
