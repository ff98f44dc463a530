package verifier

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// withThresholds returns the base run line with a thresholds field.
func withThresholds(th string) string {
	return strings.Replace(baseLedger[0].json, `"target":"eventlogd"}`, `"target":"eventlogd","thresholds":`+th+`}`, 1)
}

// TestPerScopeThresholds (issue 16 point 5): per_tenant.<id>.<field> and per_consumer.<id>.<field>
// are accepted and judged on that scope only; an id the ledger lacks is unusable input.
func TestPerScopeThresholds(t *testing.T) {
	dupA := map[string][]string{"evA2": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6500000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p1"}`}}
	cases := []struct {
		name    string
		th      string
		after   map[string][]string
		verdict string
		failed  []string
	}{
		{"tenant A duplicate fails", `{"per_tenant.A.duplicates":["== 0"]}`, dupA, VerdictFail, []string{"threshold:per_tenant.A.duplicates==0"}},
		{"tenant B bound ignores A's duplicate", `{"per_tenant.B.duplicates":["== 0"]}`, dupA, VerdictPass, nil},
		{"no duplicate passes", `{"per_tenant.A.duplicates":["== 0"]}`, nil, VerdictPass, nil},
		{"consumer cA duplicate fails", `{"per_consumer.cA.duplicates":["< 1"]}`, dupA, VerdictFail, []string{"threshold:per_consumer.cA.duplicates<1"}},
		{"consumer cB passes", `{"per_consumer.cB.duplicates":["< 1"]}`, dupA, VerdictPass, nil},
		{"per-tenant latency", `{"per_tenant.A.latency_ms.max":["< 0.5"]}`, nil, VerdictFail, []string{"threshold:per_tenant.A.latency_ms.max<0.5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := verifyText(t, edit{replace: map[string]string{"run": withThresholds(c.th)}, after: c.after}.build(), Options{})
			if s.Verdict != c.verdict || !slices.Equal(s.FailedChecks, c.failed) && len(c.failed)+len(s.FailedChecks) > 0 {
				t.Errorf("verdict %s failed %v, want %s %v", s.Verdict, s.FailedChecks, c.verdict, c.failed)
			}
		})
	}
	for _, th := range []string{`{"per_tenant.Z.duplicates":["== 0"]}`, `{"per_consumer.cZ.duplicates":["== 0"]}`} {
		r, _ := newTestReader(edit{replace: map[string]string{"run": withThresholds(th)}}.build())
		_, err := Verify(r, Options{})
		var ue *UnusableError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "Z") || !strings.Contains(err.Error(), "has no") {
			t.Errorf("%s: error %v, want unusable naming the id", th, err)
		}
	}
}
