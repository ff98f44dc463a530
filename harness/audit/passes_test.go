package audit

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// TestPassesKeepSweptAndLateRows runs audit passes against a real MariaDB while rows are swept and
// one commits late: every row any pass saw is kept once, a pass re-reads from the mark of a pass at
// least Overlap older (so the late row, whose seq is below what the previous pass saw, is read), and
// Absent writes exactly the rows the final audit no longer found.
func TestPassesKeepSweptAndLateRows(t *testing.T) {
	db := startServer(t, map[string][]string{"pool": nil})["pool"]
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	exec("CREATE TABLE fs_events (seq BIGINT AUTO_INCREMENT PRIMARY KEY, tenant_id VARCHAR(64), path VARCHAR(1024), op VARCHAR(32), created_at DATETIME(6))")
	ins := func(n int) {
		for range n {
			exec("INSERT INTO fs_events (tenant_id, path, op, created_at) VALUES ('t1','/r/t1/m','write',NOW(6))")
		}
	}
	tables := map[string]Table{"t1": {DB: db, Database: "pool", TenantColumn: "tenant_id"}}
	prefix := func(string) string { return "/r/" }
	clock := time.Unix(1_000_000, 0)
	p := &Passes{Overlap: 30 * time.Second, Now: func() time.Time { return clock }}
	pass := func(at time.Duration) {
		t.Helper()
		clock = time.Unix(1_000_000, 0).Add(at)
		if err := p.Pass(ctx, []string{"t1"}, tables, prefix); err != nil {
			t.Fatal(err)
		}
	}

	ins(3) // seqs 1..3
	pass(0)
	exec("DELETE FROM fs_events WHERE seq = 2") // swept after pass 1
	ins(1)                                      // 4
	late, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := late.Exec("INSERT INTO fs_events (tenant_id, path, op, created_at) VALUES ('t1','/r/t1/m','write',NOW(6))"); err != nil {
		t.Fatal(err) // seq 5, not committed yet
	}
	ins(1) // 6, committed before 5
	pass(10 * time.Second)
	if err := late.Commit(); err != nil {
		t.Fatal(err)
	}
	pass(35 * time.Second)                            // reads after pass 1's mark (3), not pass 2's (6): finds 5
	exec("DELETE FROM fs_events WHERE seq IN (1, 5)") // swept before the final audit
	final := &ledger.Memory{}
	if o := Run(ctx, []string{"t1"}, tables, prefix, p.Final(final)); o.Err != nil {
		t.Fatal(o.Err)
	}
	n, err := p.Absent(final)
	if err != nil {
		t.Fatal(err)
	}
	var present, absent []int64
	for _, r := range final.Records() {
		if r.Absent {
			absent = append(absent, r.Seq)
		} else {
			present = append(present, r.Seq)
		}
	}
	if !slices.Equal(present, []int64{3, 4, 6}) || !slices.Equal(absent, []int64{1, 2, 5}) || n != 3 {
		t.Errorf("final audit %v, absent %v (n %d); want [3 4 6] and [1 2 5]", present, absent, n)
	}
	if done, failed := p.Counts(); done != 3 || failed != 0 {
		t.Errorf("passes done %d failed %d, want 3 and 0", done, failed)
	}
}
