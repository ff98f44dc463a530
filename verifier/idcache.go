package verifier

import "unsafe"

// idCache remembers the index of a few ids (tenants, consumers, connections) by the address and
// length of their bytes, in front of the maps that hold them all. The ledger reader interns ids, so
// a record's id is most often the very string an earlier record had: a hit costs two comparisons
// instead of hashing the id. A Go string's bytes never change, and the cache holds a pointer to
// them (so they are not freed and reused while it does): the same address and length are the same
// id. Ids other than a record's Path and MID are never lent (RecordSource), so this holds for them.
type idCache struct {
	e [idCacheSize]idCacheEntry
}

type idCacheEntry struct {
	p   *byte
	n   int
	idx int32
}

const idCacheSize = 64 // a power of two

func (c *idCache) slot(s string) *idCacheEntry {
	return &c.e[uintptr(unsafe.Pointer(unsafe.StringData(s)))>>4&(idCacheSize-1)]
}

// get returns the index remembered for s.
func (c *idCache) get(s string) (int32, bool) {
	if len(s) == 0 {
		return 0, false
	}
	if e := c.slot(s); e.p == unsafe.StringData(s) && e.n == len(s) {
		return e.idx, true
	}
	return 0, false
}

// find returns the index of s: remembered, else from m (then remembered).
func (c *idCache) find(s string, m map[string]int32) (int32, bool) {
	if i, ok := c.get(s); ok {
		return i, true
	}
	i, ok := m[s]
	if ok {
		c.put(s, i)
	}
	return i, ok
}

// put remembers that s has index idx (which must never change).
func (c *idCache) put(s string, idx int32) {
	if len(s) > 0 {
		*c.slot(s) = idCacheEntry{p: unsafe.StringData(s), n: len(s), idx: idx}
	}
}
