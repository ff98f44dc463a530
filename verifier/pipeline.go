package verifier

import (
	"unsafe"

	"github.com/seqgate/seqgate/ledger"
)

// pipe reads a RecordSource on its own goroutine, in batches, so that decoding the ledger runs on one
// core while the checkers run on another: the verifier then takes about as long as the decoding
// alone. The records come out in the source's order, one at a time, exactly as the source gave them;
// the verdict cannot tell the difference.
//
// A batch holds copies of the records; their Path and MID, which a ledger.Reader that lends strings
// (BorrowStrings) gives over its line buffer, are copied into the batch's arena, since that buffer is
// overwritten while the checkers are still on the batch. Those strings stay valid until the batch is
// handed back for reuse, longer than the lending contract promises (until the next record); an arena
// is reused only once every record over it is done with.
type pipe struct {
	full chan *batch // batches read, in order
	free chan *batch // batches the reader may fill again
	stop chan struct{}
	done chan struct{} // closed when the reading goroutine has returned
	cur  *batch
	i    int
}

// batch is pipeRecords records read in a row, and the error (io.EOF at the end) that followed them.
type batch struct {
	recs  []ledger.Record
	n     int
	arena []byte
	err   error
}

const (
	pipeRecords = 512 // records per batch: large enough that handing one over costs nothing per record
	pipeBatches = 4   // batches in flight: the reader may be this far ahead of the checkers
)

// newPipe starts reading src. The caller must call close when done, also after an error.
func newPipe(src RecordSource) *pipe {
	p := &pipe{full: make(chan *batch, pipeBatches), free: make(chan *batch, pipeBatches),
		stop: make(chan struct{}), done: make(chan struct{})}
	for range pipeBatches {
		p.free <- &batch{recs: make([]ledger.Record, pipeRecords)}
	}
	go p.read(src)
	return p
}

func (p *pipe) read(src RecordSource) {
	defer close(p.done)
	into, _ := src.(intoSource)
	for {
		var b *batch
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		b.n, b.arena, b.err = 0, b.arena[:0], nil
		for b.n < len(b.recs) && b.err == nil {
			dst := &b.recs[b.n]
			var r *ledger.Record
			var err error
			if into != nil {
				r, err = into.NextInto(dst)
			} else {
				r, err = src.Next()
			}
			if err != nil {
				b.err = err
				break
			}
			if r != dst {
				*dst = *r
			}
			// The source may lend Path and MID only until its next record: copied now.
			b.recs[b.n].Path, b.recs[b.n].MID = b.keep(r.Path), b.keep(r.MID)
			b.n++
		}
		select {
		case p.full <- b:
		case <-p.stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// intoSource is a RecordSource that can decode a record straight into a batch's slot
// (ledger.Reader.NextInto), which saves copying every record once.
type intoSource interface {
	NextInto(dst *ledger.Record) (*ledger.Record, error)
}

// keep copies s, a string the source may have lent, into the batch's arena. A full arena is not
// grown but replaced, so the strings already over it stay as they are.
func (b *batch) keep(s string) string {
	if s == "" {
		return ""
	}
	if cap(b.arena)-len(b.arena) < len(s) {
		b.arena = make([]byte, 0, max(len(s), arenaBytes))
	}
	start := len(b.arena)
	b.arena = append(b.arena, s...)
	return unsafe.String(&b.arena[start], len(s))
}

// arenaBytes is the size of a batch's arena: the paths and mids of a batch of typical records.
const arenaBytes = 64 << 10

// Next returns the next record, as the source returned it, and then the source's error.
func (p *pipe) Next() (*ledger.Record, error) {
	for p.cur == nil || p.i >= p.cur.n {
		if p.cur != nil {
			if p.cur.err != nil {
				return nil, p.cur.err
			}
			p.free <- p.cur // the checkers are done with its records: the reader may refill it
		}
		p.cur, p.i = <-p.full, 0
	}
	p.i++
	return &p.cur.recs[p.i-1], nil
}

// close stops the reading goroutine and waits for it to return.
func (p *pipe) close() {
	close(p.stop)
	<-p.done
}
