package ledger

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// rawString scans a JSON string at d.i and returns its decoded bytes (a subslice of the line when it
// has no escapes, else d.scratch: valid until the next call).
func (d *decoder) rawString() ([]byte, error) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, d.syntax("want a string")
	}
	d.i++
	start := d.i
	high := false
	// Eight bytes at a time while none of them ends the string or needs a closer look.
	for len(d.b)-d.i >= 8 && !special8(binary.LittleEndian.Uint64(d.b[d.i:])) {
		d.i += 8
	}
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if high && !utf8.Valid(s) {
				d.inLine = false
				return []byte(string([]rune(string(s)))), nil // invalid bytes become U+FFFD, as encoding/json does
			}
			d.inLine = true
			return s, nil
		case c == '\\':
			return d.escapedString(start)
		case c < 0x20:
			return nil, d.syntax("control character in string")
		case c >= 0x80:
			high = true
		}
		d.i++
	}
	return nil, d.syntax("unterminated string")
}

// special8 reports whether any byte of the word w is a quote, a backslash, a control character or
// not ASCII (the bytes rawString looks at one by one). Each test is the classic "has a zero byte"
// trick on w, exact as to whether some byte matches.
func special8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	return ((quote-ones)&^quote|(backslash-ones)&^backslash|(w-ones*0x20)|w)&highs != 0
}

// escapedString continues rawString once a backslash was seen, decoding into d.scratch.
func (d *decoder) escapedString(start int) ([]byte, error) {
	d.inLine = false
	out := append(d.scratch[:0], d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if !utf8.Valid(out) {
				out = []byte(string([]rune(string(out))))
			}
			d.scratch = out
			return out, nil
		case c < 0x20:
			return nil, d.syntax("control character in string")
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		d.i++
		if d.i >= len(d.b) {
			break
		}
		e := d.b[d.i]
		d.i++
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return nil, d.syntax("bad \\u escape")
			}
			if utf16IsSurrogate(r) {
				r2 := rune(-1)
				if len(d.b)-d.i >= 6 && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
					save := d.i
					d.i += 2
					var ok2 bool
					if r2, ok2 = d.hex4(); !ok2 {
						return nil, d.syntax("bad \\u escape")
					}
					if dec := utf16Decode(r, r2); dec != utf8.RuneError {
						r = dec
					} else {
						d.i = save
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, d.syntax("bad escape \\" + string(rune(e)))
		}
	}
	return nil, d.syntax("unterminated string")
}

func (d *decoder) hex4() (rune, bool) {
	if len(d.b)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}

func utf16IsSurrogate(r rune) bool { return r >= 0xd800 && r < 0xe000 }

func utf16Decode(r1, r2 rune) rune {
	if r1 >= 0xd800 && r1 < 0xdc00 && r2 >= 0xdc00 && r2 < 0xe000 {
		return (r1-0xd800)<<10 | (r2 - 0xdc00) + 0x10000
	}
	return utf8.RuneError
}

// number scans a JSON number (RFC 8259 grammar) and returns its text.
func (d *decoder) number() ([]byte, error) {
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.b) && d.b[d.i] == '0':
		d.i++
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
		}
	default:
		return nil, d.syntax("bad number")
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if d.i >= len(d.b) || d.b[d.i] < '0' || d.b[d.i] > '9' {
			return nil, d.syntax("bad number")
		}
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if d.i >= len(d.b) || d.b[d.i] < '0' || d.b[d.i] > '9' {
			return nil, d.syntax("bad number")
		}
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
		}
	}
	return d.b[start:d.i], nil
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 512

// skip scans any JSON value at d.i, checking its syntax.
func (d *decoder) skip(depth int) error {
	if depth > maxDepth {
		return d.syntax("nested too deeply")
	}
	if d.i >= len(d.b) {
		return d.syntax("unexpected end of line, want a value")
	}
	switch c := d.b[d.i]; {
	case c == '"':
		_, err := d.rawString()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := d.number()
		return err
	case c == 't':
		return d.lit("true")
	case c == 'f':
		return d.lit("false")
	case c == 'n':
		return d.lit("null")
	case c == '[':
		d.i++
		d.ws()
		if d.i < len(d.b) && d.b[d.i] == ']' {
			d.i++
			return nil
		}
		for {
			d.ws()
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.ws()
			if d.i >= len(d.b) {
				return d.syntax("unexpected end of line inside a list")
			}
			switch d.b[d.i] {
			case ',':
				d.i++
			case ']':
				d.i++
				return nil
			default:
				return d.syntax("want ',' or ']'")
			}
		}
	case c == '{':
		d.i++
		d.ws()
		if d.i < len(d.b) && d.b[d.i] == '}' {
			d.i++
			return nil
		}
		for {
			d.ws()
			if _, err := d.rawString(); err != nil {
				return err
			}
			d.ws()
			if d.i >= len(d.b) || d.b[d.i] != ':' {
				return d.syntax("want ':' after a key")
			}
			d.i++
			d.ws()
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.ws()
			if d.i >= len(d.b) {
				return d.syntax("unexpected end of line inside an object")
			}
			switch d.b[d.i] {
			case ',':
				d.i++
			case '}':
				d.i++
				return nil
			default:
				return d.syntax("want ',' or '}'")
			}
		}
	}
	return d.syntax("want a value")
}

func (d *decoder) lit(s string) error {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return nil
	}
	return d.syntax("bad literal")
}

// bstr views b as a string without copying, for strconv calls that do not retain it.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func quote(s string) string { return strconv.Quote(s) }
