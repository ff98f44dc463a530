package synth

import "github.com/seqgate/seqgate/ledger"

// queue holds records generated ahead of time until everything earlier has been generated: the
// ledger must come out in observation order (t; done_t for a mutation), but a mutation's records
// span its ack and every consumer's delivery. Ties keep generation order, so output is deterministic.
type queue struct {
	items []qitem
	n     uint64
	free  []*ledger.Record
}

type qitem struct {
	key int64
	n   uint64
	r   *ledger.Record
}

func (q *queue) less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	if a.key != b.key {
		return a.key < b.key
	}
	return a.n < b.n
}

// rec returns a zeroed record to fill and push.
func (q *queue) rec() *ledger.Record {
	if n := len(q.free); n > 0 {
		r := q.free[n-1]
		q.free = q.free[:n-1]
		return r
	}
	return new(ledger.Record)
}

func (q *queue) push(key int64, r *ledger.Record) {
	q.n++
	q.items = append(q.items, qitem{key: key, n: q.n, r: r})
	i := len(q.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

// popBefore removes and returns the earliest record if its key is < bound.
func (q *queue) popBefore(bound int64) *ledger.Record {
	if len(q.items) == 0 || q.items[0].key >= bound {
		return nil
	}
	top := q.items[0].r
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && q.less(l, m) {
			m = l
		}
		if r < last && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	return top
}

// release returns a written record for reuse.
func (q *queue) release(r *ledger.Record) {
	*r = ledger.Record{}
	q.free = append(q.free, r)
}
