package verifier

import (
	"encoding/binary"
	"slices"
)

// rowStore keeps one tenant's audit rows as a byte stream in fixed-size chunks (so growing it never
// copies the rows or leaves the old copy as garbage), each row as the differences to the previous
// row's in storage order, in varints: its mutation id's (with its op and whether it has a persisted
// time in the low bits), its seq's and its persisted time's (to the previous known one). An audit
// lists rows in seq order with ids and times close to the previous row's, so a row takes a few bytes.
// Differences are taken modulo 2^64 and added back the same way, so every value is exact. Rows are
// read in order (each), which is how every check reads them.
type rowStore struct {
	chunks  [][]byte
	n       int
	lastID  int32 // the last row's id (the next row's base)
	lastSeq int64 // the last row's seq
	lastPT  int64 // the persisted time of the last row that had one
	inOrder bool  // appended in strictly increasing seq order so far
}

const (
	rowChunkBits = 16 // a chunk's bytes, log2
	// maxRowID is the largest mutation id a row can name; the index refuses more mutations than that
	// (over a billion, some 40 GB of entries).
	maxRowID = 1<<30 - 1
	rowHasPT = 1 // in a row's first varint: a persisted time follows
)

// zigzag maps a difference to an unsigned varint's value, small either side of 0; unzigzag inverts it.
func zigzag(d int64) uint64   { return uint64(d<<1) ^ uint64(d>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

func (s *rowStore) add(row auditRow) {
	if s.n == 0 {
		s.inOrder = true
	} else if row.seq <= s.lastSeq {
		s.inOrder = false
	}
	var b [3 * binary.MaxVarintLen64]byte
	hdr := zigzag(int64(row.id)-int64(s.lastID))<<3 | uint64(row.op&3)<<1
	if row.persistedT != noTime {
		hdr |= rowHasPT
	}
	rec := binary.AppendUvarint(b[:0], hdr)
	rec = binary.AppendUvarint(rec, zigzag(int64(uint64(row.seq)-uint64(s.lastSeq))))
	if row.persistedT != noTime {
		rec = binary.AppendUvarint(rec, zigzag(int64(uint64(row.persistedT)-uint64(s.lastPT))))
		s.lastPT = row.persistedT
	}
	s.lastID, s.lastSeq = row.id, row.seq
	if len(s.chunks) == 0 || len(s.chunks[len(s.chunks)-1])+len(rec) > 1<<rowChunkBits {
		s.chunks = append(s.chunks, make([]byte, 0, 1<<rowChunkBits))
	}
	c := &s.chunks[len(s.chunks)-1]
	*c = append(*c, rec...)
	s.n++
}

// each calls fn with every row in storage order until it returns false.
func (s *rowStore) each(fn func(row auditRow) bool) {
	var id int32
	var seq, pt int64
	for _, c := range s.chunks {
		for len(c) > 0 {
			hdr, n := uvarint(c)
			c = c[n:]
			d, n := uvarint(c)
			c = c[n:]
			id = int32(int64(id) + unzigzag(hdr>>3))
			seq = int64(uint64(seq) + uint64(unzigzag(d)))
			row := auditRow{seq: seq, id: id, op: opClass(hdr >> 1 & 3), persistedT: noTime}
			if hdr&rowHasPT != 0 {
				d, n := uvarint(c)
				c = c[n:]
				pt = int64(uint64(pt) + uint64(unzigzag(d)))
				row.persistedT = pt
			}
			if !fn(row) {
				return
			}
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
