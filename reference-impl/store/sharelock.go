package store

import (
	"database/sql"
	"errors"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"
)

// A read that takes a row in share mode first (OutboxSince, EventsPageLocked) does so because a
// MariaDB read view is built without a global latch (see those functions); MySQL 8 is run the same
// way. TiDB refuses LOCK IN SHARE MODE unless tidb_enable_noop_functions is on (error 1235), and does
// not need it: a transaction reads at one timestamp, and the writers commit one after another under
// the row's exclusive lock, so a snapshot that holds a later id holds every earlier one. A handle
// whose server refused the clause that way reads without it from then on.
var plainReads sync.Map // *sql.DB -> struct{}: the server refused LOCK IN SHARE MODE as a no-op feature

// inShareMode returns the locking clause of a share-mode read on db: " LOCK IN SHARE MODE", or ""
// once db's server has refused it (refusedShareMode).
func inShareMode(db *sql.DB) string {
	if _, ok := plainReads.Load(db); ok {
		return ""
	}
	return " LOCK IN SHARE MODE"
}

// refusedShareMode says whether err is TiDB's refusal of LOCK IN SHARE MODE as a no-op feature, and
// then remembers that db reads without it: the caller runs its read again.
func refusedShareMode(db *sql.DB, err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1235 || !strings.Contains(me.Message, "LOCK IN SHARE MODE") {
		return false
	}
	plainReads.Store(db, struct{}{})
	return true
}
