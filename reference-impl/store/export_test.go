package store

import (
	"database/sql"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// OpenTunedForTest opens dsn as the pools do, bypassing CheckDSN: the tests show what the
// connection check alone does with a DSN that fools the DSN-level charset check.
func OpenTunedForTest(dsn string, multiStatements bool, unsafe *atomic.Bool) (*sql.DB, error) {
	var tune func(*mysql.Config)
	if multiStatements {
		tune = func(c *mysql.Config) { c.MultiStatements = true }
	}
	return openTuned(dsn, tune, unsafe)
}

// EventsInsert is eventsInsert (its arguments are compared with each event's own fields).
var EventsInsert = eventsInsert
