// Package eventstream parses a text/event-stream to the letter of the HTML Living Standard's
// "Interpreting an event stream": any of CRLF, LF or CR ends a line, a leading BOM is dropped, comment
// lines are ignored, a blank line dispatches, an event with empty data is not dispatched.
package eventstream

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
)

// Event is one dispatched event.
type Event struct {
	Type  string // "message" when the stream named none
	Data  string
	ID    string // the last event ID in force when the event was dispatched
	Retry int    // the last valid retry field in milliseconds, 0 if none
}

// Reader reads events from a stream. It is not safe for concurrent use.
type Reader struct {
	r        *bufio.Reader
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
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 64<<10)} }

// readLine returns the next line without its terminator; io.EOF when the stream ends
// (a final unterminated line is discarded, as the standard says for an incomplete event).
func (p *Reader) readLine() ([]byte, error) {
	p.line = p.line[:0]
	for {
		b, err := p.r.ReadByte()
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
