package faults_test

import (
	"strings"
	"testing"

	"github.com/seqgate/seqgate/faults/kinds"
	"github.com/seqgate/seqgate/harness/scenario"
)

// TestScenarioParserKeepsLines: fault errors surface through the harness's scenario parser with the
// file, the line and the whole message (the parser extracts "line N: ..." from our errors).
func TestScenarioParserKeepsLines(t *testing.T) {
	base := "name: x\nseed: 1\nduration: 30s\ntenants:\n  - {group: a, count: 1, mode: dedicated}\npods: {count: 1}\n"
	cases := []struct{ faults, want string }{
		{"faults:\n  - {at: 1s, for: 2s, kind: tenant_db_stall, target: random, params: {then: later}}\n", `x.yaml:8`},
		{"faults:\n  - {at: 1s, for: 2s, kind: tenant_db_stall, target: random, params: {then: later}}\n", `kind tenant_db_stall: param then: "later" is not allowed`},
		{"faults:\n  - at: 1s\n    kind: nope\n", `unknown fault kind "nope"`},
	}
	for _, c := range cases {
		_, err := scenario.Parse("x.yaml", []byte(base+c.faults))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to contain %q", err, c.want)
		}
	}
	sc, err := scenario.Parse("x.yaml", []byte(base+"faults:\n  - {at: 1s, for: 2s, kind: tenant_db_stall, target: random, params: {then: resume}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Faults) != 1 || sc.Faults[0].Params.Value() != (kinds.StallParams{Then: kinds.ThenResume}) {
		t.Fatalf("faults %+v", sc.Faults)
	}
}
