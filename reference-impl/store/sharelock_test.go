package store

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestRefusedShareMode: TiDB's refusal of LOCK IN SHARE MODE (error 1235 naming the clause, as TiDB
// v8.5 words it) makes that handle's share-mode reads plain from then on, and only that handle's;
// any other error, another 1235, or the same words under another number keep the clause (MariaDB
// and MySQL need it: sharelock.go).
func TestRefusedShareMode(t *testing.T) {
	const tidb = "function LOCK IN SHARE MODE has only noop implementation in tidb now, use tidb_enable_noop_functions to enable these functions"
	for _, tc := range []struct {
		name    string
		err     error
		refused bool
	}{
		{"TiDB's refusal", &mysql.MySQLError{Number: 1235, SQLState: [5]byte{'4', '2', '0', '0', '0'}, Message: tidb}, true},
		{"TiDB's refusal, wrapped", fmt.Errorf("outbox poll: %w", &mysql.MySQLError{Number: 1235, Message: tidb}), true},
		{"another feature not supported", &mysql.MySQLError{Number: 1235, Message: "This version of MariaDB doesn't yet support 'LIMIT & IN/ALL/ANY/SOME subquery'"}, false},
		{"the words under another number", &mysql.MySQLError{Number: 1064, Message: "near 'LOCK IN SHARE MODE'"}, false},
		{"a lock wait timeout", &mysql.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded"}, false},
		{"not a server error", errors.New("invalid connection"), false},
		{"no error", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, other := new(sql.DB), new(sql.DB) // only compared as keys, never opened
			if got := inShareMode(db); got != " LOCK IN SHARE MODE" {
				t.Fatalf("a new handle reads with %q, want the share lock", got)
			}
			if got := refusedShareMode(db, tc.err); got != tc.refused {
				t.Fatalf("refusedShareMode = %v, want %v", got, tc.refused)
			}
			want := " LOCK IN SHARE MODE"
			if tc.refused {
				want = ""
			}
			if got := inShareMode(db); got != want {
				t.Errorf("after it: the handle reads with %q, want %q", got, want)
			}
			if got := inShareMode(other); got != " LOCK IN SHARE MODE" {
				t.Errorf("another handle reads with %q, want the share lock", got)
			}
			plainReads.Delete(db)
		})
	}
}
