package verifier

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
)

// shardLedger is one agent's ledger of a two-shard run: a run record declaring tenant, one acked
// write, and the lines given (deliveries, persisted rows), then the tenant's durable consumer and
// the audit.
func shardLedger(k int, tenant string, run, post []string) string {
	lines := []string{
		`{"k":"run","v":1,"run_id":"sh","scenario":"s","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"audit":true,"shard":{"k":` + string(rune('0'+k)) + `,"n":2},"tenants":[{"id":"` + tenant + `","mode":"shared"}],"pods":["external"],"target":"external"}`,
		`{"k":"conn","consumer":"c` + tenant + `","tenant":"` + tenant + `","conn":"k` + tenant + `","t":0,"phase":"open","pod":"external","since":0}`,
		`{"k":"mut","mid":"m` + tenant + `","tenant":"` + tenant + `","op":"write","path":"/x/` + tenant + `","intended_t":1000000,"t":1000000,"done_t":2000000,"res":"ok","pod":"external"}`,
	}
	lines = append(lines, run...)
	lines = append(lines, post...)
	lines = append(lines,
		`{"k":"consumer","consumer":"c`+tenant+`","tenant":"`+tenant+`","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`,
		`{"k":"audit","t":9500000,"ok":true,"tenants":1,"rows":1}`,
		`{"k":"end","t":10000000,"drained":true}`)
	return strings.Join(lines, "\n") + "\n"
}

func delivery(tenant string) string {
	return `{"k":"ev","consumer":"c` + tenant + `","tenant":"` + tenant + `","conn":"k` + tenant + `","t":3000000,"seq":1,"op":"write","path":"/x/` + tenant + `","pod":"external"}`
}

func persistedRow(tenant string) string {
	return `{"k":"persisted","tenant":"` + tenant + `","seq":1,"op":"write","path":"/x/` + tenant + `"}`
}

// TestShardCannotVouchForAnother: agent 1's write to A was lost (no delivery, no row), so the merged
// verdict fails. Agent 2 writing A's delivery and persisted row would turn it into a pass; the merge
// refuses agent 2's ledger instead, naming its file, line and the tenant. Controls: the honest set
// fails as before, and a set where agent 1 delivers and persists its own write passes.
func TestShardCannotVouchForAnother(t *testing.T) {
	own := []string{delivery("B")}
	ownPost := []string{persistedRow("B")}
	cases := []struct {
		name       string
		a, b       string
		verdict    string
		refuseLine int // the line of shard 2 the merge refuses (0: accepted)
	}{
		{"honest, A lost", shardLedger(1, "A", nil, nil), shardLedger(2, "B", own, ownPost), VerdictFail, 0},
		{"honest, A delivered", shardLedger(1, "A", []string{delivery("A")}, []string{persistedRow("A")}), shardLedger(2, "B", own, ownPost), VerdictPass, 0},
		{"agent 2 delivers A's write", shardLedger(1, "A", nil, nil), shardLedger(2, "B", append([]string{delivery("A")}, own...), ownPost), "", 4},
		{"agent 2 persists A's row", shardLedger(1, "A", nil, nil), shardLedger(2, "B", own, append(ownPost, persistedRow("A"))), "", 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pa, pb := filepath.Join(dir, "agent1.jsonl"), filepath.Join(dir, "agent2.jsonl")
			if err := os.WriteFile(pa, []byte(tc.a), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(pb, []byte(tc.b), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := ledger.Open(pa, pb)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			s, err := Verify(r, Options{})
			if tc.refuseLine == 0 {
				if err != nil {
					t.Fatalf("verify: %v", err)
				}
				if s.Verdict != tc.verdict {
					t.Errorf("verdict %s (failed %v), want %s", s.Verdict, s.FailedChecks, tc.verdict)
				}
				return
			}
			var le *ledger.LineError
			if !errors.As(err, &le) || le.File != pb || le.Line != tc.refuseLine || le.Field != "tenant" || !strings.Contains(le.Msg, `tenant "A"`) {
				t.Fatalf("verify = %v (verdict %v), want %s:%d refused for tenant \"A\"", err, s, pb, tc.refuseLine)
			}
		})
	}
}

// dropSamples are two scrapes of pod external's drop counter for tenant's writes: 0, then 1 (one
// write dropped after its ack, reason tenant_cap).
func dropSamples(tenant string) []string {
	s := func(t, v string) string {
		return `{"k":"metric","pod":"external","t":` + t + `,"name":"eventlogd_retry_dropped_total","labels":{"tenant_id":"` + tenant + `","reason":"tenant_cap"},"value":` + v + `}`
	}
	return []string{s("500000", "0"), s("4000000", "1")}
}

// TestShardCannotExplainAnothersLoss: agent 1's lost write is silent (FAIL) unless a drop counter
// explains it. Agent 2's scrapes of that counter for agent 1's tenant are left out of the merge
// (with a warning), so a forged increase cannot turn the silent loss into an explained one; agent
// 1's own scrapes still explain it (the honest case), whatever agent 2's copy says.
func TestShardCannotExplainAnothersLoss(t *testing.T) {
	lenient := func(s string) string { return strings.Replace(s, `"budget":0.0001`, `"budget":0.9`, 1) }
	own := []string{delivery("B")}
	ownPost := []string{persistedRow("B")}
	cases := []struct {
		name    string
		a, b    []string // run-phase lines of agent 1 and agent 2 beyond their own
		verdict string
		silent  int64
	}{
		{"no counter: silent", nil, nil, VerdictFail, 1},
		{"agent 2 forges A's counter", nil, dropSamples("A"), VerdictFail, 1},
		{"agent 1's own counter explains it", dropSamples("A"), nil, VerdictPass, 0},
		{"both scrape it", dropSamples("A"), dropSamples("A"), VerdictPass, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pa, pb := filepath.Join(dir, "agent1.jsonl"), filepath.Join(dir, "agent2.jsonl")
			if err := os.WriteFile(pa, []byte(lenient(shardLedger(1, "A", tc.a, nil))), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(pb, []byte(lenient(shardLedger(2, "B", append(append([]string{}, own...), tc.b...), ownPost))), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := ledger.Open(pa, pb)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			s, err := Verify(r, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Verdict != tc.verdict || s.LostByReason[ReasonSilent] != tc.silent || s.Lost != 1 {
				t.Errorf("verdict %s (failed %v), lost %d by reason %v; want %s with %d silent", s.Verdict, s.FailedChecks, s.Lost, s.LostByReason, tc.verdict, tc.silent)
			}
			warned := false
			for _, w := range s.Warnings {
				warned = warned || strings.Contains(w, "labelled with another shard's tenant")
			}
			if warned != (tc.b != nil) {
				t.Errorf("warning of left-out samples %v, want %v: %q", warned, tc.b != nil, s.Warnings)
			}
		})
	}
}
