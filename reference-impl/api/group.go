package api

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// Write groups (--event-commit grouped): a tenant's concurrent PUTs on one pod commit together.
// A write queues on its tenant; a tenant with queued writes has one committer goroutine, started by
// the write that found none, which takes the queued writes as a group (distinct paths, up to
// groupMaxWrites and groupMaxBytes, always at least the oldest), commits them with their events in
// one transaction (one multi-row upsert, one multi-row event insert after a savepoint, one SELECT
// of the revisions, one commit, in one round trip unless a path is a directory:
// store.CommitGroup, events.Publisher.Group), answers them and takes the next group, until the
// queue is empty. Writes that arrive while a group commits queue for the next, so a busy tenant's
// writes cost one round trip per group instead of two or five each, and an idle tenant's write
// commits at once, alone. One group of a tenant commits at a time on a pod: measured beside 2 and 4 in flight (docs/performance.md), more made the groups smaller
// and each event dearer. The committer is one goroutine that goes on from group to group: handing
// the next group to a queued request's goroutine instead cost a wait in the scheduler's run queue
// between groups (0.4-0.9 ms measured under load, as long as a group's statements). Everything else
// (the other operations, batch writes) commits as under joined.
const (
	groupMaxWrites = 128
	// groupMaxBytes bounds a group's bodies (one statement carries them all, and the server's
	// max_allowed_packet bounds a statement); a group always takes its oldest write, whatever its
	// size.
	groupMaxBytes = 1 << 20
)

// groupWrite is one queued PUT; done receives one value once rev or err is set (after which the
// committer no longer touches it, so the write can recycle it: groupWrites).
type groupWrite struct {
	ctx  context.Context
	st   *store.TenantStore // as its request resolved it (a group commits on its oldest write's)
	path string
	body []byte
	done chan struct{}
	rev  int64
	err  error
}

// groupWrites recycles groupWrite values with their done channels: a queued write allocates
// neither (two allocations per write otherwise).
var groupWrites = sync.Pool{New: func() any { return &groupWrite{done: make(chan struct{}, 1)} }}

// tenantQueue is one tenant's queued writes; a queue exists while its committer runs.
type tenantQueue struct {
	pending []*groupWrite
}

// writeGroups are the pod's tenant queues.
type writeGroups struct {
	mu     sync.Mutex
	queues map[string]*tenantQueue
}

// groupedWrite queues a PUT of path in st's tenant and returns once its group committed: the new
// revision, or the error the group's commit failed with (nothing of the group committed).
func (s *Server) groupedWrite(ctx context.Context, st *store.TenantStore, path string, body []byte) (int64, error) {
	g := &s.groups
	w := groupWrites.Get().(*groupWrite)
	w.ctx, w.st, w.path, w.body = ctx, st, path, body
	g.mu.Lock()
	if g.queues == nil {
		g.queues = map[string]*tenantQueue{}
	}
	q := g.queues[st.TenantID]
	start := q == nil
	if start {
		q = &tenantQueue{}
		g.queues[st.TenantID] = q
	}
	q.pending = append(q.pending, w)
	g.mu.Unlock()
	if start {
		go s.commitQueue(st.TenantID, q)
	}
	<-w.done
	rev, err := w.rev, w.err
	*w = groupWrite{done: w.done}
	groupWrites.Put(w)
	return rev, err
}

// commitQueue commits q's writes group after group until q is empty, then removes q (under the
// lock, so a write that comes later starts a new committer).
func (s *Server) commitQueue(tenant string, q *tenantQueue) {
	g := &s.groups
	for {
		g.mu.Lock()
		if len(q.pending) == 0 {
			delete(g.queues, tenant)
			g.mu.Unlock()
			return
		}
		var group []*groupWrite
		group, q.pending = takeGroup(q.pending)
		g.mu.Unlock()
		s.runGroup(group)
	}
}

// runGroup commits group and answers each of its writes, whatever happens: a write whose client
// gave up while queued is answered with its context's error (nothing written), and a panic fails
// every write of the group instead of leaving them waiting (the committer is not a request:
// net/http would not recover it).
func (s *Server) runGroup(group []*groupWrite) {
	live := group[:0:0]
	defer func() {
		if v := recover(); v != nil {
			s.cfg.Log.Error("write group panicked", "tenant", group[0].st.TenantID, "writes", len(live), "panic", v)
			for _, w := range live {
				// Whether the group committed is not known: its writes fail (a client retries a
				// write that may have committed; one answered ok must have).
				w.rev, w.err = 0, fmt.Errorf("write group panicked: %v", v)
			}
		}
		for _, w := range group {
			w.done <- struct{}{} // w is its writer's again: not touched after this
		}
	}()
	for _, w := range group {
		if err := w.ctx.Err(); err != nil {
			w.err = err // the client gave up while queued: nothing was written
			continue
		}
		live = append(live, w)
	}
	if len(live) > 0 {
		// The oldest live write's deadline bounds the group; its client going away does not cancel
		// it (events.Publisher.Group).
		s.commitGroup(live[0].ctx, live[0].st, live)
	}
}

// takeGroup splits pending into the next group (its oldest write, then every later write whose path
// is not in the group yet, within the bounds) and what stays queued, in order.
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
// write's revision or error. ctx bounds the group (its deadline). On a pool with a group handle
// the transaction takes one round trip (events.Publisher.Group; three when a path is a
// directory); otherwise a group of one is joined's write (its upsert answers its revision, no
// SELECT) and a larger one runs WriteFilesTx's statements one by one.
func (s *Server) commitGroup(ctx context.Context, st *store.TenantStore, ws []*groupWrite) {
	s.m.WriteGroupSize.Observe(float64(len(ws)))
	if len(ws) == 1 && st.GroupDB == nil {
		w := ws[0]
		err := s.publisher.Joined(ctx, st, store.Event{Path: w.path, Op: store.OpWrite, CreatedAt: time.Now()}, func(ctx context.Context, tx *sql.Tx) (err error) {
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
	now := time.Now()
	evs := make([]store.Event, len(ws)) // each write's
	for i, w := range ws {
		evs[i] = store.Event{Path: w.path, Op: store.OpWrite, CreatedAt: now}
	}
	outcome := func(revs []int64, errs []error) {
		for i, w := range ws {
			w.rev, w.err = revs[i], errs[i]
		}
	}
	// The hook runs where a write's statement is decided and its event not yet inserted.
	hook := func(n int) {
		for range n {
			if s.cfg.AfterMutation != nil {
				s.cfg.AfterMutation(st.TenantID)
			}
		}
	}
	var err error
	if st.GroupDB != nil {
		hook(len(ws)) // before the group's one round trip, which carries the events too
		var revs []int64
		var errs []error
		if revs, errs, err = s.publisher.Group(ctx, st, files, evs); err == nil {
			outcome(revs, errs)
		}
	} else {
		err = s.publisher.JoinedMany(ctx, st, func(ctx context.Context, tx *sql.Tx) ([]store.Event, error) {
			revs, errs, err := st.WriteFilesTx(ctx, tx, files)
			if err != nil {
				return nil, err
			}
			outcome(revs, errs)
			owed := store.Written(evs, errs)
			hook(len(owed))
			return owed, nil
		})
	}
	ok := 0
	for _, w := range ws {
		switch {
		case err != nil:
			w.rev, w.err = 0, err
		case w.err == nil:
			ok++
		}
	}
	if ok > 0 {
		s.m.Mutations.WithLabelValues("write", "ok").Add(float64(ok))
	}
}
