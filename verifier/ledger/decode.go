package ledger

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// decoder turns one JSON line into a Record by hand: one pass, no reflection, low-cardinality strings
// interned. Nested values it does not need often (tenants, pods, thresholds, params) are validated by
// the scanner and then handed to encoding/json. It distinguishes bad JSON (syntaxError: decides
// whether a last line is torn) from well-formed JSON with a field of the wrong type (fieldError).
type decoder struct {
	b       []byte
	i       int
	in      *interner
	scratch []byte

	present uint64
	ferr    *fieldError // first type error; the scan continues so the line's syntax is still checked
}

// syntaxError is a line that is not one valid JSON object.
type syntaxError struct {
	col int // 1-based byte column
	msg string
}

func (e *syntaxError) Error() string { return "invalid JSON at column " + itoa(int64(e.col)) + ": " + e.msg }

// fieldError is valid JSON with a known field of the wrong type.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return "field " + quote(e.field) + ": " + e.msg }

// errTypeMismatch is returned by the value parsers when the value is valid JSON of another type; the
// caller turns it into a fieldError naming the field and the value it got.
var errTypeMismatch = errors.New("type mismatch")

func (d *decoder) syntax(msg string) error { return &syntaxError{col: d.i + 1, msg: msg} }

// decode fills rec (which the caller has zeroed) from line. It returns a *syntaxError or nil; a
// field type error is left in d.ferr.
func (d *decoder) decode(line []byte, rec *Record) error {
	d.b, d.i, d.present, d.ferr = line, 0, 0, nil
	d.ws()
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return d.syntax("want an object '{'")
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return d.end()
	}
	for {
		d.ws()
		key, err := d.rawString()
		if err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return d.syntax("want ':' after a key")
		}
		d.i++
		d.ws()
		if err := d.field(key, rec); err != nil {
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
			return d.end()
		default:
			return d.syntax("want ',' or '}'")
		}
	}
}

func (d *decoder) end() error {
	d.ws()
	if d.i != len(d.b) {
		return d.syntax("data after the object")
	}
	return nil
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\r', '\n':
			d.i++
		default:
			return
		}
	}
}

// field decodes the value of key into rec. Unknown keys are skipped (after checking their syntax).
func (d *decoder) field(key []byte, rec *Record) error {
	var bit uint64
	var err error
	start := d.i
	switch string(key) {
	case "k":
		bit = fK
		rec.K, err = d.str(true)
	case "t":
		bit = fT
		rec.T, err = d.int()
	case "tenant":
		bit = fTenant
		rec.Tenant, err = d.id()
	case "consumer":
		bit = fConsumer
		rec.Consumer, err = d.id()
	case "conn":
		bit = fConn
		rec.Conn, err = d.id()
	case "seq":
		bit = fSeq
		rec.Seq, err = d.int()
	case "op":
		bit = fOp
		rec.Op, err = d.str(true)
	case "path":
		bit = fPath
		rec.Path, err = d.str(false)
	case "pod":
		bit = fPod
		rec.Pod, err = d.id()
	case "mid":
		bit = fMID
		rec.MID, err = d.idUnique()
	case "intended_t":
		bit = fIntendedT
		rec.IntendedT, err = d.int()
	case "done_t":
		bit = fDoneT
		rec.DoneT, err = d.int()
	case "res":
		bit = fRes
		rec.Res, err = d.str(true)
	case "status":
		bit = fStatus
		var v int64
		v, err = d.int()
		rec.Status = int(v)
	case "src":
		bit = fSrc
		rec.Src, err = d.str(false)
	case "phase":
		bit = fPhase
		rec.Phase, err = d.str(true)
	case "err":
		bit = fErr
		rec.Err, err = d.str(false)
	case "reason":
		bit = fReason
		rec.Reason, err = d.str(true)
	case "since":
		bit = fSince
		rec.Since, err = d.int()
	case "name":
		bit = fName
		rec.Name, err = d.str(true)
	case "labels":
		bit = fLabels
		rec.Labels, err = d.labels()
	case "value":
		bit = fValue
		rec.Value, err = d.float()
	case "conns":
		bit = fConns
		rec.Conns, err = d.int()
	case "bytes_up":
		bit = fBytesUp
		rec.BytesUp, err = d.int()
	case "bytes_down":
		bit = fBytesDown
		rec.BytesDown, err = d.int()
	case "created_unix_ns":
		bit = fCreatedUnixNs
		rec.CreatedUnixNs, err = d.int()
	case "from_t":
		bit = fFromT
		rec.FromT, err = d.int()
	case "to_t":
		bit = fToT
		rec.ToT, err = d.int()
	case "first_since":
		bit = fFirstSince
		rec.FirstSince, err = d.int()
	case "final_cursor":
		bit = fFinalCursor
		rec.FinalCursor, err = d.int()
	case "durable":
		bit = fDurable
		rec.Durable, err = d.bool()
	case "drained":
		bit = fDrained
		rec.Drained, err = d.bool()
	case "id":
		bit = fID
		rec.ID, err = d.id()
	case "kind":
		bit = fKind
		rec.Kind, err = d.str(true)
	case "target":
		bit = fTarget
		rec.Target, err = d.str(true)
	case "params":
		bit = fParams
		err = d.nested(&rec.Params)
	case "pid":
		bit = fPID
		var v int64
		v, err = d.int()
		rec.PID = int(v)
	case "signal":
		bit = fSignal
		rec.Signal, err = d.str(true)
	case "code":
		bit = fCode
		var v int64
		if v, err = d.int(); err == nil {
			c := int(v)
			rec.Code = &c
		}
	case "v":
		bit = fV
		var v int64
		v, err = d.int()
		rec.V = int(v)
	case "run_id":
		bit = fRunID
		rec.RunID, err = d.id()
	case "scenario":
		bit = fScenario
		rec.Scenario, err = d.str(false)
	case "seed":
		bit = fSeed
		rec.Seed, err = d.int()
	case "start_unix_ns":
		bit = fStartUnixNs
		rec.StartUnixNs, err = d.int()
	case "budget":
		bit = fBudget
		rec.Budget, err = d.float()
	case "tenants":
		bit = fTenants
		rec.Tenants, err = d.tenants()
	case "pods":
		bit = fPods
		rec.Pods, err = d.idList()
	case "crashes_per_pod_year":
		bit = fCrashesPerPodYear
		var v float64
		if v, err = d.float(); err == nil {
			rec.CrashesPerPodYear = &v
		}
	case "pods_in_fleet":
		bit = fPodsInFleet
		var v int64
		if v, err = d.int(); err == nil {
			n := int(v)
			rec.PodsInFleet = &n
		}
	case "thresholds":
		bit = fThresholds
		err = d.nested(&rec.Thresholds)
	default:
		return d.skip(0)
	}
	if err == nil {
		d.present |= bit
		return nil
	}
	if err == errNull {
		// null is JSON's "no value": treat the field as absent (required fields then report missing).
		return nil
	}
	if _, ok := err.(*syntaxError); ok {
		return err
	}
	// Well-formed value of the wrong type: remember the first such error, skip the value and keep
	// scanning so that a torn line is still told apart from a typed mistake.
	d.i = start
	if serr := d.skip(0); serr != nil {
		return serr
	}
	if d.ferr == nil {
		msg := err.Error()
		if err == errTypeMismatch {
			msg = "want " + want(bit) + ", got " + excerpt(d.b[start:d.i])
		}
		d.ferr = &fieldError{field: string(key), msg: msg}
	}
	return nil
}

// errNull marks a JSON null where a value was expected.
var errNull = errors.New("null")

// want names the JSON type a field expects, for error messages.
func want(bit uint64) string {
	switch bit {
	case fK, fOp, fPath, fRes, fSrc, fPhase, fErr, fReason, fName, fKind, fTarget, fSignal, fScenario:
		return "string"
	case fTenant, fConsumer, fConn, fPod, fMID, fID, fRunID:
		return "string (or number) id"
	case fDurable, fDrained:
		return "boolean"
	case fValue, fBudget, fCrashesPerPodYear:
		return "number"
	case fLabels:
		return "object of strings"
	case fTenants:
		return `list of {"id","mode","cold"}`
	case fPods:
		return "list of names"
	case fParams, fThresholds:
		return "object"
	}
	return "integer"
}

// excerpt quotes a value for an error message, cut to a readable length.
func excerpt(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

func (d *decoder) isNull() bool {
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// str decodes a JSON string; intern it when the field has few distinct values.
func (d *decoder) str(intern bool) (string, error) {
	if d.i >= len(d.b) {
		return "", d.syntax("unexpected end of line, want a value")
	}
	if d.b[d.i] != '"' {
		if d.isNull() {
			return "", errNull
		}
		return "", errTypeMismatch
	}
	raw, err := d.rawString()
	if err != nil {
		return "", err
	}
	if intern {
		return d.in.get(raw), nil
	}
	return string(raw), nil
}

// id decodes an identifier: a string or, for writers that number things, a JSON number kept as
// written. Ids repeat a lot (tenant, consumer, pod, conn), so they are interned.
func (d *decoder) id() (string, error) {
	if d.i < len(d.b) && (d.b[d.i] == '-' || (d.b[d.i] >= '0' && d.b[d.i] <= '9')) {
		num, err := d.number()
		if err != nil {
			return "", err
		}
		return d.in.get(num), nil
	}
	return d.str(true)
}

// idUnique is id for identifiers unique per record (mid): interning them would only grow the table.
func (d *decoder) idUnique() (string, error) {
	if d.i < len(d.b) && (d.b[d.i] == '-' || (d.b[d.i] >= '0' && d.b[d.i] <= '9')) {
		num, err := d.number()
		if err != nil {
			return "", err
		}
		return string(num), nil
	}
	return d.str(false)
}

// int decodes an integer. A number with a fraction or exponent is accepted when its value is integral
// (1e9, 5.0): some JSON writers print every number as a float.
func (d *decoder) int() (int64, error) {
	if d.i >= len(d.b) {
		return 0, d.syntax("unexpected end of line, want a value")
	}
	c := d.b[d.i]
	if c != '-' && (c < '0' || c > '9') {
		if d.isNull() {
			return 0, errNull
		}
		if err := d.checkLiteral(); err != nil {
			return 0, err
		}
		return 0, errTypeMismatch
	}
	num, err := d.number()
	if err != nil {
		return 0, err
	}
	// Fast path: plain digits that cannot overflow.
	if len(num) <= 18 {
		neg := num[0] == '-'
		digits := num
		if neg {
			digits = num[1:]
		}
		var v int64
		plain := true
		for _, ch := range digits {
			if ch < '0' || ch > '9' {
				plain = false
				break
			}
			v = v*10 + int64(ch-'0')
		}
		if plain {
			if neg {
				v = -v
			}
			return v, nil
		}
	}
	if v, err := strconv.ParseInt(bstr(num), 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(bstr(num), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, errors.New("want integer, got " + excerpt(num))
	}
	return int64(f), nil
}

func (d *decoder) float() (float64, error) {
	if d.i >= len(d.b) {
		return 0, d.syntax("unexpected end of line, want a value")
	}
	c := d.b[d.i]
	if c != '-' && (c < '0' || c > '9') {
		if d.isNull() {
			return 0, errNull
		}
		if err := d.checkLiteral(); err != nil {
			return 0, err
		}
		return 0, errTypeMismatch
	}
	num, err := d.number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(bstr(num), 64)
	if err != nil {
		return 0, errors.New("want number, got " + excerpt(num) + " (out of range)")
	}
	return f, nil
}

func (d *decoder) bool() (bool, error) {
	switch {
	case len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "true":
		d.i += 4
		return true, nil
	case len(d.b)-d.i >= 5 && string(d.b[d.i:d.i+5]) == "false":
		d.i += 5
		return false, nil
	case d.isNull():
		return false, errNull
	}
	if d.i >= len(d.b) {
		return false, d.syntax("unexpected end of line, want a value")
	}
	if err := d.checkLiteral(); err != nil {
		return false, err
	}
	return false, errTypeMismatch
}

// checkLiteral makes sure the value at d.i is valid JSON before a type mismatch is reported, so that
// garbage is a syntax error (torn line) rather than a field error.
func (d *decoder) checkLiteral() error {
	save := d.i
	if err := d.skip(0); err != nil {
		return err
	}
	d.i = save
	return nil
}

// labels decodes a flat object of strings (Prometheus labels), interning keys and values.
func (d *decoder) labels() (map[string]string, error) {
	if d.i >= len(d.b) {
		return nil, d.syntax("unexpected end of line, want a value")
	}
	if d.b[d.i] != '{' {
		if d.isNull() {
			return nil, errNull
		}
		if err := d.checkLiteral(); err != nil {
			return nil, err
		}
		return nil, errTypeMismatch
	}
	d.i++
	m := make(map[string]string, 4)
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, nil
	}
	for {
		d.ws()
		kb, err := d.rawString()
		if err != nil {
			return nil, err
		}
		k := d.in.get(kb)
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, d.syntax("want ':' after a key")
		}
		d.i++
		d.ws()
		v, err := d.str(true)
		if err != nil {
			if err == errTypeMismatch || err == errNull {
				if err := d.checkLiteral(); err != nil {
					return nil, err
				}
				return nil, errors.New("label " + quote(k) + ": want string")
			}
			return nil, err
		}
		m[k] = v
		d.ws()
		if d.i >= len(d.b) {
			return nil, d.syntax("unexpected end of line inside an object")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return m, nil
		default:
			return nil, d.syntax("want ',' or '}'")
		}
	}
}

// tenantJSON accepts a tenant id written as a string or a number.
type tenantJSON struct {
	ID   json.RawMessage `json:"id"`
	Mode string          `json:"mode"`
	Cold bool            `json:"cold"`
}

func (d *decoder) tenants() ([]Tenant, error) {
	var raw []tenantJSON
	if err := d.nested(&raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, errNull
	}
	out := make([]Tenant, len(raw))
	for i, t := range raw {
		id, err := idFromRaw(t.ID)
		if err != nil {
			return nil, errors.New("tenant " + itoa(int64(i)) + ": id: " + err.Error())
		}
		out[i] = Tenant{ID: id, Mode: t.Mode, Cold: t.Cold}
	}
	return out, nil
}

func (d *decoder) idList() ([]string, error) {
	var raw []json.RawMessage
	if err := d.nested(&raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, errNull
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		s, err := idFromRaw(r)
		if err != nil {
			return nil, errors.New("item " + itoa(int64(i)) + ": " + err.Error())
		}
		out[i] = s
	}
	return out, nil
}

func idFromRaw(r json.RawMessage) (string, error) {
	if len(r) > 0 && r[0] == '"' {
		var s string
		err := json.Unmarshal(r, &s)
		return s, err
	}
	if len(r) > 0 && (r[0] == '-' || (r[0] >= '0' && r[0] <= '9')) {
		return string(r), nil
	}
	if len(r) == 0 {
		return "", errors.New("missing")
	}
	return "", errors.New("want string or number, got " + excerpt(r))
}

// nested checks the syntax of the value at d.i and decodes it with encoding/json into v. A JSON null
// leaves v untouched and reports errNull.
func (d *decoder) nested(v any) error {
	start := d.i
	if d.isNull() {
		return errNull
	}
	if err := d.skip(0); err != nil {
		return err
	}
	if err := json.Unmarshal(d.b[start:d.i], v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return errTypeMismatch
		}
		return err
	}
	return nil
}

// rawString scans a JSON string at d.i and returns its decoded bytes (a subslice of the line when it
// has no escapes, else d.scratch: valid until the next call).
func (d *decoder) rawString() ([]byte, error) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, d.syntax("want a string")
	}
	d.i++
	start := d.i
	high := false
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if high && !utf8.Valid(s) {
				return []byte(string([]rune(string(s)))), nil // invalid bytes become U+FFFD, as encoding/json does
			}
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

// escapedString continues rawString once a backslash was seen, decoding into d.scratch.
func (d *decoder) escapedString(start int) ([]byte, error) {
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
