package verifier

import (
	"encoding/binary"
	"fmt"
)

// intendedLog keeps the mutations' intended_t, for which the entry has no room: only two things read
// it, both at the end, and for most runs only about a few mutations. The loss check names it in a
// lost mutation's witness; the windows (when a threshold names one) place every mutation by it.
//
// With keepAll (the windows), every entry's t minus intended_t is kept, by id, as an int32 (escDelta:
// the exact value is in the table's side table), 4 bytes an entry as before. Otherwise only the
// mutations of W that may still be lost are kept: a log of records, each the id's difference to
// the previous record's and t minus intended_t (modulo 2^64, so exact for any two times), both as
// zigzag varints; when it fills, the records of mutations that have since persisted (an event or
// an audit row showed them) are dropped. What it holds is then bounded by the mutations not yet
// delivered, a few bytes each.
type intendedLog struct {
	keepAll bool
	all     [][]int32 // keepAll: by id, in chunks like the entries; a missing chunk holds zeros

	log    []byte
	lastID int32 // the id of the log's last record
	limit  int   // the log's length at which it is compacted
	got    map[int32]int64
	gotLen int // len(log) when got was made from it (-1: never)
}

// minIntendedLog is the log's first compaction limit.
const minIntendedLog = 64 << 10

func (l *intendedLog) set(t *mutTable, id int32, m *mutation, sent, intended int64) {
	if l.keepAll {
		for int(id>>chunkBits) >= len(l.all) {
			l.all = append(l.all, nil)
		}
		c := &l.all[id>>chunkBits]
		if *c == nil {
			*c = make([]int32, 1<<chunkBits)
		}
		d, ok := delta32(sent, intended)
		if !ok {
			d = escDelta
			t.escape(m).intended = intended
		}
		(*c)[id&(1<<chunkBits-1)] = d
		return
	}
	if !m.inW() || m.persisted() {
		return // never lost, so never a lost witness
	}
	if l.limit == 0 {
		l.limit, l.gotLen = minIntendedLog, -1
	}
	if len(l.log) >= l.limit {
		l.compact(t)
	}
	l.log = binary.AppendVarint(l.log, int64(id-l.lastID))
	l.log = binary.AppendVarint(l.log, int64(uint64(sent)-uint64(intended)))
	l.lastID = id
}

// compact drops the records of mutations that can no longer be lost, rewriting the log in place
// (a record never grows: the id differences it now spans were each at least a byte), and lets the
// log grow to twice what it kept.
func (l *intendedLog) compact(t *mutTable) {
	w, last := 0, int32(0)
	l.each(func(id int32, v int64) {
		if m := t.at(id); !m.inW() || m.persisted() {
			return
		}
		kept := binary.AppendVarint(l.log[:w], int64(id-last))
		kept = binary.AppendVarint(kept, v)
		w, last = len(kept), id
	})
	l.log, l.lastID = l.log[:w], last
	l.limit = max(minIntendedLog, 2*w)
	l.gotLen = -1
}

// each calls fn with every record of the log in order: its id and t minus intended_t. fn may
// rewrite the log up to the record it is given (compact), never past it.
func (l *intendedLog) each(fn func(id int32, v int64)) {
	prev := int32(0)
	for r := 0; r < len(l.log); {
		d, n := binary.Varint(l.log[r:])
		v, k := binary.Varint(l.log[r+n:])
		r += n + k
		prev += int32(d)
		fn(prev, v)
	}
}

// get returns the intended_t of entry id (see mutTable.intended).
func (l *intendedLog) get(t *mutTable, id int32) int64 {
	m := t.at(id)
	sent := t.sent(m)
	if l.keepAll {
		var d int32
		if int(id>>chunkBits) < len(l.all) && l.all[id>>chunkBits] != nil {
			d = l.all[id>>chunkBits][id&(1<<chunkBits-1)]
		}
		if d == escDelta {
			return t.esc[m].intended
		}
		return sent - int64(d)
	}
	if l.gotLen != len(l.log) {
		l.got = map[int32]int64{}
		l.each(func(id int32, v int64) { l.got[id] = v }) // a later record of an id is its latest intended_t
		l.gotLen = len(l.log)
	}
	v, ok := l.got[id]
	if !ok {
		panic(fmt.Sprintf("verifier: intended_t of mutation %d asked for but not kept (it is kept for W's unpersisted mutations, or for all with windows)", id))
	}
	return int64(uint64(sent) - uint64(v))
}
