package synth

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/seqgate/seqgate/ledger"
)

// TestIdleTenants: Idle adds tenants that are named in tenant records (then every tenant is, and the
// run record lists none) and have no other record; the rest of the ledger and the truth are those of
// the same config without them. Without Idle the run record lists the tenants (the control).
func TestIdleTenants(t *testing.T) {
	cfg := Config{Seed: 3, Tenants: 2, ConsumersPerTenant: 1, Events: 500}
	plain, plainTruth := generate(t, cfg)
	cfg.Idle = 5
	idle, idleTruth := generate(t, cfg)
	if plainTruth.Acked != idleTruth.Acked || plainTruth.Records+int64(cfg.Tenants+cfg.Idle) != idleTruth.Records {
		t.Errorf("truth: acked %d/%d, records %d/%d; want the same acked and one more record per tenant", plainTruth.Acked, idleTruth.Acked, plainTruth.Records, idleTruth.Records)
	}
	plainLines, idleLines := bytes.Split(plain, []byte("\n")), bytes.Split(idle, []byte("\n"))
	tenants := cfg.Tenants + cfg.Idle
	if !bytes.Equal(bytes.Join(plainLines[1:], nil), bytes.Join(idleLines[1+tenants:], nil)) {
		t.Error("the records after the tenant records differ from the ledger without idle tenants")
	}
	r, err := ledger.NewReader("idle.jsonl", bytes.NewReader(idle))
	if err != nil {
		t.Fatal(err)
	}
	run, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Tenants) != tenants || run.Tenants[tenants-1].ID != "t"+strconv.Itoa(tenants-1) {
		t.Errorf("the reader folds %d tenants (%v), want %d ending in t%d", len(run.Tenants), run.Tenants, tenants, tenants-1)
	}
	if !bytes.Contains(plainLines[0], []byte(`"tenants":`)) || bytes.Contains(idleLines[0], []byte(`"tenants":`)) {
		t.Errorf("run records: without idle %s, with %s; want the list only without", plainLines[0], idleLines[0])
	}
}
