package verifier

import "encoding/binary"

// jumpLog is a consumer's history of cursor moves that passed at least one seq, delta-varint encoded
// (a few bytes a move) because in shared-pool tenants nearly every frame jumps. Each move is a
// header byte (its kind's code, and whether its before is the last move's after and its connection
// the last move's), then the varints of what the header does not say: before minus the last
// after, after minus before, t minus the last move's t, the connection. The log is kept in chunks
// that double up to jumpChunkMax, so growing it never copies it or leaves the old copy as garbage.
type jumpLog struct {
	chunks    [][]byte
	lastAfter int64
	lastT     int64
	lastConn  int32
}

// Frame kinds that move a cursor.
const (
	frameEv     byte = 'e'
	frameReset  byte = 'r'
	frameResume byte = 'o' // a conn open whose since differs from the cursor
)

// jumpKinds are the frame kinds by their code in a move's header.
var jumpKinds = [...]byte{frameEv, frameReset, frameResume}

const (
	jumpSameBefore = 1 << 2 // before is the last move's after
	jumpSameConn   = 1 << 3 // conn is the last move's
	jumpChunkMin   = 256
	jumpChunkMax   = 64 << 10
)

type jump struct {
	kind          byte
	before, after int64
	t             int64
	conn          int32
}

func (l *jumpLog) add(j jump) {
	var b [1 + 4*binary.MaxVarintLen64]byte
	hdr := byte(0)
	for i, k := range jumpKinds {
		if k == j.kind {
			hdr = byte(i)
		}
	}
	rec := b[:1]
	if j.before == l.lastAfter {
		hdr |= jumpSameBefore
	} else {
		rec = binary.AppendVarint(rec, j.before-l.lastAfter)
	}
	rec = binary.AppendVarint(rec, j.after-j.before)
	rec = binary.AppendVarint(rec, j.t-l.lastT)
	if j.conn == l.lastConn {
		hdr |= jumpSameConn
	} else {
		rec = binary.AppendUvarint(rec, uint64(j.conn))
	}
	rec[0] = hdr
	l.lastAfter, l.lastT, l.lastConn = j.after, j.t, j.conn
	if n := len(l.chunks); n == 0 || len(l.chunks[n-1])+len(rec) > cap(l.chunks[n-1]) {
		size := jumpChunkMin
		if n > 0 {
			size = min(2*cap(l.chunks[n-1]), jumpChunkMax)
		}
		l.chunks = append(l.chunks, make([]byte, 0, size))
	}
	c := &l.chunks[len(l.chunks)-1]
	*c = append(*c, rec...)
}

// each decodes the log in order until fn returns false.
func (l *jumpLog) each(fn func(j jump) bool) {
	var lastAfter, lastT int64
	var lastConn int32
	for _, b := range l.chunks {
		for len(b) > 0 {
			hdr := b[0]
			b = b[1:]
			j := jump{kind: jumpKinds[hdr&3], before: lastAfter, conn: lastConn}
			if hdr&jumpSameBefore == 0 {
				d, n := binary.Varint(b)
				b = b[n:]
				j.before = lastAfter + d
			}
			d, n := binary.Varint(b)
			b = b[n:]
			j.after = j.before + d
			d, n = binary.Varint(b)
			b = b[n:]
			j.t = lastT + d
			if hdr&jumpSameConn == 0 {
				u, n := binary.Uvarint(b)
				b = b[n:]
				j.conn = int32(u)
			}
			lastAfter, lastT, lastConn = j.after, j.t, j.conn
			if !fn(j) {
				return
			}
		}
	}
}
