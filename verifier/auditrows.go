package verifier

import (
	"math"
	"slices"
)

// rowStore keeps one tenant's audit rows in 12 bytes each, in fixed-size chunks (so growing it never
// copies the rows or leaves the old copy as garbage): the mutation id and op in one word, and the seq
// and the persisted time each as the difference to the previous row's (the previous known time) in
// storage order. Rows are read in order (each), which is how every check reads them; a difference
// that does not fit 32 bits is kept in a side table, so every value is exact.
type rowStore struct {
	chunks  [][]packedRow
	n       int
	lastSeq int64         // the last row's seq (the next row's base)
	lastPT  int64         // the persisted time of the last row that had one (the next row's base)
	escSeq  map[int]int64 // row index -> seq, when its difference does not fit
	escPT   map[int]int64 // row index -> persisted time, when its difference does not fit
	inOrder bool          // appended in strictly increasing seq order so far
}

type packedRow struct {
	dSeq int32  // seq minus the previous row's; ptEsc
	idop uint32 // id<<2 | op
	dPT  int32  // persisted time minus the previous known one; ptNone, ptEsc
}

const (
	rowChunkBits = 14
	ptEsc        = math.MinInt32     // see escSeq, escPT
	ptNone       = math.MinInt32 + 1 // persisted time unknown (noTime)
	// maxRowID is the largest mutation id a row can name (two bits of the word hold the op); the
	// index refuses more mutations than that (over a billion, some 40 GB of entries).
	maxRowID = 1<<30 - 1
)

func (s *rowStore) add(row auditRow) {
	if s.n == 0 {
		s.inOrder = true
	} else if row.seq <= s.lastSeq {
		s.inOrder = false
	}
	if s.n>>rowChunkBits == len(s.chunks) {
		s.chunks = append(s.chunks, make([]packedRow, 0, 1<<rowChunkBits))
	}
	p := packedRow{idop: uint32(row.id)<<2 | uint32(row.op)}
	if d, ok := delta32(row.seq, s.lastSeq); ok {
		p.dSeq = d
	} else {
		p.dSeq = ptEsc
		if s.escSeq == nil {
			s.escSeq = map[int]int64{}
		}
		s.escSeq[s.n] = row.seq
	}
	s.lastSeq = row.seq
	switch d, ok := delta32(row.persistedT, s.lastPT); {
	case row.persistedT == noTime:
		p.dPT = ptNone
	case ok && d != ptNone:
		p.dPT = d
		s.lastPT = row.persistedT
	default:
		p.dPT = ptEsc
		if s.escPT == nil {
			s.escPT = map[int]int64{}
		}
		s.escPT[s.n] = row.persistedT
		s.lastPT = row.persistedT
	}
	c := &s.chunks[len(s.chunks)-1]
	*c = append(*c, p)
	s.n++
}

func (s *rowStore) at(i int) *packedRow { return &s.chunks[i>>rowChunkBits][i&(1<<rowChunkBits-1)] }

// each calls fn with every row in storage order until it returns false.
func (s *rowStore) each(fn func(row auditRow) bool) {
	var last, seq int64
	for i := range s.n {
		p := s.at(i)
		if p.dSeq == ptEsc {
			seq = s.escSeq[i]
		} else {
			seq += int64(p.dSeq)
		}
		row := auditRow{seq: seq, id: int32(p.idop >> 2), op: opClass(p.idop & 3), persistedT: noTime}
		switch p.dPT {
		case ptNone:
		case ptEsc:
			row.persistedT = s.escPT[i]
			last = row.persistedT
		default:
			row.persistedT = last + int64(p.dPT)
			last = row.persistedT
		}
		if !fn(row) {
			return
		}
	}
}

// sort orders the rows by seq. Rows that came in increasing order, as an audit lists them, are left
// as they are; others are unpacked, sorted and stored again (for the moment of the sort, 24 bytes a
// row of this tenant).
func (s *rowStore) sort() {
	if s.inOrder || s.n == 0 {
		return
	}
	rows := make([]auditRow, 0, s.n)
	s.each(func(row auditRow) bool {
		rows = append(rows, row)
		return true
	})
	sortRows(rows)
	*s = rowStore{}
	for _, row := range rows {
		s.add(row)
	}
}

// sortRows orders audit rows by seq.
func sortRows(rows []auditRow) {
	slices.SortFunc(rows, func(a, b auditRow) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
}
