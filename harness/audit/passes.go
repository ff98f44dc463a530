package audit

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// DefaultOverlap is how far back each pass re-reads a tenant's rows: from the highest seq a pass whose
// read ended at least this long before saw. A row whose seq was taken earlier but that committed after a
// pass read past it (a late commit, a retry flush) is then still read by a later pass, as long as its
// transaction took less than this (eventlogd's flush insert timeout is 30 s, a request 10 s).
const DefaultOverlap = time.Minute

// Passes are audit passes during the run: each reads every tenant's rows of the run (incrementally,
// see DefaultOverlap) and keeps them, deduplicated by (tenant, seq), so that a row the retention
// sweep deletes before the final audit is still known to have persisted. They write nothing to the
// ledger while the run goes on (persisted records come after the run); the final audit's sink is
// wrapped by Final, and Absent writes the rows the passes saw and the final audit did not. Safe for
// concurrent use.
type Passes struct {
	// Overlap is DefaultOverlap when zero.
	Overlap time.Duration
	// Now is time.Now when nil (tests set it).
	Now func() time.Time

	mu     sync.Mutex
	rows   map[rowKey]ledger.Record
	marks  map[string][]mark // per tenant, (end of a pass's read, highest seq seen by then), oldest first
	done   int               // passes completed over every tenant
	failed int               // passes in which some tenant could not be read
	final  map[rowKey]bool   // rows the final audit wrote (Final)
}

type rowKey struct {
	tenant string
	seq    int64
}

type mark struct {
	at  time.Time
	max int64
}

func (p *Passes) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Pass reads the run's rows of every tenant of ids once (from its low-water mark on) and keeps them.
// A tenant that cannot be read is skipped this time (the next pass re-reads from its older mark);
// the error joins every tenant's failure.
func (p *Passes) Pass(ctx context.Context, ids []string, tables map[string]Table, prefix func(tenant string) string) error {
	begin := p.now()
	var errs []error
	for _, id := range ids {
		t, ok := tables[id]
		if !ok {
			continue
		}
		from := p.lowWater(id, begin)
		high := from
		_, err := t.RowsAfter(ctx, id, prefix(id), from, sinkFunc(func(r *ledger.Record) error {
			p.keep(r)
			high = max(high, r.Seq)
			return nil
		}))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.mark(id, p.now(), high) // when the read ended: every row it saw had its seq by then
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(errs) > 0 {
		p.failed++
		return errors.Join(errs...)
	}
	p.done++
	return nil
}

// lowWater is the seq a pass starting at begin reads tenant's rows after: the highest seq seen by the
// latest pass whose read ended at least Overlap earlier (-1, every row, when there is none). A row
// whose seq was taken at s and that committed by s+Overlap is read by the first pass after its
// commit: that pass's low water was seen by a read that ended before s, and seqs grow with time.
func (p *Passes) lowWater(tenant string, begin time.Time) int64 {
	overlap := p.Overlap
	if overlap == 0 {
		overlap = DefaultOverlap
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	from := int64(-1)
	ms := p.marks[tenant]
	keep := 0
	for i, m := range ms {
		if m.at.After(begin.Add(-overlap)) {
			break
		}
		from, keep = m.max, i
	}
	if len(ms) > 0 {
		p.marks[tenant] = ms[keep:] // older marks can no longer be the low water
	}
	return from
}

func (p *Passes) mark(tenant string, at time.Time, high int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.marks == nil {
		p.marks = map[string][]mark{}
	}
	if ms := p.marks[tenant]; len(ms) > 0 {
		high = max(high, ms[len(ms)-1].max)
	}
	p.marks[tenant] = append(p.marks[tenant], mark{at: at, max: high})
}

func (p *Passes) keep(r *ledger.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rows == nil {
		p.rows = map[rowKey]ledger.Record{}
	}
	p.rows[rowKey{r.Tenant, r.Seq}] = *r
}

// Counts returns the passes completed and the passes in which some tenant could not be read.
func (p *Passes) Counts() (done, failed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done, p.failed
}

// Final wraps the final audit's sink: it notes each row the final audit writes, for Absent.
func (p *Passes) Final(sink ledger.Sink) ledger.Sink {
	return sinkFunc(func(r *ledger.Record) error {
		if r.K == ledger.KindPersisted {
			p.mu.Lock()
			if p.final == nil {
				p.final = map[rowKey]bool{}
			}
			p.final[rowKey{r.Tenant, r.Seq}] = true
			p.mu.Unlock()
		}
		return sink.Write(r)
	})
}

// Absent writes, in (tenant, seq) order, a persisted record with absent set for every row a pass
// saw that the final audit (through Final) did not write, and returns how many.
func (p *Passes) Absent(sink ledger.Sink) (int, error) {
	p.mu.Lock()
	var out []ledger.Record
	for k, r := range p.rows {
		if !p.final[k] {
			r.Absent = true
			out = append(out, r)
		}
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(a, b ledger.Record) int {
		return cmp.Or(cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.Seq, b.Seq))
	})
	for i := range out {
		if err := sink.Write(&out[i]); err != nil {
			return i, err
		}
	}
	return len(out), nil
}

// sinkFunc adapts a function to ledger.Sink.
type sinkFunc func(*ledger.Record) error

func (f sinkFunc) Write(r *ledger.Record) error { return f(r) }
