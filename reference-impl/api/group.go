package api

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// Write groups (--event-commit grouped): a tenant's concurrent PUTs on one pod commit together. A
// write that finds fewer than groupsInFlight groups of its tenant in progress leads: it takes every
// queued write of the tenant (distinct paths, up to groupMaxWrites and groupMaxBytes, always at
// least itself), commits them with their events in one transaction (one multi-row upsert, one
// SELECT of the revisions, one multi-row event insert after a savepoint, one commit:
// store.WriteFilesTx, events.JoinedMany), answers the others and hands the lead to the oldest write
// still queued, which commits the next group. Writes that arrive while every lead is taken queue
// for the next group, so a busy tenant's writes cost a handful of round trips per group instead of
// two or five each, and an idle tenant's write commits at once, alone. Groups in flight at once
// lock their files in path order (no deadlock between them); a path in two of them commits in the
// order its row lock grants, its seqs with it. Everything else (the other operations, batch
// writes) commits as under joined.
const (
	// groupsInFlight is how many groups of one tenant commit at once. One: measured beside 2 and 4
	// (docs/performance.md), more groups in flight made them smaller and each event dearer, and
	// the rate fell.
	groupsInFlight = 1
	groupMaxWrites = 128
	// groupMaxBytes bounds a group's bodies (one statement carries them all, and the server's
	// max_allowed_packet bounds a statement); a group always takes its leader, whatever its size.
	groupMaxBytes = 1 << 20
)

// groupWrite is one queued PUT.
type groupWrite struct {
	ctx  context.Context
	path string
	body []byte
	// done says, once: true = commit group (this write heads it), false = this write was committed
	// or failed in another write's group (rev, err).
	done  chan bool
	group []*groupWrite
	rev   int64
	err   error
}

// tenantQueue is one tenant's queued writes; leading counts the groups being committed. A group is
// taken off pending under the lock by whoever gives it its leader (the write that found a lead free,
// or the leader handing its lead on), so a write is in one group only and only its head commits it.
type tenantQueue struct {
	pending []*groupWrite
	leading int
}

// writeGroups are the pod's tenant queues; a tenant's queue exists while it has a group in
// progress.
type writeGroups struct {
	mu     sync.Mutex
	queues map[string]*tenantQueue
}

// groupedWrite queues a PUT of path in st's tenant and returns once its group committed: the new
// revision, or the error the group's commit failed with (nothing of the group committed).
func (s *Server) groupedWrite(ctx context.Context, st *store.TenantStore, path string, body []byte) (int64, error) {
	g := &s.groups
	w := &groupWrite{ctx: ctx, path: path, body: body, done: make(chan bool, 1)}
	g.mu.Lock()
	if g.queues == nil {
		g.queues = map[string]*tenantQueue{}
	}
	q := g.queues[st.TenantID]
	if q == nil {
		q = &tenantQueue{}
		g.queues[st.TenantID] = q
	}
	q.pending = append(q.pending, w)
	var group []*groupWrite
	if q.leading < groupsInFlight {
		q.leading++
		group, q.pending = takeGroup(q.pending)
	}
	g.mu.Unlock()
	if group == nil && <-w.done {
		group = w.group // set by the leader that handed the lead on, before done
	}
	if group != nil {
		s.leadGroup(st, q, group)
	}
	return w.rev, w.err
}

// leadGroup commits group (its head is the calling write), answers its writes and hands the lead
// on with the next group. Whatever happens (a panic too), every write of the group is answered and
// the lead passed or given up, so no queued write waits forever.
func (s *Server) leadGroup(st *store.TenantStore, q *tenantQueue, group []*groupWrite) {
	g := &s.groups
	leader := group[0]
	defer func() {
		for _, w := range group[1:] {
			w.done <- false
		}
		g.mu.Lock()
		var next []*groupWrite
		if len(q.pending) > 0 {
			next, q.pending = takeGroup(q.pending)
			next[0].group = next
		} else if q.leading--; q.leading == 0 {
			delete(g.queues, st.TenantID)
		}
		g.mu.Unlock()
		if next != nil {
			next[0].done <- true
		}
	}()
	live := group[:0:0]
	for _, w := range group {
		if err := w.ctx.Err(); err != nil && w != leader {
			w.err = err // the client gave up while queued: nothing was written
			continue
		}
		live = append(live, w)
	}
	s.commitGroup(leader.ctx, st, live)
}

// takeGroup splits pending into the next group (its head, then every later write whose path is not
// in the group yet, within the bounds) and what stays queued, in order.
func takeGroup(pending []*groupWrite) (group, rest []*groupWrite) {
	paths := make(map[string]bool, len(pending))
	bytes := 0
	for i, w := range pending {
		if i > 0 && (paths[w.path] || len(group) == groupMaxWrites || bytes+len(w.body) > groupMaxBytes) {
			rest = append(rest, w)
			continue
		}
		paths[w.path] = true
		bytes += len(w.body)
		group = append(group, w)
	}
	return group, rest
}

// commitGroup commits ws (distinct paths) with their events in one transaction and sets each
// write's revision or error. ctx is the leader's request: its deadline bounds the group.
func (s *Server) commitGroup(ctx context.Context, st *store.TenantStore, ws []*groupWrite) {
	s.m.WriteGroupSize.Observe(float64(len(ws)))
	if len(ws) == 1 { // alone: joined's write, whose upsert answers its revision (no SELECT)
		w := ws[0]
		err := s.publisher.Joined(ctx, st, store.Event{Path: w.path, Op: "write", CreatedAt: time.Now()}, func(ctx context.Context, tx *sql.Tx) (err error) {
			if w.rev, err = st.WriteFileTx(ctx, tx, w.path, w.body); err == nil && s.cfg.AfterMutation != nil {
				s.cfg.AfterMutation(st.TenantID)
			}
			return err
		})
		if w.err = err; err == nil {
			s.m.Mutations.WithLabelValues("write", "ok").Inc()
		}
		return
	}
	slices.SortFunc(ws, func(a, b *groupWrite) int { return strings.Compare(a.path, b.path) })
	files := make([]store.FileWrite, len(ws))
	for i, w := range ws {
		files[i] = store.FileWrite{Path: w.path, Content: w.body}
	}
	err := s.publisher.JoinedMany(ctx, st, func(ctx context.Context, tx *sql.Tx) ([]store.Event, error) {
		revs, errs, err := st.WriteFilesTx(ctx, tx, files)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		evs := make([]store.Event, 0, len(ws))
		for i, w := range ws {
			w.rev, w.err = revs[i], errs[i]
			if w.err == nil {
				evs = append(evs, store.Event{Path: w.path, Op: "write", CreatedAt: now})
				if s.cfg.AfterMutation != nil {
					s.cfg.AfterMutation(st.TenantID)
				}
			}
		}
		return evs, nil
	})
	for _, w := range ws {
		switch {
		case err != nil:
			w.rev, w.err = 0, err
		case w.err == nil:
			s.m.Mutations.WithLabelValues("write", "ok").Inc()
		}
	}
}
