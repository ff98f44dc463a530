package verifier

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"strings"
)

// mutTable stores the interned (tenant, path) entries in fixed-size chunks, so growing it never copies
// millions of entries (or doubles memory while it does) and pointers into it stay valid. Entries hold
// no Go pointers (the GC never scans them): each entry's path and mid live in a byte arena (names),
// the path split into its directory, interned once (all of a run's paths share a few), and its last
// element; a mid equal to that last element (as the load driver writes them) costs one byte.
//
// Lookups go through an open-addressing index of 4-byte slots, at most three quarters full: each
// holds the entry's id+1 in its low idBits bits (log2 of the index's size, enough for any id it can
// hold) and the top bits of the key's 64-bit hash as a tag in the rest. A probe that meets the tag
// compares the key kept in the entry and the arena, so two keys with one hash (or one tag) are both
// found exactly.
type mutTable struct {
	chunks [][]mutation
	n      int32
	slots  []uint32 // tag<<idBits | id+1; 0 is empty; len is a power of two
	idBits uint
	seed   maphash.Seed
	// recent is a direct-mapped cache in front of slots: events arrive shortly after (or before)
	// their mutation, so most lookups hit a small, cache-resident table instead of a huge index.
	recent []recentEntry

	tenants *[]string // the index's tenant ids, by the entries' tenant index
	names   arena
	dirIDs  map[string]uint32
	dirs    []string // dirs[0] = "": a path kept whole (no '/', or more than maxDirs directories)
	keybuf  []byte
	recbuf  []byte
	esc     map[*mutation]*escaped // values that do not fit an entry's compact fields
	// consOf lists each tenant's consumers by ordinal (mutation.evCons); statuses the HTTP statuses
	// by code (mutation.kind), statuses[0] = 0 (none).
	consOf   map[int32][]int32
	statuses []int16
}

type recentEntry struct {
	h  uint64
	id int32
}

const recentBits = 16

const chunkBits = 16

// minSlots is the index's first size (16 KiB): small ledgers stay small.
const (
	minSlotBits = 12
	minSlots    = 1 << minSlotBits
)

// maxDirs bounds the interned directories: paths of further directories are kept whole, so a ledger
// of paths in distinct directories cannot grow the directory table without bound.
const maxDirs = 1 << 16

// Mid forms of a name record (the byte after the path's last element).
const (
	midNone byte = iota // no mid yet ("")
	midBase             // mid == the path's last element
	midOwn              // uvarint length and the mid's bytes follow
)

func newMutTable(tenants *[]string) *mutTable {
	return &mutTable{slots: make([]uint32, minSlots), idBits: minSlotBits, seed: maphash.MakeSeed(), recent: make([]recentEntry, 1<<recentBits),
		tenants: tenants, dirIDs: map[string]uint32{"": 0}, dirs: []string{""}, statuses: []int16{0}}
}

func (t *mutTable) len() int { return int(t.n) }

func (t *mutTable) at(id int32) *mutation { return &t.chunks[id>>chunkBits][id&(1<<chunkBits-1)] }

// find returns the id of (tenant, path), or -1, and the key's hash (for add).
func (t *mutTable) find(tenant, path string) (int32, uint64) {
	t.keybuf = append(append(append(t.keybuf[:0], tenant...), 0), path...)
	h := maphash.Bytes(t.seed, t.keybuf)
	return t.findHashed(tenant, path, h), h
}

// findHashed is find for a key whose hash is h.
func (t *mutTable) findHashed(tenant, path string, h uint64) int32 {
	slot := &t.recent[h&(1<<recentBits-1)]
	if slot.h == h && slot.id > 0 && t.equal(slot.id-1, tenant, path) {
		return slot.id - 1
	}
	mask, tag, idMask := uint64(len(t.slots)-1), t.tag(h), uint32(len(t.slots)-1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if s&^idMask == tag {
			if id := int32(s&idMask) - 1; t.equal(id, tenant, path) {
				*slot = recentEntry{h: h, id: id + 1} // id+1: the zero entry means empty
				return id
			}
		}
	}
}

// equal reports whether entry id is (tenant, path).
func (t *mutTable) equal(id int32, tenant, path string) bool {
	m := t.at(id)
	if (*t.tenants)[t.tenantOf(m)] != tenant {
		return false
	}
	dir, base, _ := t.name(m)
	return len(path) == len(dir)+len(base) && path[:len(dir)] == dir && path[len(dir):] == string(base)
}

// add appends a new entry for (tenant, path) (which find did not know; h is the hash find returned;
// ti is tenant's index) and returns its id.
func (t *mutTable) add(tenant string, ti int32, path string, h uint64, m mutation) int32 {
	id := t.n
	if int(id>>chunkBits) == len(t.chunks) {
		t.chunks = append(t.chunks, make([]mutation, 0, 1<<chunkBits))
	}
	m.name = t.addName(path, midNone, "")
	c := &t.chunks[id>>chunkBits]
	*c = append(*c, m)
	t.setTenant(&(*c)[len(*c)-1], ti)
	t.n++
	if int(t.n)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.place(h, id)
	t.recent[h&(1<<recentBits-1)] = recentEntry{h: h, id: id + 1}
	_ = tenant // the key's tenant is ti; equal and grow read its name from t.tenants
	return id
}

// addName stores path (split into its interned directory and last element) and the mid form in the
// arena and returns the record's reference.
func (t *mutTable) addName(path string, form byte, mid string) uint32 {
	dir, base := "", path
	if i := lastSlash(path); i >= 0 {
		d, ok := t.dirIDs[path[:i+1]]
		if !ok && len(t.dirs) < maxDirs {
			d = uint32(len(t.dirs))
			dir := strings.Clone(path[:i+1]) // path may be a record's lent string
			t.dirs = append(t.dirs, dir)
			t.dirIDs[dir] = d
			ok = true
		}
		if ok {
			dir, base = t.dirs[d], path[i+1:]
			t.recbuf = binary.AppendUvarint(t.recbuf[:0], uint64(d))
		}
	}
	if dir == "" {
		t.recbuf = append(t.recbuf[:0], 0)
	}
	t.recbuf = binary.AppendUvarint(t.recbuf, uint64(len(base)))
	t.recbuf = append(t.recbuf, base...)
	t.recbuf = append(t.recbuf, form)
	if form == midOwn {
		t.recbuf = binary.AppendUvarint(t.recbuf, uint64(len(mid)))
		t.recbuf = append(t.recbuf, mid...)
	}
	return t.names.add(t.recbuf)
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// name decodes m's arena record: the path's directory and last element, and where the mid form byte
// is (in rec: the record from there on).
func (t *mutTable) name(m *mutation) (dir string, base []byte, rec []byte) {
	rec = t.names.at(m.name)
	d, n := binary.Uvarint(rec)
	rec = rec[n:]
	l, n := binary.Uvarint(rec)
	rec = rec[n:]
	return t.dirs[d], rec[:l], rec[l:]
}

// path returns m's path.
func (t *mutTable) path(m *mutation) string {
	dir, base, _ := t.name(m)
	return dir + string(base)
}

// mid returns m's mid ("" until its mut record arrived).
func (t *mutTable) mid(m *mutation) string {
	_, base, rec := t.name(m)
	switch rec[0] {
	case midBase:
		return string(base)
	case midOwn:
		l, n := binary.Uvarint(rec[1:])
		return string(rec[1+n : 1+n+int(l)])
	}
	return ""
}

// setMid records m's mid: in place when it is empty or equal to the path's last element, else in a
// new arena record (a mid that differs from the path is the rare case).
func (t *mutTable) setMid(m *mutation, mid string) {
	_, base, rec := t.name(m)
	switch {
	case mid == "":
		rec[0] = midNone
	case mid == string(base):
		rec[0] = midBase
	case t.mid(m) != mid:
		m.name = t.addName(t.path(m), midOwn, mid)
	}
}

// place puts id, whose key hashes to h, in the first free slot of its probe sequence.
func (t *mutTable) place(h uint64, id int32) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = t.tag(h) | uint32(id+1)
}

// tag is the part of a slot that h decides: the hash's top 32-idBits bits, in the slot's top bits.
func (t *mutTable) tag(h uint64) uint32 { return uint32(h>>32) >> t.idBits << t.idBits }

// grow doubles the index and places every entry but the newest (add places it) again.
func (t *mutTable) grow() {
	t.slots = make([]uint32, 2*len(t.slots))
	t.idBits++
	for id := range t.n - 1 {
		m := t.at(id)
		dir, base, _ := t.name(m)
		t.keybuf = append(append(append(append(t.keybuf[:0], (*t.tenants)[t.tenantOf(m)]...), 0), dir...), base...)
		t.place(maphash.Bytes(t.seed, t.keybuf), id)
	}
}

// arena is an append-only store of small byte records in 1 MiB chunks, referred to by 32-bit
// references; it holds no Go pointers besides its chunk list. A record larger than a chunk, or any
// record past 2 GiB of chunks, is kept on its own (big) so that no input is refused.
type arena struct {
	chunks [][]byte
	big    [][]byte
}

const (
	arenaChunkBits = 20
	arenaBig       = 1 << 31 // a reference with this bit is an index into big
	maxArenaChunks = arenaBig >> arenaChunkBits
)

func (a *arena) add(rec []byte) uint32 {
	if len(rec) > 1<<arenaChunkBits || (len(a.chunks) == maxArenaChunks && len(a.chunks[len(a.chunks)-1])+len(rec) > 1<<arenaChunkBits) {
		a.big = append(a.big, bytes.Clone(rec))
		return arenaBig | uint32(len(a.big)-1)
	}
	if len(a.chunks) == 0 || len(a.chunks[len(a.chunks)-1])+len(rec) > 1<<arenaChunkBits {
		a.chunks = append(a.chunks, make([]byte, 0, 1<<arenaChunkBits))
	}
	c := &a.chunks[len(a.chunks)-1]
	off := len(*c)
	*c = append(*c, rec...)
	return uint32(len(a.chunks)-1)<<arenaChunkBits | uint32(off)
}

// at returns the bytes from record ref to the end of its chunk (the record's encoding says where it
// ends).
func (a *arena) at(ref uint32) []byte {
	if ref&arenaBig != 0 {
		return a.big[ref&^arenaBig]
	}
	return a.chunks[ref>>arenaChunkBits][ref&(1<<arenaChunkBits-1):]
}

// Compact times and seqs. A value that does not fit its 32-bit field is kept in the side table esc,
// keyed by the entry (entries never move); in a ledger from seqgate that is a mutation whose ack took
// longer than 2.1 s after its send, or whose send was that late, or a seq of 2^32-1 or more.
const (
	escDelta         = math.MinInt32 // dSent, dIntended: see esc
	evSeqNone uint32 = 0             // evSeq: no delivery yet (noTime)
	evSeqEsc  uint32 = math.MaxUint32
)

type escaped struct {
	sent, intended, evSeq int64
	pod, tenant, evCons   int32
	evN                   uint16
	status                int16
}

// podEsc in mutation.pod: the pod's index does not fit 16 bits and is in the side table.
const podEsc = math.MaxUint16

// setPod records the index of the pod that acked m; a run of 65,535 pods or more keeps the larger
// indices in the side table, so that an entry stays small and no index wraps onto another pod.
func (t *mutTable) setPod(m *mutation, pod int32) {
	if pod >= 0 && pod < podEsc {
		m.pod = uint16(pod)
		return
	}
	m.pod = podEsc
	t.escape(m).pod = pod
}

// pod returns the index of the pod that acked m (0: unknown).
func (t *mutTable) pod(m *mutation) int32 {
	if m.pod == podEsc {
		return t.esc[m].pod
	}
	return int32(m.pod)
}

// delta32 returns a-b when it is exact and fits an int32 other than escDelta.
func delta32(a, b int64) (int32, bool) {
	d := a - b
	if (a^b) < 0 && (a^d) < 0 { // the subtraction overflowed
		return 0, false
	}
	if d <= escDelta || d > math.MaxInt32 {
		return 0, false
	}
	return int32(d), true
}

func (t *mutTable) escape(m *mutation) *escaped {
	if t.esc == nil {
		t.esc = map[*mutation]*escaped{}
	}
	e, ok := t.esc[m]
	if !ok {
		e = &escaped{}
		t.esc[m] = e
	}
	return e
}

// setTimes records a mut record's t, intended_t and done_t in m.
func (t *mutTable) setTimes(m *mutation, sent, intended, done int64) {
	m.doneT = done
	var ok bool
	if m.dSent, ok = delta32(done, sent); !ok {
		m.dSent = escDelta
		t.escape(m).sent = sent
	}
	if m.dIntended, ok = delta32(sent, intended); !ok {
		m.dIntended = escDelta
		t.escape(m).intended = intended
	}
}

// sent returns m's send time (noTime until its mut record arrived: dSent 0 and doneT noTime).
func (t *mutTable) sent(m *mutation) int64 {
	if m.dSent == escDelta {
		return t.esc[m].sent
	}
	return m.doneT - int64(m.dSent)
}

// intended returns m's intended_t.
func (t *mutTable) intended(m *mutation) int64 {
	if m.dIntended == escDelta {
		return t.esc[m].intended
	}
	return t.sent(m) - int64(m.dIntended)
}

// evSeq returns the seq of m's first delivery, noTime when it has none.
func (t *mutTable) evSeq(m *mutation) int64 {
	switch m.evSeq {
	case evSeqNone:
		return noTime
	case evSeqEsc:
		return t.esc[m].evSeq
	}
	return int64(m.evSeq) - 1
}

func (t *mutTable) setEvSeq(m *mutation, seq int64) {
	if seq >= 0 && seq < int64(evSeqEsc)-1 {
		m.evSeq = uint32(seq + 1)
		return
	}
	m.evSeq = evSeqEsc
	t.escape(m).evSeq = seq
}
