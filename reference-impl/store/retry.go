package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/internal/sleep"
)

// MaxTxAttempts bounds how often one statement or transaction is run when InnoDB rolls it back as
// a deadlock victim (1213) or after a lock wait timeout (1205). Both are transient conflicts
// between our own statements, never the caller's fault, so a mutation must not fail because of one.
const MaxTxAttempts = 6

// RetryCount counts the statements or transactions run again after a deadlock or lock wait
// timeout. A pod shares one among its Meta and every TenantStore it builds, so each pod reports its
// own retries, not those of every pod in the process. The zero value is ready; a nil one counts
// nothing.
type RetryCount struct{ n atomic.Int64 }

// Load returns how many retries were counted.
func (c *RetryCount) Load() int64 {
	if c == nil {
		return 0
	}
	return c.n.Load()
}

func (c *RetryCount) add() {
	if c != nil {
		c.n.Add(1)
	}
}

// IsLockConflict reports whether err is MySQL error 1213 (deadlock, the transaction was rolled
// back) or 1205 (lock wait timeout): the whole transaction can be run again.
func IsLockConflict(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
}

// permanentErrors are the MySQL data errors no retry can fix: the row itself is unacceptable to
// the table (1366 incorrect string value, 1406 data too long, 1292 incorrect value, 1264 out of
// range, 1048 column cannot be null, 1300 invalid character string).
var permanentErrors = map[uint16]bool{1366: true, 1406: true, 1292: true, 1264: true, 1048: true, 1300: true}

// IsPermanent reports whether err is a data error that fails the same statement every time, so
// retrying the row is pointless (the retry buffer drops it as rejected).
func IsPermanent(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && permanentErrors[me.Number]
}

// IsAmbiguous reports whether err may have left the statement committed: the server's answer never
// came (a timeout, a lost connection), as opposed to an error the server sent (a MySQL error, after
// which an autocommit statement or a transaction did not commit).
func IsAmbiguous(err error) bool {
	var me *mysql.MySQLError
	return err != nil && !errors.As(err, &me)
}

// retryConflicts runs fn until it returns something other than a lock conflict, at most
// MaxTxAttempts times, sleeping a short jittered, doubling delay (1-2 ms, doubling, up to 16-32 ms before the last attempt) between
// attempts so the two parties of a deadlock do not collide again at once. fn must be a whole
// transaction (or one autocommit statement): InnoDB has rolled back all of it. Each retry is counted
// in retries (nil: not counted).
func retryConflicts(ctx context.Context, retries *RetryCount, fn func() error) error {
	var err error
	for attempt := 0; attempt < MaxTxAttempts; attempt++ {
		if err = fn(); !IsLockConflict(err) || attempt == MaxTxAttempts-1 {
			return err
		}
		retries.add()
		d := time.Millisecond << min(attempt, 5)
		if !sleep.For(ctx, d+rand.N(d)) {
			return err
		}
	}
	return err
}
