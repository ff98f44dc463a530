package verifier

import "hash/maphash"

// mutTable stores the interned (tenant, path) entries in fixed-size chunks, so growing it never copies
// millions of entries (or doubles memory while it does) and pointers into it stay valid. Lookups go
// through an open-addressing index of 8-byte slots (the high half of the key's 64-bit hash as a tag,
// and the entry's id), at most three quarters full: a probe that meets the tag compares the key kept
// in the entry, so two keys with one hash (or one tag) are both found exactly. It costs a third of
// what a Go map from hash to id did per entry, and a new key is hashed once and probed once.
type mutTable struct {
	chunks [][]mutation
	n      int32
	slots  []uint64 // tag<<32 | id+1; 0 is empty; len is a power of two
	seed   maphash.Seed
	// recent is a direct-mapped cache in front of slots: events arrive shortly after (or before)
	// their mutation, so most lookups hit a small, cache-resident table instead of a huge index.
	recent []recentEntry
}

type recentEntry struct {
	h  uint64
	id int32
}

const recentBits = 16

const chunkBits = 16

// minSlots is the index's first size (32 KiB): small ledgers stay small.
const minSlots = 1 << 12

func newMutTable() *mutTable {
	return &mutTable{slots: make([]uint64, minSlots), seed: maphash.MakeSeed(), recent: make([]recentEntry, 1<<recentBits)}
}

func (t *mutTable) len() int { return int(t.n) }

func (t *mutTable) at(id int32) *mutation { return &t.chunks[id>>chunkBits][id&(1<<chunkBits-1)] }

func (t *mutTable) hash(key []byte) uint64 { return maphash.Bytes(t.seed, key) }

// find returns the id of key, or -1, and key's hash (for add).
func (t *mutTable) find(key []byte) (int32, uint64) {
	h := t.hash(key)
	return t.findHashed(key, h), h
}

// findHashed is find for a key whose hash is h.
func (t *mutTable) findHashed(key []byte, h uint64) int32 {
	slot := &t.recent[h&(1<<recentBits-1)]
	if slot.h == h && slot.id > 0 && t.at(slot.id-1).key == string(key) {
		return slot.id - 1
	}
	mask, tag := uint64(len(t.slots)-1), h>>32
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if s>>32 == tag {
			if id := int32(uint32(s)) - 1; t.at(id).key == string(key) {
				*slot = recentEntry{h: h, id: id + 1} // id+1: the zero entry means empty
				return id
			}
		}
	}
}

// add appends a new entry for key (which find did not know; h is the hash find returned) and
// returns its id.
func (t *mutTable) add(key []byte, h uint64, m mutation) int32 {
	id := t.n
	if int(id>>chunkBits) == len(t.chunks) {
		t.chunks = append(t.chunks, make([]mutation, 0, 1<<chunkBits))
	}
	m.key = string(key)
	c := &t.chunks[id>>chunkBits]
	*c = append(*c, m)
	t.n++
	if int(t.n)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.place(h, id)
	t.recent[h&(1<<recentBits-1)] = recentEntry{h: h, id: id + 1}
	return id
}

// place puts id, whose key hashes to h, in the first free slot of its probe sequence.
func (t *mutTable) place(h uint64, id int32) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = h>>32<<32 | uint64(uint32(id+1))
}

// grow doubles the index and places every entry but the newest (add places it) again.
func (t *mutTable) grow() {
	t.slots = make([]uint64, 2*len(t.slots))
	for id := range t.n - 1 {
		t.place(maphash.String(t.seed, t.at(id).key), id)
	}
}
