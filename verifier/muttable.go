package verifier

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"strconv"
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
	// missSlot is where the last lookup that found nothing met a free slot (its key hashed to
	// missH), valid while missOK: no slot has been filled since.
	missH    uint64
	missSlot uint64
	missOK   bool

	tenants *[]string // the index's tenant ids, by the entries' tenant index
	names   arena
	dirIDs  map[string]uint32 // the interned stems of paths (addName)
	dirs    []string          // dirs[0] = "": a path kept whole (no '/', or more than maxDirs stems)
	// numBases holds a base for the numbers of each arena region's records (numBase).
	numBases []uint64
	keybuf   []byte
	recbuf   []byte
	restbuf  []byte
	esc      map[*mutation]*escaped // values that do not fit an entry's compact fields
	// intendeds keeps intended_t, which the entry has no room for (intended.go).
	intendeds intendedLog
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
func (t *mutTable) find(tenant, path string) (int32, uint64) { return t.findVia(tenant, path, true) }

// findVia is find that reads and fills the recent-lookup cache only when cached is set: a lookup
// that will seldom hit it (a mut record's path is new; persisted records come after the run) then
// costs no access to it and evicts nothing from it. The answer is the same either way.
func (t *mutTable) findVia(tenant, path string, cached bool) (int32, uint64) {
	t.keybuf = append(append(append(t.keybuf[:0], tenant...), 0), path...)
	h := maphash.Bytes(t.seed, t.keybuf)
	return t.findHashedVia(tenant, path, h, cached), h
}

// findHashed is find for a key whose hash is h.
func (t *mutTable) findHashed(tenant, path string, h uint64) int32 {
	return t.findHashedVia(tenant, path, h, true)
}

func (t *mutTable) findHashedVia(tenant, path string, h uint64, cached bool) int32 {
	slot := &t.recent[h&(1<<recentBits-1)]
	if cached && slot.h == h && slot.id > 0 && t.equal(slot.id-1, tenant, path) {
		return slot.id - 1
	}
	mask, tag, idMask := uint64(len(t.slots)-1), t.tag(h), uint32(len(t.slots)-1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			t.missH, t.missSlot, t.missOK = h, i, true // where add places this key, unless the index changes first
			return -1
		}
		if s&^idMask == tag {
			if id := int32(s&idMask) - 1; t.equal(id, tenant, path) {
				if cached {
					*slot = recentEntry{h: h, id: id + 1} // id+1: the zero entry means empty
				}
				return id
			}
		}
	}
}

// near returns the id of (tenant, path), tenant's index ti, when it is among the entries just after
// id (or a few before), else -1: a lookup that is likely to find its entry beside a known one reads
// entries that are in cache instead of the index's slots. Keys are unique, so a match is the entry.
func (t *mutTable) near(id int32, ti int32, tenant, path string) int32 {
	for i := id + 1; i <= id+nearAfter && i < t.n; i++ {
		if t.tenantOf(t.at(i)) == ti && t.equal(i, tenant, path) {
			return i
		}
	}
	for i := id; i >= max(id-nearBefore, 0) && i < t.n; i-- {
		if t.tenantOf(t.at(i)) == ti && t.equal(i, tenant, path) {
			return i
		}
	}
	return -1
}

// How far near looks after and before its id.
const (
	nearAfter  = 48
	nearBefore = 16
)

// equal reports whether entry id is (tenant, path).
func (t *mutTable) equal(id int32, tenant, path string) bool {
	m := t.at(id)
	if (*t.tenants)[t.tenantOf(m)] != tenant {
		return false
	}
	rec := t.names.at(m.name)
	h, n := uvarint(rec)
	n++ // the pod's byte
	v, k := uvarint(rec[n:])
	stem := t.dirs[h>>3]
	if len(path) < len(stem) || path[:len(stem)] != stem {
		return false
	}
	if h&nameNumeric != 0 { // compare the number, not its digits: no formatting on a probe
		got, ok := parseCanonical(path[len(stem):])
		return ok && got == t.number(m.name, v)
	}
	return path[len(stem):] == string(rec[n+k:n+k+int(v)])
}

// add appends a new entry for (tenant, path) (which find did not know; h is the hash find returned;
// ti is tenant's index) and returns its id.
func (t *mutTable) add(tenant string, ti int32, path string, h uint64, m mutation) int32 {
	m.name = t.addName(path, midNone, "", 0)
	return t.addEntry(tenant, ti, h, m)
}

// addMid is add for a new entry of blankEntry with its mid (what setMid would record).
func (t *mutTable) addMid(tenant string, ti int32, path string, h uint64, mid string) int32 {
	m := blankEntry
	switch {
	case mid == "":
		m.name = t.addName(path, midNone, "", 0)
	case mid == path[lastSlash(path)+1:]:
		m.name = t.addName(path, midBase, "", 0)
	default:
		m.name = t.addName(path, midOwn, mid, 0)
	}
	return t.addEntry(tenant, ti, h, m)
}

func (t *mutTable) addEntry(tenant string, ti int32, h uint64, m mutation) int32 {
	id := t.n
	if int(id>>chunkBits) == len(t.chunks) {
		t.chunks = append(t.chunks, make([]mutation, 0, 1<<chunkBits))
	}
	c := &t.chunks[id>>chunkBits]
	*c = append(*c, m)
	t.setTenant(&(*c)[len(*c)-1], ti)
	t.n++
	switch {
	case int(t.n)*4 > len(t.slots)*3:
		t.grow()
		t.place(h, id)
	case t.missOK && t.missH == h: // the lookup that did not find it stopped at the free slot
		t.slots[t.missSlot] = t.tag(h) | uint32(id+1)
		t.missOK = false
	default:
		t.place(h, id)
	}
	t.recent[h&(1<<recentBits-1)] = recentEntry{h: h, id: id + 1}
	_ = tenant // the key's tenant is ti; equal and grow read its name from t.tenants
	return id
}

// A name record in the arena: a uvarint header stem<<3 | numeric<<2 | mid form, then a byte of the
// acking pod's index (podEsc: in the side table; mutTable.pod), then the rest of the path after the stem (numeric: the number as a uvarint; else a uvarint length and the bytes),
// then, for midOwn, the mid (a uvarint length and its bytes). The stem is interned once (a run's
// paths share a few): the path up to its trailing number when the path ends in a canonical decimal
// (digits without a leading zero, "0" itself, within uint64: the load driver's "m1679580"), which
// is then kept as the number; else the path's directory (up to its last '/'), the last element
// kept as bytes; else (no '/', or more than maxDirs stems) stem 0, "", and the whole path as bytes.
// The mid form is in the header's low bits, so setMid can change it in place.
const (
	nameNumeric = 1 << 2
	nameFlags   = 3
)

// addName stores path, the mid form and the pod's byte in the arena and returns the record's
// reference. A number is stored as its difference to its region's base (numBase).
func (t *mutTable) addName(path string, form byte, mid string, pod byte) uint32 {
	stem, rest, num, numeric := uint32(0), path, uint64(0), false
	dirEnd := lastSlash(path) + 1
	if j := trailingNumber(path[dirEnd:]); j >= 0 {
		if n, ok := parseCanonical(path[dirEnd+j:]); ok {
			if d, ok := t.stemID(path[:dirEnd+j]); ok {
				stem, num, numeric = d, n, true
			}
		}
	}
	if !numeric && dirEnd > 0 {
		if d, ok := t.stemID(path[:dirEnd]); ok {
			stem, rest = d, path[dirEnd:]
		}
	}
	hdr := uint64(stem)<<3 | uint64(form)
	if numeric {
		hdr |= nameNumeric
	}
	t.recbuf = append(binary.AppendUvarint(t.recbuf[:0], hdr), pod)
	reserve := len(t.recbuf) + binary.MaxVarintLen64 // at least the record's length
	if !numeric {
		reserve += len(rest)
	}
	if form == midOwn {
		reserve += binary.MaxVarintLen64 + len(mid)
	}
	ref := t.names.where(reserve)
	if numeric {
		t.recbuf = binary.AppendUvarint(t.recbuf, zigzag(int64(num-t.numBase(ref, num))))
	} else {
		t.recbuf = binary.AppendUvarint(t.recbuf, uint64(len(rest)))
		t.recbuf = append(t.recbuf, rest...)
	}
	if form == midOwn {
		t.recbuf = binary.AppendUvarint(t.recbuf, uint64(len(mid)))
		t.recbuf = append(t.recbuf, mid...)
	}
	return t.names.add(t.recbuf, reserve)
}

// numBase returns the base of the numbers of the records that start in ref's region of the arena
// (numRegionBits of bytes): the number of the first numeric record there, which first sets it (the
// arena is written in order, so a region's records come together). A run's numbered paths are
// written in about the order of their numbers, so a record keeps a small difference, a byte or
// two, where the number itself takes three or four; every number is exact (modulo 2^64).
func (t *mutTable) numBase(ref uint32, num uint64) uint64 {
	if ref&arenaBig != 0 {
		return 0
	}
	i := int(ref >> numRegionBits)
	if i >= len(t.numBases) {
		t.numBases = append(t.numBases, make([]uint64, i+1-len(t.numBases))...)
		t.numBases[i] = num
	}
	return t.numBases[i]
}

// number returns the number of the numeric record ref, whose stored difference is v.
func (t *mutTable) number(ref uint32, v uint64) uint64 {
	base := uint64(0)
	if ref&arenaBig == 0 {
		base = t.numBases[ref>>numRegionBits]
	}
	return base + uint64(unzigzag(v))
}

// numRegionBits is log2 of the bytes of an arena region that shares a number base (numBase): some
// 40 records, 8 bytes of base for them.
const numRegionBits = 8

// stemID returns the interned id of stem, interning it while there are fewer than maxDirs.
func (t *mutTable) stemID(stem string) (uint32, bool) {
	d, ok := t.dirIDs[stem]
	if !ok && len(t.dirs) < maxDirs {
		d = uint32(len(t.dirs))
		stem = strings.Clone(stem) // path may be a record's lent string
		t.dirs = append(t.dirs, stem)
		t.dirIDs[stem] = d
		ok = true
	}
	return d, ok
}

// trailingNumber returns where the decimal digits that end s begin, -1 when s does not end in one.
func trailingNumber(s string) int {
	j := len(s)
	for j > 0 && s[j-1] >= '0' && s[j-1] <= '9' {
		j--
	}
	if j == len(s) {
		return -1
	}
	return j
}

// parseCanonical parses digits that strconv.FormatUint gives back unchanged: no leading zero (but
// "0"), no more than uint64 holds. Anything else ("007", "18446744073709551616", "1:") is refused.
func parseCanonical(digits string) (uint64, bool) {
	if len(digits) == 0 || len(digits) > 20 || digits[0] == '0' && len(digits) > 1 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(digits); i++ {
		d := uint64(digits[i]) - '0'
		if d > 9 || n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// uvarint is binary.Uvarint with the one-byte case inline (most of the arena's and rows' varints).
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// name decodes m's arena record: the path's stem and the rest of it (rest: in t.restbuf for a
// numeric record, valid until the next call), the record's header byte (the mid form's low bits)
// and what follows the path (the mid of a midOwn record).
func (t *mutTable) name(m *mutation) (stem string, rest []byte, hdr *byte, tail []byte) {
	rec := t.names.at(m.name)
	hdr = &rec[0]
	h, n := uvarint(rec)
	rec = rec[n+1:] // after the pod's byte
	v, n := uvarint(rec)
	rec = rec[n:]
	if h&nameNumeric != 0 {
		t.restbuf = strconv.AppendUint(t.restbuf[:0], t.number(m.name, v), 10)
		return t.dirs[h>>3], t.restbuf, hdr, rec
	}
	return t.dirs[h>>3], rec[:v], hdr, rec[v:]
}

// path returns m's path.
func (t *mutTable) path(m *mutation) string {
	stem, rest, _, _ := t.name(m)
	return stem + string(rest)
}

// mid returns m's mid ("" until its mut record arrived).
func (t *mutTable) mid(m *mutation) string {
	stem, rest, hdr, tail := t.name(m)
	switch *hdr & nameFlags {
	case midBase:
		return t.base(stem, rest)
	case midOwn:
		l, n := binary.Uvarint(tail)
		return string(tail[n : n+int(l)])
	}
	return ""
}

// base returns the last element of the path stem+rest.
func (t *mutTable) base(stem string, rest []byte) string {
	if i := bytes.LastIndexByte(rest, '/'); i >= 0 {
		return string(rest[i+1:])
	}
	return stem[lastSlash(stem)+1:] + string(rest)
}

// isBase reports whether mid is the last element of the path stem+rest (base without its copy).
func isBase(mid, stem string, rest []byte) bool {
	if i := bytes.LastIndexByte(rest, '/'); i >= 0 {
		return mid == string(rest[i+1:])
	}
	p := stem[lastSlash(stem)+1:]
	return len(mid) == len(p)+len(rest) && mid[:len(p)] == p && mid[len(p):] == string(rest)
}

// setMid records m's mid: in place when it is empty or equal to the path's last element, else in a
// new arena record (a mid that differs from the path is the rare case).
func (t *mutTable) setMid(m *mutation, mid string) {
	stem, rest, hdr, _ := t.name(m)
	switch {
	case mid == "":
		*hdr &^= nameFlags // midNone
	case isBase(mid, stem, rest):
		*hdr = *hdr&^nameFlags | midBase
	case t.mid(m) != mid:
		m.name = t.addName(t.path(m), midOwn, mid, *t.podByte(m))
	}
}

// place puts id, whose key hashes to h, in the first free slot of its probe sequence.
func (t *mutTable) place(h uint64, id int32) {
	t.missOK = false // that slot may be this one
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
	var hs [growRun]uint64
	for first := int32(0); first < t.n-1; first += growRun {
		k := min(growRun, t.n-1-first)
		for j := range k {
			m := t.at(first + j)
			stem, rest, _, _ := t.name(m)
			t.keybuf = append(append(append(append(t.keybuf[:0], (*t.tenants)[t.tenantOf(m)]...), 0), stem...), rest...)
			hs[j] = maphash.Bytes(t.seed, t.keybuf)
		}
		for j := range k {
			t.place(hs[j], first+j)
		}
	}
}

// growRun is how many entries grow hashes before it places them: the places' reads of slots far
// apart in a large index then overlap in the memory system instead of waiting one after another.
const growRun = 32

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

// where returns the reference add gives a record of at most reserve bytes.
func (a *arena) where(reserve int) uint32 {
	switch n := len(a.chunks); {
	case reserve > 1<<arenaChunkBits || (n == maxArenaChunks && len(a.chunks[n-1])+reserve > 1<<arenaChunkBits):
		return arenaBig | uint32(len(a.big))
	case n == 0 || len(a.chunks[n-1])+reserve > 1<<arenaChunkBits:
		return uint32(n) << arenaChunkBits
	default:
		return uint32(n-1)<<arenaChunkBits | uint32(len(a.chunks[n-1]))
	}
}

// add stores rec, of at most reserve bytes, and returns its reference (where's).
func (a *arena) add(rec []byte, reserve int) uint32 {
	ref := a.where(reserve)
	if ref&arenaBig != 0 {
		a.big = append(a.big, bytes.Clone(rec))
		return ref
	}
	if int(ref>>arenaChunkBits) == len(a.chunks) {
		a.chunks = append(a.chunks, make([]byte, 0, 1<<arenaChunkBits))
	}
	c := &a.chunks[len(a.chunks)-1]
	*c = append(*c, rec...)
	return ref
}

// at returns the bytes from record ref to the end of its chunk (the record's encoding says where it
// ends).
func (a *arena) at(ref uint32) []byte {
	if ref&arenaBig != 0 {
		return a.big[ref&^arenaBig]
	}
	return a.chunks[ref>>arenaChunkBits][ref&(1<<arenaChunkBits-1):]
}

// Compact times and seqs. A value that does not fit its field is kept in the side table esc, keyed
// by the entry (entries never move); in a ledger from seqgate that is a mutation whose ack took
// longer than 2.1 s after its send, a seq of 2^32-1 or more, or a done_t 39 hours or more from the
// run's start.
const (
	escDelta         = math.MinInt32 // dSent, and intended_t's difference in allIntended: see esc
	evSeqNone uint32 = 0             // evSeq: no delivery yet (noTime)
	evSeqEsc  uint32 = math.MaxUint32
	// done_t in mutation.dt's 48 bits: doneNone (no mut record yet: noTime), doneEsc (in esc), or
	// any other value as it is.
	doneNone = -1 << 47
	doneEsc  = doneNone + 1
	doneMax  = 1<<47 - 1
)

// blankEntry is a new entry: no done_t yet, everything else zero.
var blankEntry = mutation{dt: 1 << 63} // doneNone << 16

type escaped struct {
	sent, intended, evSeq, done int64
	pod, tenant, evCons         int32
	evN                         uint16
	status                      int16
}

// podEsc in the pod's byte of an entry's arena record: the pod's index does not fit and is in the
// side table. A run has a few pods; one of 255 pods or more keeps the larger indices in the side
// table, so that no index wraps onto another pod.
const podEsc = math.MaxUint8

// podByte returns the pod's byte in m's arena record (after its header).
func (t *mutTable) podByte(m *mutation) *byte {
	rec := t.names.at(m.name)
	_, n := uvarint(rec)
	return &rec[n]
}

// setPod records the index of the pod that acked m.
func (t *mutTable) setPod(m *mutation, pod int32) {
	if pod >= 0 && pod < podEsc {
		*t.podByte(m) = byte(pod)
		return
	}
	*t.podByte(m) = podEsc
	t.escape(m).pod = pod
}

// pod returns the index of the pod that acked m (0: unknown).
func (t *mutTable) pod(m *mutation) int32 {
	if b := *t.podByte(m); b != podEsc {
		return int32(b)
	}
	return t.esc[m].pod
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

// done returns m's done_t (noTime until its mut record arrived).
func (t *mutTable) done(m *mutation) int64 {
	switch d := int64(m.dt) >> 16; d {
	case doneNone:
		return noTime
	case doneEsc:
		return t.esc[m].done
	default:
		return d
	}
}

func (t *mutTable) setDone(m *mutation, done int64) {
	d := done
	if done <= doneEsc || done > doneMax {
		d = doneEsc
		t.escape(m).done = done
	}
	m.dt = uint64(d)<<16 | m.dt&0xffff
}

// setTimes records a mut record's t, intended_t and done_t in entry id, whose kind (setKind) is
// already set: it decides whether intended_t is kept (see intended).
func (t *mutTable) setTimes(id int32, sent, intended, done int64) {
	m := t.at(id)
	t.setDone(m, done)
	var ok bool
	if m.dSent, ok = delta32(done, sent); !ok {
		m.dSent = escDelta
		t.escape(m).sent = sent
	}
	t.intendeds.set(t, id, m, sent, intended)
}

// sent returns m's send time (noTime until its mut record arrived: dSent 0 and done_t noTime).
func (t *mutTable) sent(m *mutation) int64 {
	if m.dSent == escDelta {
		return t.esc[m].sent
	}
	return t.done(m) - int64(m.dSent)
}

// keepAllIntended says whether every mutation's intended_t is kept (the windows read them all)
// or only those of W's mutations that may still be lost. It is set before the first mut record.
func (t *mutTable) keepAllIntended(all bool) { t.intendeds.keepAll = all }

// intended returns entry id's intended_t: for any mutation when keepAllIntended is set, else only for a
// mutation of W that is not persisted (the loss check's witnesses); asking for another one is a bug.
func (t *mutTable) intended(id int32) int64 { return t.intendeds.get(t, id) }

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
