package ledger

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
)

// errNull marks a JSON null where a value was expected.
var errNull = errors.New("null")

// want names the JSON type a field expects, for error messages.
func want(bit field) string {
	switch bit {
	case fK, fOp, fPath, fRes, fSrc, fPhase, fErr, fReason, fName, fKind, fTarget, fSignal, fScenario, fMetricType, fMode:
		return "string"
	case fTenant, fConsumer, fConn, fPod, fMID, fID, fRunID, fBatch:
		return "string (or number) id"
	case fDurable, fDrained, fOK, fAudit, fAbsent, fResync, fCold:
		return "boolean"
	case fValue, fBudget, fCrashesPerPodYear:
		return "number"
	case fLabels:
		return "object of strings"
	case fTenants:
		return `list of {"id","mode","cold"}`
	case fTenantCount:
		return `list of {"id","mode","cold"} (run) or count (audit)`
	case fBlock:
		return "string or number"
	case fError, fProfile:
		return "string"
	case fPods, fMetrics:
		return "list of names"
	case fParams, fThresholds:
		return "object"
	case fShard:
		return `object {"k","n"}`
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
	raw, err := d.stringValue()
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

// stringValue decodes a JSON string value's bytes (unescaped; they may be the line's own): null is
// errNull, any other value type errTypeMismatch.
func (d *decoder) stringValue() ([]byte, error) {
	if d.i >= len(d.b) {
		return nil, d.syntax("unexpected end of line, want a value")
	}
	if d.b[d.i] != '"' {
		if d.isNull() {
			return nil, errNull
		}
		return nil, errTypeMismatch
	}
	return d.rawString()
}

// lent is str(false) for a field the Reader may lend (path, mid: Reader.BorrowStrings): with
// d.borrow a value that needed no unescaping is returned as a string over the line's bytes, not a
// copy. A JSON number is accepted as written when number is set (mid, like idUnique).
func (d *decoder) lent(number bool) (string, error) {
	if !d.borrow {
		if number {
			return d.idUnique()
		}
		return d.str(false)
	}
	if number && d.i < len(d.b) && (d.b[d.i] == '-' || (d.b[d.i] >= '0' && d.b[d.i] <= '9')) {
		num, err := d.number()
		if err != nil {
			return "", err
		}
		return bstr(num), nil
	}
	raw, err := d.stringValue()
	if err != nil {
		return "", err
	}
	if d.inLine {
		return bstr(raw), nil
	}
	return string(raw), nil
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

// numberToken reads a JSON number's bytes; null is errNull, any other literal a type mismatch (or the
// syntax error of a malformed one).
func (d *decoder) numberToken() ([]byte, error) {
	if d.i >= len(d.b) {
		return nil, d.syntax("unexpected end of line, want a value")
	}
	c := d.b[d.i]
	if c != '-' && (c < '0' || c > '9') {
		if d.isNull() {
			return nil, errNull
		}
		if err := d.checkLiteral(); err != nil {
			return nil, err
		}
		return nil, errTypeMismatch
	}
	return d.number()
}

// int decodes an integer. A number with a fraction or exponent is accepted when its value is integral
// (1e9, 5.0): some JSON writers print every number as a float.
func (d *decoder) int() (int64, error) {
	// Fast path: an optional minus and up to 18 digits (no leading zero) followed by neither a digit,
	// a fraction nor an exponent; anything else takes the general path below.
	i := d.i
	if i < len(d.b) && d.b[i] == '-' {
		i++
	}
	var v int64
	j := i
	for j < len(d.b) && j-i < 18 && d.b[j] >= '0' && d.b[j] <= '9' {
		v = v*10 + int64(d.b[j]-'0')
		j++
	}
	if j > i && (d.b[i] != '0' || j == i+1) && (j == len(d.b) || !numberGoesOn(d.b[j])) {
		if i > d.i {
			v = -v
		}
		d.i = j
		return v, nil
	}
	return d.intGeneral()
}

// intGeneral is int without its fast path: any JSON number, integral or not.
func (d *decoder) intGeneral() (int64, error) {
	num, err := d.numberToken()
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

// numberGoesOn reports whether c may continue a JSON number after its integer digits.
func numberGoesOn(c byte) bool { return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' }

func (d *decoder) float() (float64, error) {
	num, err := d.numberToken()
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
	Name string          `json:"name"`
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
		out[i] = Tenant{ID: id, Mode: t.Mode, Cold: t.Cold, Name: t.Name}
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
