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

// CommitGroup is CommitJoinedMany for a write group (--event-commit grouped) in two round trips
// instead of six, on GroupDB (a handle whose connections may send several statements in one
// COM_QUERY: Pools.AcquireGroup):
//
//  1. START TRANSACTION; the multi-row upsert of files; the SELECT of their revisions
//     (WriteFilesTx's statements);
//  2. SAVEPOINT event; under GuardLock the tenant's sequence row; the multi-row event insert of
//     what owe returns for those revisions; COMMIT (the first seq is the insert's id in the
//     server's answer to it: execInsertID).
//
// The server stops a multi-statement at its first error, so a failed second round trip left the
// transaction at the savepoint (the event's statements failed: ROLLBACK TO SAVEPOINT; COMMIT, and
// the files commit alone with EventErr, as under CommitJoinedMany) or without it (InnoDB rolled the
// whole transaction back, a deadlock victim: the rollback to the savepoint fails and the group
// failed, run again on a lock conflict). Round trips are what a hot tenant's groups wait for one
// after the other: each costs a wake of the pod and of the server, which on a busy machine costs
// more than the statements (docs/performance.md). GuardNone (late-commit-skip) commits in a third
// round trip, after the defect's delay. A connection whose transaction state is not known after a
// failure is closed, never handed back to the pool with a transaction open.
func (s *TenantStore) CommitGroup(ctx context.Context, files []FileWrite, owe func(revs []int64, errs []error) []Event, g Guard) (revs []int64, errs []error, r Joined, err error) {
	if s.GroupDB == nil {
		return nil, nil, Joined{}, errors.New("write group: no group handle for pool " + s.PoolID)
	}
	w, err := s.filesUpsert(files)
	if err != nil {
		return nil, nil, Joined{}, err
	}
	err = retryConflicts(ctx, s.Retries, func() error {
		r = Joined{}
		revs, errs, err = s.commitGroupOnce(ctx, w, owe, g, &r)
		return err
	})
	return revs, errs, r, err
}

func (s *TenantStore) commitGroupOnce(ctx context.Context, w filesWrite, owe func([]int64, []error) []Event, g Guard, r *Joined) (revs []int64, errs []error, err error) {
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
	rows, err := conn.QueryContext(ctx, "START TRANSACTION; "+w.upsert+"; "+w.query, append(w.upsertArgs, w.queryArgs...)...)
	if err == nil {
		revs, errs, err = w.revisions(rows)
	}
	if err != nil {
		rollback()
		return nil, nil, err
	}
	evs := owe(revs, errs)
	if len(evs) == 0 {
		if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
			return nil, nil, err
		}
		open = false
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
	insq, insArgs := eventsInsert(s.TenantID, evs)
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
		lateCommits(g, seq, len(evs))
		if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
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
