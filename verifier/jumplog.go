package verifier

import "encoding/binary"

// jumpLog is a consumer's history of cursor moves that passed at least one seq, delta-varint encoded
// (a few bytes a move) because in shared-pool tenants nearly every frame jumps.
type jumpLog struct {
	buf       []byte
	lastAfter int64
	lastT     int64
}

// Frame kinds that move a cursor.
const (
	frameEv     byte = 'e'
	frameReset  byte = 'r'
	frameResume byte = 'o' // a conn open whose since differs from the cursor
)

type jump struct {
	kind          byte
	before, after int64
	t             int64
	conn          int32
}

func (l *jumpLog) add(j jump) {
	l.buf = append(l.buf, j.kind)
	l.buf = binary.AppendVarint(l.buf, j.before-l.lastAfter)
	l.buf = binary.AppendVarint(l.buf, j.after-j.before)
	l.buf = binary.AppendVarint(l.buf, j.t-l.lastT)
	l.buf = binary.AppendUvarint(l.buf, uint64(j.conn))
	l.lastAfter, l.lastT = j.after, j.t
}

// each decodes the log in order until fn returns false.
func (l *jumpLog) each(fn func(j jump) bool) {
	var lastAfter, lastT int64
	b := l.buf
	for len(b) > 0 {
		var j jump
		j.kind = b[0]
		b = b[1:]
		d, n := binary.Varint(b)
		b = b[n:]
		j.before = lastAfter + d
		d, n = binary.Varint(b)
		b = b[n:]
		j.after = j.before + d
		d, n = binary.Varint(b)
		b = b[n:]
		j.t = lastT + d
		u, n := binary.Uvarint(b)
		b = b[n:]
		j.conn = int32(u)
		lastAfter, lastT = j.after, j.t
		if !fn(j) {
			return
		}
	}
}
