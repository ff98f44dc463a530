package verifier

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestTextFaultsAndWrites: the human summary shows the fault timeline and every tenant's write
// outcomes right under the verdict (before the loss line), each tenant by its scenario name with the
// service's id beside it; a run without faults says so.
func TestTextFaultsAndWrites(t *testing.T) {
	e := edit{
		replace: map[string]string{"run": runLine(namedTenants, "")},
		after: map[string][]string{
			"mutA1": {
				`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"tenant_1","phase":"start","t":2500000}`,
				`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"tenant_1","phase":"stop","t":3500000}`,
				`{"k":"drop","tenant":"B","intended_t":2600000,"block":"0"}`,
			},
			"mutA2": {`{"k":"mut","mid":"m5","tenant":"A","op":"write","path":"/x/A/m5","intended_t":4500000,"t":4500000,"done_t":9000000,"res":"timeout","pod":"p1"}`},
		},
	}
	for _, tc := range []struct {
		name string
		e    edit
		want []string // regexps, in this order
	}{
		{"faults and writes", e, []string{
			`^verdict: `,
			`\nfaults \(1; times since the run started; recovery max [0-9.]+ ms, unrecovered 0\):\n`,
			`\n  f1 +tenant_db_stall +tenant_1 +start 0\.003s +healed 0\.004s \(0\.001s\) +recovered in [0-9.]+ ms\n`,
			`\nwrites per tenant \(offered = sent \+ dropped; sent = ok \+ err \+ timeout; acked = ok event-producing writes\):\n`,
			`\n +tenant +offered +sent +ok +err +timeout +dropped +acked +lost +p99 ms\n`,
			`\n +tenant_1 \(A\) +3 +3 +2 +0 +1 +0 +2 +0 +[0-9.]+\n`,
			`\n +tenant_2 \(B\) +2 +1 +1 +0 +0 +1 +1 +0 +[0-9.]+\n`,
			`\n +all +5 +4 +3 +0 +1 +1 +3 +0 +[0-9.]+\n`,
			`\nloss: `,
		}},
		{"no faults, old ledger", edit{}, []string{
			`^verdict: `,
			`\nfaults: none\n`,
			`\n +A +2 +2 +2 +0 +0 +0 +2 +0 +[0-9.]+\n`,
			`\nloss: `,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteText(&b, verifyText(t, tc.e.build(), Options{})); err != nil {
				t.Fatal(err)
			}
			out, at := b.String(), 0
			for _, re := range tc.want {
				loc := regexp.MustCompile(re).FindStringIndex(out[at:])
				if loc == nil {
					t.Fatalf("no %q after offset %d in:\n%s", re, at, out)
				}
				at += loc[1] - 1
			}
		})
	}
}

// TestWriteOutcomeThresholds: every write outcome is a threshold path per tenant; a timeout of
// tenant_1 breaks per_tenant.tenant_1.timeout < 1 and leaves the same bound on tenant_2 holding.
func TestWriteOutcomeThresholds(t *testing.T) {
	timeout := map[string][]string{"mutA2": {`{"k":"mut","mid":"m5","tenant":"A","op":"write","path":"/x/A/m5","intended_t":4500000,"t":4500000,"done_t":9000000,"res":"timeout","pod":"p1"}`}}
	for _, tc := range []struct {
		th     string
		broken bool
	}{
		{`{"per_tenant.tenant_1.timeout":["< 1"]}`, true},
		{`{"per_tenant.tenant_2.timeout":["< 1"]}`, false},
		{`{"timeout":["< 1"]}`, true},
		{`{"per_tenant.tenant_1.offered":["== 3"],"per_tenant.tenant_1.ok":["== 2"],"per_tenant.tenant_1.err":["== 0"],"offered":["== 4"]}`, false},
	} {
		s := verifyText(t, edit{after: timeout, replace: map[string]string{"run": runLine(namedTenants, tc.th)}}.build(), Options{})
		if broken := len(s.FailedChecks) > 0; broken != tc.broken {
			t.Errorf("%s: failed checks %v, want broken=%v", tc.th, s.FailedChecks, tc.broken)
		}
	}
}

// TestTenantRowsBounded: past maxTenantRows the writes table shows the tenants with the most lost,
// then failed, then dropped writes, in the scenario's order, and says how many it left out; up to
// the bound it shows every tenant.
func TestTenantRowsBounded(t *testing.T) {
	for _, n := range []int{maxTenantRows, 50} {
		s := &Summary{PerTenant: map[string]*Stats{}}
		for i := range n {
			name := fmt.Sprintf("tenant_%d", i+1)
			s.Tenants = append(s.Tenants, TenantInfo{Name: name, ID: fmt.Sprintf("id%d", i+1)})
			st := newStats()
			switch {
			case i == 40:
				st.Lost = 1
			case i%10 == 3:
				st.Timeout = 2
			case i%10 == 7:
				st.Drops = 5
			}
			s.PerTenant[name] = st
		}
		rows := tenantRows(s)
		if n <= maxTenantRows {
			if len(rows) != n {
				t.Errorf("%d tenants: %d rows", n, len(rows))
			}
			continue
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
		}
		// lost: tenant_41; failed: tenant_4, 14, 24, 34, 44; dropped: tenant_8, 18, 28, 38, 48; then the
		// first clean ones in order: tenant_1, 2, 3, 5, 6, 7, 9, 10, 11.
		want := "tenant_1 tenant_2 tenant_3 tenant_4 tenant_5 tenant_6 tenant_7 tenant_8 tenant_9 tenant_10 tenant_11 tenant_14 tenant_18 tenant_24 tenant_28 tenant_34 tenant_38 tenant_41 tenant_44 tenant_48"
		if got := strings.Join(names, " "); got != want {
			t.Errorf("rows\n got %s\nwant %s", got, want)
		}
		var b strings.Builder
		writeTenants(&b, s)
		if !strings.Contains(b.String(), "  ... and 30 more tenants (shown: the 20 with the most lost, then failed, then dropped writes; all in summary.json per_tenant)\n") {
			t.Errorf("text:\n%s", b.String())
		}
	}
}

// TestFaultRowsBounded: the text's fault timeline stops at maxFaultRows and says how many more there
// are; at the bound it shows them all.
func TestFaultRowsBounded(t *testing.T) {
	for _, n := range []int{maxFaultRows, maxFaultRows + 7} {
		s := &Summary{}
		for i := range n {
			s.Faults = append(s.Faults, FaultInfo{ID: fmt.Sprintf("f%03d", i+1), Kind: "pod_crash", Target: "pod-1", StartMs: float64(i)})
		}
		var b strings.Builder
		writeFaults(&b, s)
		rows := strings.Count(b.String(), " pod_crash ")
		more := strings.Contains(b.String(), "  ... and 7 more faults (all in summary.json faults)\n")
		if rows != maxFaultRows || more != (n > maxFaultRows) {
			t.Errorf("%d faults: %d rows, 'more' line %v:\n%s", n, rows, more, b.String())
		}
	}
}
