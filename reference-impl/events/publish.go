package events

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// Resolver acquires a tenant's store the way the request path does (tenant lookup in the meta DB,
// then the pool's handle); it returns store.ErrNotFound for a tenant that is gone.
type Resolver func(ctx context.Context, tenant string) (*store.TenantStore, error)

// Waker is what a durable insert must wake: the outbox notifier (other pods) and the local bus.
// Both carry the committed seq: it raises the tenant's head hint (meta DB) and this pod's local
// head, which let a stream resume at the head without a tenant-DB query.
type Waker interface {
	Signal(tenant string, seq int64)  // outbox hint (and head hint) for other pods
	Publish(tenant string, seq int64) // local streams (local head first, then the wake)
}

// Sweeper is told about every durable hot-path insert (the lazy retention sweep hooks here).
type Sweeper interface {
	AfterInsert(st *store.TenantStore)
}

// Publisher turns a committed mutation into an event: an insert bounded by InsertTimeout that
// never fails the mutation; a failed insert goes to the retry buffer.
type Publisher struct {
	InsertTimeout time.Duration // hot-path insert timeout (default 2s)
	Guard         store.Guard   // the late-commit guard of inserts (GuardNone only under late-commit-skip)
	DropOnFailure bool          // the drop-on-insert-failure defect: log and drop instead of buffering
	NoSecondWake  bool          // the no-second-wake defect: a flushed entry wakes nobody
	Buffer        *Buffer
	Wake          Waker
	Sweep         Sweeper
	Resolve       Resolver
	Metrics       *metrics.Metrics
	Log           *slog.Logger

	mu    sync.Mutex
	cache map[string]*store.TenantStore // the "bus's cached store pointer" the flusher tries first
	fail  failpoint
}

// failpoint makes hot-path inserts fail without touching the DB (test-only, through the admin
// endpoint): the one fault that breaks the event path while the mutation path stays healthy.
type failpoint struct {
	until  time.Time
	tenant string // empty: every tenant
}

// ErrFailpoint is the error a hot-path insert returns while the failpoint is armed.
var ErrFailpoint = errors.New("event insert failpoint armed (admin)")

// FailHotInserts makes hot-path inserts of tenant (every tenant when empty) fail for d; retry
// flushes are unaffected, so a correct pod recovers every such event.
func (p *Publisher) FailHotInserts(tenant string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail = failpoint{until: time.Now().Add(d), tenant: tenant}
}

func (p *Publisher) failing(tenant string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Now().Before(p.fail.until) && (p.fail.tenant == "" || p.fail.tenant == tenant)
}

// Publish inserts ev for st's tenant and wakes subscribers on success; it returns the seq (0 when
// the insert failed and the event was buffered or dropped).
func (p *Publisher) Publish(ctx context.Context, st *store.TenantStore, ev store.Event) int64 {
	p.remember(st)
	// Detached from the request: a client hanging up after its mutation committed must not cancel
	// the event. Bounded, so a stalled tenant DB costs the mutation at most InsertTimeout.
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.InsertTimeout)
	defer cancel()
	p.Metrics.InsertAttempts.WithLabelValues("hot").Inc()
	t0 := time.Now()
	var seq int64
	var err error
	if p.failing(st.TenantID) {
		err = ErrFailpoint
	} else {
		seq, err = st.InsertEvent(ictx, ev, p.Guard)
	}
	p.Metrics.InsertDuration.WithLabelValues("hot").Observe(time.Since(t0).Seconds())
	if err != nil {
		ev.MaybeStored = err != ErrFailpoint && store.IsAmbiguous(err)
		p.failed(st, ev, err)
		return 0
	}
	p.Metrics.InsertResults.WithLabelValues("hot", "ok").Inc()
	p.Inserted(st, seq)
	return seq
}

// failed is what follows a failed hot-path insert of ev: counted, then dropped as rejected (a row
// the table refuses), dropped (the drop-on-insert-failure defect) or buffered for retry.
func (p *Publisher) failed(st *store.TenantStore, ev store.Event, err error) {
	p.Metrics.InsertResults.WithLabelValues("hot", "error").Inc()
	if store.IsPermanent(err) {
		// A row the table refuses fails every retry too: count it, never let it head the queue.
		p.Log.Warn("event refused by the tenant DB; dropped as rejected", "tenant_id", st.TenantID, "path", ev.Path, "err", err)
		p.Buffer.Reject(st.TenantID)
		return
	}
	if p.DropOnFailure {
		p.Log.Warn("event insert failed; dropped (defect drop-on-insert-failure)", "tenant_id", st.TenantID, "path", ev.Path, "err", err)
		return
	}
	p.Log.Warn("event insert failed; buffered for retry", "tenant_id", st.TenantID, "path", ev.Path, "err", err)
	p.Buffer.Enqueue(st.TenantID, ev)
}

// Joined commits a mutation and its event in one transaction (--event-commit joined):
// mutate's statements, then the event's insert under p.Guard after a savepoint, one commit
// (store.CommitJoined). The error is the mutation's: nothing was committed and no event is owed.
// When only the event's insert failed the mutation committed alone, and the event goes where a
// failed Publish sends it (the retry buffer; rejected; dropped under drop-on-insert-failure); the
// admin failpoint commits the mutation without trying the event. A committed event gets
// Inserted's wakes, as a batch write's do. The transaction keeps ctx's deadline but not its
// cancellation: a client hanging up must not cut a commit from its wakes.
func (p *Publisher) Joined(ctx context.Context, st *store.TenantStore, ev store.Event, mutate func(context.Context, *sql.Tx) error) error {
	return p.JoinedMany(ctx, st, func(ctx context.Context, tx *sql.Tx) ([]store.Event, error) {
		if err := mutate(ctx, tx); err != nil {
			return nil, err
		}
		return []store.Event{ev}, nil
	})
}

// JoinedMany is Joined for a mutation that owes the events mutate returns (a write group of
// --event-commit grouped: many writes, one transaction, one multi-row event insert), handled as
// Joined handles one: each event whose insert failed or was skipped by the failpoint goes where a
// failed Publish sends it, and the committed ones get one round of wakes up to the last seq.
func (p *Publisher) JoinedMany(ctx context.Context, st *store.TenantStore, mutate func(context.Context, *sql.Tx) ([]store.Event, error)) error {
	p.remember(st)
	ctx, cancel := commitContext(ctx)
	defer cancel()
	failing := p.failing(st.TenantID)
	var owed []store.Event
	res, err := st.CommitJoinedMany(ctx, func(ctx context.Context, tx *sql.Tx) ([]store.Event, error) {
		evs, err := mutate(ctx, tx)
		owed = evs
		if failing {
			return nil, err
		}
		return evs, err
	}, p.Guard)
	if err == nil {
		p.afterJoined(st, res, owed, failing)
	}
	return err
}

// Group commits a write group's files and evs (evs[i] file i's event) in one transaction, in one
// round trip when no path is a directory (store.CommitGroup, on the pool's group handle), handled
// as JoinedMany handles its events: those of the files written. It returns each file's revision or
// error (ErrIsDir); the error is the group's: nothing was committed.
func (p *Publisher) Group(ctx context.Context, st *store.TenantStore, files []store.FileWrite, evs []store.Event) ([]int64, []error, error) {
	p.remember(st)
	ctx, cancel := commitContext(ctx)
	defer cancel()
	failing := p.failing(st.TenantID)
	insert := evs
	if failing {
		insert = nil
	}
	revs, errs, res, err := st.CommitGroup(ctx, files, insert, p.Guard)
	if err == nil {
		p.afterJoined(st, res, store.Written(evs, errs), failing)
	}
	return revs, errs, err
}

// commitContext is a joined commit's context: ctx's deadline without its cancellation (a client
// hanging up must not cut a commit from its wakes).
func commitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	jctx := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(jctx, dl)
	}
	return jctx, func() {}
}

// afterJoined follows a joined commit that owed the events owed: the failed or failpoint-skipped
// ones go where a failed Publish sends them, the committed ones get one round of wakes.
func (p *Publisher) afterJoined(st *store.TenantStore, res store.Joined, owed []store.Event, failing bool) {
	if len(owed) == 0 {
		return
	}
	n := float64(len(owed))
	p.Metrics.InsertAttempts.WithLabelValues("hot").Add(n)
	p.Metrics.InsertDuration.WithLabelValues("hot").Observe(res.EventTime.Seconds())
	switch {
	case failing, res.EventErr != nil:
		why := res.EventErr
		if failing {
			why = ErrFailpoint
		}
		for _, ev := range owed {
			p.failed(st, ev, why)
		}
	default:
		p.Metrics.InsertResults.WithLabelValues("hot", "ok").Add(n)
		p.Inserted(st, res.Seq+int64(len(owed))-1)
	}
}

// Inserted does what follows a durable insert of st's tenant up to seq: the wakes (other pods, then
// local streams) and the lazy sweep hook. A batch write, whose events commit in the mutation's own
// transaction, calls it after its commit.
func (p *Publisher) Inserted(st *store.TenantStore, seq int64) {
	p.Wake.Signal(st.TenantID, seq)
	p.Wake.Publish(st.TenantID, seq)
	if p.Sweep != nil {
		p.Sweep.AfterInsert(st)
	}
}

func (p *Publisher) remember(st *store.TenantStore) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cache == nil {
		p.cache = map[string]*store.TenantStore{}
	}
	p.cache[st.TenantID] = st
}

func (p *Publisher) cached(tenant string) *store.TenantStore {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cache[tenant]
}

// statusCheckTimeout bounds the tenant lookup before a flush: a meta DB that does not answer costs a
// flush at most this much before it falls back to the cached store.
const statusCheckTimeout = time.Second

// InsertBuffered implements Inserter for the retry buffer. It first re-resolves the tenant the way
// the request path does (a tenant deleted since its event was buffered yields ErrTenantGone, even
// while the cached store is still open: the event must not land in a deleted tenant's DB). When the
// lookup fails for another reason (a meta outage) it falls back to the cached store, so flushes
// never depend on the meta DB for a tenant it knew. When the store's DB was closed under it (idle
// close) it re-resolves once more. A row the DB refuses for good yields ErrRejected.
func (p *Publisher) InsertBuffered(ctx context.Context, tenant string, ev store.Event) (int64, error) {
	rctx, cancel := context.WithTimeout(ctx, statusCheckTimeout)
	st, err := p.Resolve(rctx, tenant)
	cancel()
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, ErrTenantGone
	case err == nil:
		p.remember(st)
	default:
		if st = p.cached(tenant); st == nil {
			return 0, err
		}
	}
	for attempt := 0; ; attempt++ {
		if st == nil {
			var err error
			st, err = p.Resolve(ctx, tenant)
			if errors.Is(err, store.ErrNotFound) {
				return 0, ErrTenantGone
			}
			if err != nil {
				return 0, err
			}
			p.remember(st)
		}
		seq, err := p.flushOnce(ctx, st, ev)
		if err == nil || !store.IsClosed(err) || attempt == 1 {
			return seq, err
		}
		st = nil // closed DB: re-resolve once
	}
}

// flushOnce stores a buffered event through st: when an earlier insert may have committed it
// (ev.MaybeStored, set by the hot path or the buffer after an ambiguous failure) it looks the row
// up first and never stores it twice; a row the DB refuses for good yields ErrRejected.
func (p *Publisher) flushOnce(ctx context.Context, st *store.TenantStore, ev store.Event) (int64, error) {
	if ev.MaybeStored {
		seq, found, err := st.FindEvent(ctx, ev)
		if err != nil {
			return 0, err
		}
		if found {
			p.Log.Info("buffered event was stored by an insert whose answer was lost; not inserted again", "tenant_id", st.TenantID, "path", ev.Path, "seq", seq)
			return seq, nil
		}
	}
	p.Metrics.InsertAttempts.WithLabelValues("flush").Inc()
	t0 := time.Now()
	seq, err := st.InsertEvent(ctx, ev, p.Guard)
	p.Metrics.InsertDuration.WithLabelValues("flush").Observe(time.Since(t0).Seconds())
	if err == nil {
		p.Metrics.InsertResults.WithLabelValues("flush", "ok").Inc()
		return seq, nil
	}
	p.Metrics.InsertResults.WithLabelValues("flush", "error").Inc()
	if store.IsPermanent(err) {
		return 0, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	return 0, err
}

// Flushed is the buffer's onFlushed hook: the mandatory second wake, the same steps as a fresh
// publish (outbox hint for other pods, local bus for this pod's streams).
func (p *Publisher) Flushed(tenant string, seq int64) {
	if p.NoSecondWake {
		return
	}
	p.Wake.Signal(tenant, seq)
	p.Wake.Publish(tenant, seq)
}
