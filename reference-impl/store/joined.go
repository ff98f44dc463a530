package store

import (
	"context"
	"database/sql"
	"time"
)

// Joined is what CommitJoined committed.
type Joined struct {
	Seq int64 // the first event's seq (the others follow it by one each); 0 when none was inserted
	// EventErr is why the events' insert failed while the mutation committed without them (the
	// caller treats each event as after a failed separate insert: retry buffer, or rejected).
	EventErr error
	// EventTime is how long the events' statements took (0 when none ran).
	EventTime time.Duration
}

// savepoint marks the mutation's end inside a joined transaction.
const savepoint = `SAVEPOINT event`

// CommitJoined runs mutate and then the insert of ev in one transaction, committed once
// (--event-commit joined): the shape of BatchWrite (the mutation's statements, then the event's
// insertEventsTx, behind the tenant's sequence row under GuardLock), for one mutation whose event
// must never fail it. The event's statements follow a SAVEPOINT: when they fail and the
// transaction is still alive, it rolls back to the savepoint and the mutation commits alone, with
// the event's error in EventErr. The returned error is the mutation's: mutate, the savepoint or the
// commit failed, or the transaction died with the event's insert (a lost connection, a deadlock
// victim): nothing was committed. A lock conflict that rolled back the transaction runs all of it
// again (retryConflicts). A nil ev commits the mutation alone (the admin failpoint).
//
// The event's seq is taken by its insert and seen by readers at the commit, one round trip later:
// under GuardLock the sequence row is held until then, so the tenant's events still commit in seq
// order; under GuardHorizon the seq is a gap for that round trip, which readers wait out. Under
// GuardNone (late-commit-skip) the defect's delayed commits apply as in InsertEvent.
func (s *TenantStore) CommitJoined(ctx context.Context, mutate func(context.Context, *sql.Tx) error, ev *Event, g Guard) (Joined, error) {
	return s.CommitJoinedMany(ctx, func(ctx context.Context, tx *sql.Tx) ([]Event, error) {
		if err := mutate(ctx, tx); err != nil || ev == nil {
			return nil, err
		}
		return []Event{*ev}, nil
	}, g)
}

// CommitJoinedMany is CommitJoined for mutations that owe any number of events: mutate runs the
// statements and returns the events they owe (a write group's files that were written), which are
// inserted with one multi-row statement after the savepoint, so they take consecutive seqs in the
// order given. A run again after a lock conflict calls mutate again. No events: the mutation
// commits alone.
func (s *TenantStore) CommitJoinedMany(ctx context.Context, mutate func(context.Context, *sql.Tx) ([]Event, error), g Guard) (Joined, error) {
	var r Joined
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		r = Joined{}
		evs, err := mutate(ctx, tx)
		if err != nil || len(evs) == 0 {
			return err
		}
		if _, err := tx.ExecContext(ctx, savepoint); err != nil {
			return err
		}
		t0 := time.Now()
		seq, err := insertEventsTx(ctx, tx, s.TenantID, evs, g == GuardLock)
		r.EventTime = time.Since(t0)
		if err != nil {
			if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT event`); rerr != nil {
				return err // the transaction is gone with the events: the mutation failed (or runs again)
			}
			r.EventErr = err
			return nil
		}
		r.Seq = seq
		lateCommits(g, seq, len(evs))
		return nil
	})
	return r, err
}
