package ledger

import (
	"hash/maphash"
	"math/bits"
)

// interner returns one shared copy of each low-cardinality string (tenant, consumer, pod, op, kind,
// ...), so that ten million records do not allocate ten million copies of "write". It stops adding
// once it holds max entries, so hostile input cannot grow it without bound.
//
// It is an open-addressing table (linear probing, at most half full) rather than a Go map, because
// it is looked up several times per record: a string of up to eight bytes (most ids, ops and kinds)
// is hashed and compared as one packed word (pack8), a longer one with maphash. Both hashes are
// seeded per interner, so input cannot be chosen to collide.
type interner struct {
	slots []internSlot // len is a power of two
	n     int
	max   int
	seed  uint64
	mseed maphash.Seed
}

type internSlot struct {
	w uint64 // pack8(s)
	s string
	// used tells an empty slot from one holding "".
	used bool
}

func newInterner(max int) *interner {
	ms := maphash.MakeSeed()
	return &interner{slots: make([]internSlot, 256), max: max, mseed: ms,
		seed: maphash.Comparable(ms, uint64(0x9e3779b97f4a7c15)) | 1}
}

// hash of b, whose packed first bytes are w.
func (in *interner) hash(b []byte, w uint64) uint64 {
	if len(b) > 8 {
		return maphash.Bytes(in.mseed, b)
	}
	hi, lo := bits.Mul64(w^in.seed, 0x9e3779b97f4a7c15^uint64(len(b)))
	return hi ^ lo
}

// get returns the interned copy of b.
func (in *interner) get(b []byte) string {
	w := pack8(b)
	h := in.hash(b, w)
	mask := uint64(len(in.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := &in.slots[i]
		if !e.used {
			break
		}
		if e.w == w && len(e.s) == len(b) && (len(b) <= 8 || e.s == string(b)) {
			return e.s
		}
	}
	s := string(b)
	if in.n >= in.max {
		return s
	}
	in.n++
	if 2*in.n > len(in.slots) {
		in.grow()
	}
	in.place(internSlot{w: w, s: s, used: true}, h)
	return s
}

func (in *interner) place(e internSlot, h uint64) {
	mask := uint64(len(in.slots) - 1)
	i := h & mask
	for in.slots[i].used {
		i = (i + 1) & mask
	}
	in.slots[i] = e
}

// grow doubles the table and places its entries again.
func (in *interner) grow() {
	old := in.slots
	in.slots = make([]internSlot, 2*len(old))
	for _, e := range old {
		if e.used {
			in.place(e, in.hash([]byte(e.s), e.w))
		}
	}
}
