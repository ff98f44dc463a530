package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// CommitGroup is CommitJoinedMany for a write group (--event-commit grouped) in one round trip
// instead of six, on GroupDB (a handle whose connections may send several statements in one
// COM_QUERY: Pools.AcquireGroup). evs are the group's events, evs[i] file i's (nil: the group owes
// none, the failpoint); a file that is a directory gets ErrIsDir and its event is not inserted, so
// the events inserted are those of the files without an error, in order, at consecutive seqs from
// r.Seq. The round trip:
//
//	START TRANSACTION; the multi-row upsert of files, which fails with error 1242 on a directory's
//	row; SAVEPOINT event; under GuardLock the tenant's sequence row; the multi-row event insert;
//	SELECT each file's revision and LAST_INSERT_ID() (the first seq); COMMIT
//
// The server stops a multi-statement at its first error. A directory among the paths stops it at
// the upsert, which changed nothing: the group goes on in the same transaction as before this
// round trip existed, in two more (the upsert that leaves directories alone and the revisions,
// then the events of the files only and the COMMIT). An error after the savepoint
// (the events' statements) left the transaction at it: ROLLBACK TO SAVEPOINT and the revisions in
// one round trip, then COMMIT, and the files commit alone with EventErr, as under
// CommitJoinedMany (the caller buffers the events). An error before it, or a transaction InnoDB
// rolled back (a deadlock victim), fails that rollback: ROLLBACK, and the group failed (run again
// on a lock conflict). Round trips are what a hot tenant's groups wait for one after the other:
// each costs a wake of the pod and of the server, which on a busy machine costs more than the
// statements (docs/performance.md). GuardNone (late-commit-skip) inserts in a second round trip and
// commits in a third, after the defect's delay. A connection whose transaction state is not known
// after a failure is closed, never handed back to the pool with a transaction open.
func (s *TenantStore) CommitGroup(ctx context.Context, files []FileWrite, evs []Event, g Guard) (revs []int64, errs []error, r Joined, err error) {
	if s.GroupDB == nil {
		return nil, nil, Joined{}, errors.New("write group: no group handle for pool " + s.PoolID)
	}
	if evs != nil && len(evs) != len(files) {
		return nil, nil, Joined{}, errors.New("write group: one event per file, or none")
	}
	w, err := s.filesUpsert(files)
	if err != nil {
		return nil, nil, Joined{}, err
	}
	err = retryConflicts(ctx, s.Retries, func() error {
		r = Joined{}
		revs, errs, err = s.commitGroupOnce(ctx, w, evs, g, &r)
		return err
	})
	return revs, errs, r, err
}

// Written returns the events of evs (evs[i] file i's) whose file was written (errs[i] nil), in
// order: what a write group inserts and owes.
func Written(evs []Event, errs []error) []Event {
	owed := make([]Event, 0, len(evs))
	for i, ev := range evs {
		if errs[i] == nil {
			owed = append(owed, ev)
		}
	}
	return owed
}

// erSubqueryRows is MySQL's ER_SUBQUERY_NO_1_ROW (a scalar subquery returned more than one row):
// what the group's upsert raises on a directory's row.
const erSubqueryRows = 1242

func (s *TenantStore) commitGroupOnce(ctx context.Context, w filesWrite, evs []Event, g Guard, r *Joined) (revs []int64, errs []error, err error) {
	conn, err := s.GroupDB.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	open := true // a transaction may be open on conn
	defer func() {
		if open {
			discard(conn) // its state is not known: never back to the pool
		}
		conn.Close()
	}()
	rollback := func() { // ends the transaction; a failed ROLLBACK leaves open set
		if _, err := conn.ExecContext(ctx, `ROLLBACK`); err == nil {
			open = false
		}
	}
	commit := func() error {
		if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
			return err
		}
		open = false
		return nil
	}
	var rows *sql.Rows
	if g == GuardNone {
		rows, err = conn.QueryContext(ctx, "START TRANSACTION; "+w.upsert+"; "+w.query, append(w.upsertArgs, w.queryArgs...)...)
	} else {
		var q strings.Builder
		q.WriteString("START TRANSACTION; " + w.upsertNoDir + "; ")
		args := make([]any, 0, len(w.upsertArgs)+len(w.queryArgs)+7*len(evs)+1)
		args = append(args, w.upsertArgs...)
		if len(evs) > 0 {
			q.WriteString(savepoint + "; ")
			if g == GuardLock {
				q.WriteString(seqLockUpsert + "; ")
				args = append(args, s.TenantID)
			}
			insq, insArgs := eventsInsert(s.TenantID, evs)
			q.WriteString(insq + "; ")
			args = append(args, insArgs...)
		}
		q.WriteString(w.queryWithID + "; COMMIT")
		args = append(args, w.queryArgs...)
		t0 := time.Now()
		rows, err = conn.QueryContext(ctx, q.String(), args...)
		r.EventTime = time.Since(t0)
		if err == nil {
			var seq int64
			if revs, errs, seq, err = w.revisions(rows, true); err != nil {
				return nil, nil, err // the rows or the COMMIT after them failed: whether it committed is not known
			}
			open = false
			if len(evs) > 0 {
				r.Seq = seq
			}
			return revs, errs, nil
		}
		if me := (*mysql.MySQLError)(nil); !errors.As(err, &me) || me.Number != erSubqueryRows {
			if len(evs) == 0 {
				rollback() // no savepoint: the upsert failed
				return nil, nil, err
			}
			// Failed at the upsert (no savepoint yet: nothing of the group is written) or at the
			// events (the savepoint is there: the files commit alone).
			rows, rerr := conn.QueryContext(ctx, "ROLLBACK TO SAVEPOINT event; "+w.query, w.queryArgs...)
			if rerr != nil {
				rollback()
				return nil, nil, err
			}
			if revs, errs, _, rerr = w.revisions(rows, false); rerr != nil {
				rollback()
				return nil, nil, rerr
			}
			if rerr := commit(); rerr != nil {
				return nil, nil, rerr
			}
			r.EventErr = err
			return revs, errs, nil
		}
		// A directory among the paths: the upsert changed nothing and nothing after it ran, in a
		// transaction still open. The upsert that leaves directories alone and the revisions, then
		// the other files' events.
		rows, err = conn.QueryContext(ctx, w.upsert+"; "+w.query, append(w.upsertArgs, w.queryArgs...)...)
	}
	if err == nil {
		revs, errs, _, err = w.revisions(rows, false)
	}
	if err != nil {
		rollback()
		return nil, nil, err
	}
	owed := Written(evs, errs)
	if len(owed) == 0 {
		if err := commit(); err != nil {
			return nil, nil, err
		}
		return revs, errs, nil
	}
	var q strings.Builder
	q.WriteString(savepoint + "; ")
	var args []any
	ins := 1 // the event insert's statement among the round trip's
	if g == GuardLock {
		q.WriteString(seqLockUpsert + "; ")
		args = append(args, s.TenantID)
		ins++
	}
	insq, insArgs := eventsInsert(s.TenantID, owed)
	q.WriteString(insq)
	args = append(args, insArgs...)
	commitLater := g == GuardNone // the late-commit-skip defect delays some commits
	if !commitLater {
		q.WriteString("; COMMIT")
	}
	t0 := time.Now()
	var seq int64
	seq, err = execInsertID(ctx, conn, q.String(), args, ins)
	r.EventTime = time.Since(t0)
	if err != nil {
		// The events' statements failed with the transaction alive at the savepoint: the files
		// commit alone. Without the savepoint the transaction is gone: nothing committed.
		if _, rerr := conn.ExecContext(ctx, `ROLLBACK TO SAVEPOINT event; COMMIT`); rerr != nil {
			rollback()
			return nil, nil, err
		}
		open = false
		r.EventErr = err
		return revs, errs, nil
	}
	if commitLater {
		lateCommits(g, seq, len(owed))
		if err := commit(); err != nil {
			return nil, nil, err
		}
	}
	open = false
	r.Seq = seq
	return revs, errs, nil
}

// execInsertID runs query (several statements) on conn and returns the insert id the server
// reported for its statement number ins (from 0): for a multi-row INSERT the first row's
// auto-increment value, what LAST_INSERT_ID() answers after it. It reads the statements' OK
// packets through the driver (mysql.Result), so the round trip needs no SELECT LAST_INSERT_ID():
// one statement and one result set fewer, and no rows (nor their goroutine) on the pod.
func execInsertID(ctx context.Context, conn *sql.Conn, query string, args []any, ins int) (id int64, err error) {
	err = conn.Raw(func(dc any) error {
		ec, ok := dc.(driver.ExecerContext)
		if !ok {
			return errors.New("write group: the driver cannot execute statements with a context")
		}
		nv := make([]driver.NamedValue, len(args))
		checker, _ := dc.(driver.NamedValueChecker)
		for i, a := range args {
			nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
			if checker != nil {
				if err := checker.CheckNamedValue(&nv[i]); err != nil {
					return err
				}
			}
		}
		res, err := ec.ExecContext(ctx, query, nv)
		if err != nil {
			return err
		}
		mr, ok := res.(mysql.Result)
		if !ok {
			return errors.New("write group: the driver reports no insert id per statement")
		}
		ids := mr.AllLastInsertIds()
		if ins >= len(ids) {
			return errors.New("write group: fewer statement results than statements")
		}
		id = ids[ins]
		return nil
	})
	return id, err
}

// discard closes conn's driver connection, so database/sql drops it instead of pooling it.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}
