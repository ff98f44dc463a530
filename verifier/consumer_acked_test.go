package verifier

import "testing"

// per_consumer.<id>.acked is the consumer's tenant's acked count (it used to stay 0 for every
// consumer, in every run); a consumer of a tenant with nothing acked has 0.
func TestPerConsumerAckedIsItsTenants(t *testing.T) {
	for _, tc := range []struct {
		name   string
		e      edit
		cA, cB int64
	}{
		{"clean", edit{}, 2, 1},
		{"a failed write is not acked", edit{replace: map[string]string{
			"mutA2": `{"k":"mut","mid":"m2","tenant":"A","op":"write","path":"/x/A/m2","intended_t":4000000,"t":4000000,"done_t":5000000,"res":"err","status":503,"pod":"p1"}`}}, 1, 1},
		{"tenant B acked nothing", edit{drop: []string{"mutB3", "evB3", "persB3"}}, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, tc.e.build(), Options{})
			for id, want := range map[string]int64{"cA": tc.cA, "cB": tc.cB} {
				st, ok := s.PerConsumer[id]
				got := int64(0)
				if ok {
					got = st.Acked
				}
				if got != want {
					t.Errorf("per_consumer.%s.acked = %d, want %d", id, got, want)
				}
			}
		})
	}
}
