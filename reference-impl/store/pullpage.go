package store

import (
	"context"
	"database/sql"
	"math"
)

// TenantPage is what one statement (one snapshot) says about this tenant's events after a point
// `after`, within a span of the pool's seqs: the tenant's events in seq order, its sweep mark, and
// whether the pool's seqs up to its last event, and up to the span's end, are all visible.
type TenantPage struct {
	Events []Event
	Swept  int64 // this tenant's sweep mark
	// End is the span's last seq: the pool's highest visible seq, at most after + span. Events
	// holds only seqs up to End.
	End int64
	// More says the pool has visible seqs above End.
	More bool
	// EndVisible says every seq in (after, End] is visible: no insert of any tenant is in flight
	// there, no hole, no deleted row.
	EndVisible bool
	// EventsVisible says every seq in (after, last event] is visible (false when Events is empty).
	EventsVisible bool
}

// TenantEventsAfter reads, in one statement, up to limit of this tenant's events with after < seq
// <= End (over the (tenant_id, seq) index: no other tenant's row is sent) and counts the pool's
// visible seqs in (after, last event] and in (after, End], where End is the pool's highest seq,
// at most after + span (the count is bounded as a page walk is). GuardHorizon may deliver every
// event up to a range whose count is its width: no seq below is missing, so no insert below it is
// in flight. The counts and the events come from the same snapshot, so a late commit shows as a
// missing seq, never as one passed. The statement returns one row even when the tenant has no event
// in the span (the sweep mark and the counts).
func (s *TenantStore) TenantEventsAfter(ctx context.Context, after int64, limit int, span int64) (TenantPage, error) {
	release, err := s.enter(ctx)
	if err != nil {
		return TenantPage{}, err
	}
	defer release()
	t := s.TenantID
	bound := after + span
	if bound < after {
		bound = math.MaxInt64
	}
	const end = `LEAST((SELECT COALESCE(MAX(seq), 0) FROM fs_events), ?)`
	const mine = `SELECT seq, path, op, actor, created_at, src_path, batch FROM fs_events
		WHERE tenant_id = ? AND seq > ? AND seq <= ` + end + ` ORDER BY seq LIMIT ?`
	q := `SELECT m.seq, m.path, m.op, m.actor, m.created_at, m.src_path, m.batch, k.swept, k.top, k.end, k.vis_end, k.vis_mine FROM (SELECT
			(SELECT COALESCE(MAX(swept_through), 0) FROM fs_events_sweep_mark WHERE tenant_id = ?) AS swept,
			(SELECT COALESCE(MAX(seq), 0) FROM fs_events) AS top,
			` + end + ` AS end,
			(SELECT COUNT(*) FROM fs_events WHERE seq > ? AND seq <= ` + end + `) AS vis_end,
			(SELECT COUNT(*) FROM fs_events WHERE seq > ? AND seq <= (SELECT COALESCE(MAX(l.seq), 0) FROM (` + mine + `) l)) AS vis_mine
		) k LEFT JOIN (` + mine + `) m ON TRUE ORDER BY m.seq`
	rows, err := s.DB.QueryContext(ctx, q, t, bound, after, bound, after, t, after, bound, limit, t, after, bound, limit)
	if err != nil {
		return TenantPage{}, err
	}
	defer rows.Close()
	var p TenantPage
	var top, visEnd, visMine int64
	for rows.Next() {
		var seq sql.NullInt64
		var path, op, actor, src, batch sql.NullString
		var at sql.NullTime
		if err := rows.Scan(&seq, &path, &op, &actor, &at, &src, &batch, &p.Swept, &top, &p.End, &visEnd, &visMine); err != nil {
			return TenantPage{}, err
		}
		if !seq.Valid { // the tenant has no event in the span
			continue
		}
		p.Events = append(p.Events, Event{Seq: seq.Int64, Path: path.String, Op: op.String, Actor: actor.String,
			CreatedAt: at.Time, Src: src.String, Batch: batch.String})
	}
	if err := rows.Err(); err != nil {
		return TenantPage{}, err
	}
	p.More = top > p.End
	p.EndVisible = p.End <= after || visEnd == p.End-after
	if n := len(p.Events); n > 0 {
		p.EventsVisible = visMine == p.Events[n-1].Seq-after
	}
	return p, nil
}
