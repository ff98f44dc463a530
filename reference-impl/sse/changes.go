package sse

import (
	"context"
	"fmt"
	"time"

	"github.com/seqgate/seqgate/internal/sleep"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// Pull: GET /v1/events/changes reads the rows a stream page reads, under the same late-commit guard
// and sweep-mark check (seed 003's pull access beside the push stream), one page per request.

// ChangesPage is one answer of the pull endpoint: the events after since in seq order, the since of
// the next request, and whether more rows were already committed past this page.
type ChangesPage struct {
	Events    []store.Event
	NextSince int64
	HasMore   bool
}

// CompactedError says that rows after since were swept: the client must resync and resume from
// SweptThrough (no retained row has a seq at or below it). It is the pull form of seq_too_old.
type CompactedError struct {
	Since        int64
	SweptThrough int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("since %d: events through seq %d were swept by retention; resync, then resume from since=%d", e.Since, e.SweptThrough, e.SweptThrough)
}

// OldestSeq is the lowest seq a retained row can have.
func (e *CompactedError) OldestSeq() int64 { return e.SweptThrough + 1 }

// Changes reads at most limit events of st's tenant after since. A page read past swept rows (since
// below the tenant's sweep mark) is a *CompactedError, exactly where a stream would send
// reset(seq_too_old). A since above the head is valid and answers an empty page until the tenant
// gets there (seed 003, section 7).
//
// It never passes a seq still in flight, under the configured guard as a stream does: GuardLock reads
// the page under the tenant's sequence row (store.EventsPageLocked), GuardHorizon delivers only up
// to the first missing seq (changesHorizon), and GuardNone (the late-commit-skip defect) reads
// plainly and may pass one.
func (s *Streamer) Changes(ctx context.Context, st *store.TenantStore, since int64, limit int) (ChangesPage, error) {
	if s.pullAtHead(ctx, st.TenantID, since) {
		return ChangesPage{NextSince: since}, nil
	}
	if s.cfg.Guard == store.GuardHorizon {
		return s.changesHorizon(ctx, st, since, limit)
	}
	var evs []store.Event
	var swept int64
	err := s.pullRead(ctx, &st, func(ctx context.Context, st *store.TenantStore) (err error) {
		if s.cfg.Guard == store.GuardLock {
			evs, swept, err = st.EventsPageLocked(ctx, since, limit+1) // one row past the limit: has_more
		} else {
			evs, swept, err = st.EventsPage(ctx, since, limit+1)
		}
		return err
	})
	if err != nil {
		return ChangesPage{}, err
	}
	if since < swept {
		return ChangesPage{}, s.compacted(st, since, swept)
	}
	p := ChangesPage{NextSince: since}
	if len(evs) > limit {
		evs, p.HasMore = evs[:limit], true
	}
	p.Events = evs
	if len(evs) > 0 {
		p.NextSince = evs[len(evs)-1].Seq
	}
	return p, nil
}

// changesHorizon is Changes under GuardHorizon. It first reads the tenant's own rows only
// (changesMine) and answers from them when no seq of the pool is missing below them; otherwise a
// pull request keeps no state between requests, so
// the horizon lives inside the request: it reads every tenant's seqs after since in order
// (store.EventsAfter) and judges them with a stream's horizon rule (horizon.advance), starting at
// since. Events up to the first missing seq are answered at once (has_more when rows are visible past
// the gap). When the gap comes first (nothing deliverable), the request itself waits for it, reading
// again with a growing pause, and gives it up as a hole only once it stayed missing for
// --sse-horizon-wait since this request first saw it: the same bound a stream gives a gap. next_since
// is the horizon, which may be a seq of another tenant: every seq of this tenant at or below it was
// answered or given up.
func (s *Streamer) changesHorizon(ctx context.Context, st *store.TenantStore, since int64, limit int) (ChangesPage, error) {
	if p, ok, err := s.changesMine(ctx, &st, since, limit); ok || err != nil {
		return p, err
	}
	hz := horizon{settled: since}
	p := ChangesPage{NextSince: since}
	pause := 5 * time.Millisecond
	for pages := 0; ; pages++ {
		var hp store.HorizonPage
		err := s.pullRead(ctx, &st, func(ctx context.Context, st *store.TenantStore) (err error) {
			hp, err = st.EventsAfter(ctx, hz.settled, s.cfg.PageSize)
			return err
		})
		if err != nil {
			return ChangesPage{}, err
		}
		s.saw(st, hp)
		if since < hp.Swept {
			return ChangesPage{}, s.compacted(st, since, hp.Swept)
		}
		from := hz.settled
		n, held, gaveUp := hz.advance(hp.Rows, s.gone(st, hp), time.Now(), s.cfg.HorizonWait)
		if gaveUp {
			s.m.HorizonHoles.Inc()
			s.log.Warn("pull horizon gave missing seqs up as holes (rolled-back inserts, or rows visible later than --sse-horizon-wait)",
				"tenant_id", st.TenantID, "after", from, "through", hz.settled)
		}
		for _, r := range hp.Rows[:n] {
			if !r.Mine {
				continue
			}
			if len(p.Events) == limit { // the answer is full: the next request starts at its last event
				p.HasMore = true
				return p, nil
			}
			p.Events = append(p.Events, r.Event)
			p.NextSince = r.Seq
		}
		p.NextSince = hz.settled
		switch {
		case held && len(p.Events) > 0:
			p.HasMore = true // rows are visible past the gap: come back at once
			return p, nil
		case held:
			if !sleep.For(ctx, pause) { // nothing to answer yet: wait for the gap here
				return ChangesPage{}, ctx.Err()
			}
			pause = min(2*pause, 100*time.Millisecond)
		case len(hp.Rows) < s.cfg.PageSize || len(p.Events) > 0 || pages >= s.cfg.MaxPagesPerWake:
			p.HasMore = len(hp.Rows) >= s.cfg.PageSize
			return p, nil
		}
	}
}

// pullAtHead says whether a pull from since may be answered with an empty page without a tenant-DB
// query: since equals the tenant's head hint (0 for a tenant that never wrote: provisioning writes
// it) and this pod committed nothing above it, the test a stream's resume at the head makes
// (knownHead). A pull consumer of a quiet tenant then touches only the meta DB, as a connected
// stream does, and a cold serverless DB stays asleep. A hint that lags the head (a write committed,
// its hint not yet written, at most one coalescing window) delays the write to the next poll; every
// doubt (no hint, another value, a meta error or timeout) queries the tenant DB. Off under the
// pull-wakes-cold defect.
func (s *Streamer) pullAtHead(ctx context.Context, tenant string, since int64) bool {
	if s.cfg.PullWakesCold || s.HeadHint == nil || s.bus.LocalHead(tenant) > since {
		return false
	}
	hctx, cancel := context.WithTimeout(ctx, headHintTimeout)
	defer cancel()
	h, _, ok, err := s.HeadHint(hctx, tenant)
	return err == nil && ok && h == since && s.bus.LocalHead(tenant) <= h
}

// pullRead runs one read of a pull request under the query timeout, counted as a stream's; a
// handle closed under it is re-resolved once (*st is then the new store).
func (s *Streamer) pullRead(ctx context.Context, st **store.TenantStore, read func(context.Context, *store.TenantStore) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	s.m.TenantQueries.WithLabelValues("events_since").Inc()
	err := read(ctx, *st)
	if store.IsClosed(err) && s.Resolve != nil {
		nst, rerr := s.Resolve(ctx, (*st).TenantID)
		if rerr != nil {
			return rerr
		}
		*st = nst
		err = read(ctx, nst)
	}
	return err
}

// compacted counts a pull page read past swept rows as a reset(seq_too_old) and returns its error.
func (s *Streamer) compacted(st *store.TenantStore, since, swept int64) error {
	s.m.Resets.WithLabelValues(st.TenantID, ReasonSeqTooOld).Inc()
	return &CompactedError{Since: since, SweptThrough: swept}
}

// changesMine answers a GuardHorizon pull from this tenant's rows alone when it can (ok): its
// events after since within a span of PageSize x MaxPagesPerWake pool seqs (the bound of a
// page walk), read with counts of the pool's visible seqs in the same snapshot
// (store.TenantEventsAfter). When every seq up to the span's end is visible, every event read is
// answered and next_since is the span's end (the horizon, as the page walk gives it); when only
// the seqs up to the tenant's last event are, its events are answered, next_since is the last one,
// and has_more says to come back. A missing seq below the first event, or in a span with no event
// of the tenant (an insert in flight, a hole, a swept row), is not ok: the caller judges the range
// seq by seq with the horizon rule, and waits for the gap. Off under the cross-tenant-leak defect,
// whose reads are the pool-wide ones.
func (s *Streamer) changesMine(ctx context.Context, st **store.TenantStore, since int64, limit int) (p ChangesPage, ok bool, err error) {
	if (*st).LeakAcrossTenants {
		return ChangesPage{}, false, nil
	}
	var tp store.TenantPage
	span := int64(s.cfg.PageSize) * int64(s.cfg.MaxPagesPerWake)
	err = s.pullRead(ctx, st, func(ctx context.Context, st *store.TenantStore) (err error) {
		tp, err = st.TenantEventsAfter(ctx, since, limit+1, span) // one row past the limit: has_more
		return err
	})
	if err != nil {
		return ChangesPage{}, false, err
	}
	if since < tp.Swept {
		return ChangesPage{}, false, s.compacted(*st, since, tp.Swept)
	}
	full := len(tp.Events) > limit
	p = ChangesPage{NextSince: since, Events: tp.Events}
	if full {
		p.Events = p.Events[:limit]
	}
	switch {
	case tp.EndVisible && !full:
		p.NextSince, p.HasMore = max(since, tp.End), tp.More
	case tp.EndVisible || tp.EventsVisible:
		p.NextSince, p.HasMore = p.Events[len(p.Events)-1].Seq, true
	default:
		return ChangesPage{}, false, nil
	}
	if p.NextSince > since { // a seq this read saw (since itself is the client's word)
		s.clock.observe((*st).PoolID, p.NextSince, time.Now(), s.cfg.HorizonWait)
	}
	return p, true, nil
}
