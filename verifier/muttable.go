package verifier

import "hash/maphash"

// mutTable stores the interned (tenant, path) entries in fixed-size chunks, so growing it never copies
// millions of entries (or doubles memory while it does) and pointers into it stay valid. Lookups go
// through a 64-bit hash of the key; the key itself is kept in the entry and compared, and the rare
// colliding key goes to a small exact map, so matching stays exact.
type mutTable struct {
	chunks   [][]mutation
	n        int32
	byHash   map[uint64]int32
	overflow map[string]int32
	seed     maphash.Seed
	// recent is a direct-mapped cache in front of byHash: events arrive shortly after (or before)
	// their mutation, so most lookups hit a small, cache-resident table instead of a huge map.
	recent []recentEntry
}

type recentEntry struct {
	h  uint64
	id int32
}

const recentBits = 16

const chunkBits = 16

func newMutTable() *mutTable {
	return &mutTable{byHash: map[uint64]int32{}, overflow: map[string]int32{}, seed: maphash.MakeSeed(),
		recent: make([]recentEntry, 1<<recentBits)}
}

func (t *mutTable) len() int { return int(t.n) }

func (t *mutTable) at(id int32) *mutation { return &t.chunks[id>>chunkBits][id&(1<<chunkBits-1)] }

// find returns the id of key, or -1.
func (t *mutTable) find(key []byte) int32 {
	h := maphash.Bytes(t.seed, key)
	slot := &t.recent[h&(1<<recentBits-1)]
	if slot.h == h && slot.id > 0 && t.at(slot.id-1).key == string(key) {
		return slot.id - 1
	}
	id, ok := t.byHash[h]
	if !ok {
		return -1
	}
	*slot = recentEntry{h: h, id: id + 1}
	if t.at(id).key == string(key) {
		return id
	}
	if id, ok := t.overflow[string(key)]; ok {
		return id
	}
	return -1
}

// add appends a new entry for key (which find did not know) and returns its id.
func (t *mutTable) add(key []byte, m mutation) int32 {
	id := t.n
	if int(id>>chunkBits) == len(t.chunks) {
		t.chunks = append(t.chunks, make([]mutation, 0, 1<<chunkBits))
	}
	m.key = string(key)
	c := &t.chunks[id>>chunkBits]
	*c = append(*c, m)
	t.n++
	h := maphash.Bytes(t.seed, key)
	if _, taken := t.byHash[h]; taken {
		t.overflow[m.key] = id
	} else {
		t.byHash[h] = id
	}
	t.recent[h&(1<<recentBits-1)] = recentEntry{h: h, id: id + 1} // id+1: the zero entry means empty
	return id
}
