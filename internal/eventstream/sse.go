// Package eventstream parses a text/event-stream to the letter of the HTML Living Standard's
// "Interpreting an event stream": any of CRLF, LF or CR ends a line, a leading BOM is dropped, comment
// lines are ignored, a blank line dispatches, an event with empty data is not dispatched.
package eventstream

import (
	"bytes"
	"io"
	"strconv"
	"sync"
)

// Event is one dispatched event.
type Event struct {
	Type  string // "message" when the stream named none
	Data  string
	ID    string // the last event ID in force when the event was dispatched
	Retry int    // the last valid retry field in milliseconds, 0 if none
}

// Buffer sizes of a Reader: it reads into a small buffer of its own while the stream is quiet and
// into a big one, lent by a pool, while the stream brings more than the small one holds. An idle
// subscriber, blocked in a read between heartbeats, then holds smallBuf bytes instead of bigBuf (a
// thousand idle subscribers in one process: 1 MiB, not 64), and a busy one reads bigBuf per system
// call.
const (
	smallBuf = 512
	bigBuf   = 64 << 10
)

var bigBufs = sync.Pool{New: func() any { b := make([]byte, bigBuf); return &b }}

// Reader reads events from a stream. It is not safe for concurrent use.
type Reader struct {
	src      io.Reader
	small    []byte
	big      *[]byte // lent by bigBufs while the stream is busy, nil otherwise
	buf      []byte  // small or *big: bytes buf[r:w] are read and not yet parsed
	r, w     int
	started  bool
	pendCR   bool // the previous line ended in CR: a following LF belongs to it
	lastID   string
	retry    int
	data     bytes.Buffer
	hasData  bool
	evType   string
	line     []byte
	Comments int // comment lines seen (e.g. keep-alives)
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	small := make([]byte, smallBuf)
	return &Reader{src: r, small: small, buf: small}
}

// readByte returns the next byte of the stream, reading more when every byte read is parsed.
func (p *Reader) readByte() (byte, error) {
	if p.r == p.w {
		if err := p.fill(); err != nil {
			return 0, err
		}
	}
	b := p.buf[p.r]
	p.r++
	return b, nil
}

// fill reads once more (every byte before is parsed). A read that filled the small buffer says the
// stream is busy: the next ones go into a big buffer; a read into the big one that would have fit in
// the small one says it is quiet again: the big buffer goes back to the pool before the next read,
// which may block for as long as the stream stays quiet.
func (p *Reader) fill() error {
	switch {
	case p.big == nil && p.w == len(p.small):
		p.big = bigBufs.Get().(*[]byte)
		p.buf = *p.big
	case p.big != nil && p.w <= smallBuf:
		bigBufs.Put(p.big)
		p.big, p.buf = nil, p.small
	}
	p.r, p.w = 0, 0
	for empty := 0; ; empty++ {
		if empty == 100 { // as bufio: a reader that keeps returning nothing is broken
			p.release()
			return io.ErrNoProgress
		}
		n, err := p.src.Read(p.buf)
		if n > 0 {
			p.w = n
			return nil
		}
		if err != nil {
			p.release()
			return err
		}
	}
}

// release hands a big buffer back to the pool once the stream has ended.
func (p *Reader) release() {
	if p.big != nil {
		bigBufs.Put(p.big)
		p.big, p.buf = nil, p.small
	}
}

// readLine returns the next line without its terminator; io.EOF when the stream ends
// (a final unterminated line is discarded, as the standard says for an incomplete event).
func (p *Reader) readLine() ([]byte, error) {
	p.line = p.line[:0]
	for {
		b, err := p.readByte()
		if err != nil {
			return nil, err
		}
		if p.pendCR {
			p.pendCR = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return p.line, nil
		case '\r':
			p.pendCR = true
			return p.line, nil
		}
		p.line = append(p.line, b)
	}
}

// Next returns the next dispatched event, or the error that ended the stream (io.EOF for a clean end).
func (p *Reader) Next() (Event, error) {
	for {
		line, err := p.readLine()
		if err != nil {
			return Event{}, err
		}
		if !p.started {
			p.started = true
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		if len(line) == 0 {
			if !p.hasData {
				p.evType = ""
				continue
			}
			d := p.data.Bytes()
			if n := len(d); n > 0 && d[n-1] == '\n' {
				d = d[:n-1]
			}
			ev := Event{Type: p.evType, Data: string(d), ID: p.lastID, Retry: p.retry}
			if ev.Type == "" {
				ev.Type = "message"
			}
			p.data.Reset()
			p.hasData = false
			p.evType = ""
			return ev, nil
		}
		if line[0] == ':' {
			p.Comments++
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			p.evType = string(value)
		case "data":
			p.data.Write(value)
			p.data.WriteByte('\n')
			p.hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				p.lastID = string(value)
			}
		case "retry":
			if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 && isDigits(value) {
				p.retry = n
			}
		}
	}
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
