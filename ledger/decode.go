package ledger

import (
	"encoding/json"
	"errors"
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
	// borrow: path and mid strings alias the line (Reader.BorrowStrings) when they need no
	// unescaping; inLine says whether the last rawString returned a slice of the line.
	borrow, inLine bool

	present fieldSet
	// ferrs are the line's type errors in line order (the scan continues so the line's syntax is
	// still checked); errBits has the field of each. Which ones count depends on the record's kind,
	// which may come later in the line: see firstFieldError.
	ferrs   []fieldError
	errBits fieldSet
}

// syntaxError is a line that is not one valid JSON object.
type syntaxError struct {
	col int // 1-based byte column
	msg string
}

func (e *syntaxError) Error() string {
	return "invalid JSON at column " + itoa(int64(e.col)) + ": " + e.msg
}

// fieldError is valid JSON with a known field of the wrong type.
type fieldError struct {
	field, msg string
	bit        field
}

func (e *fieldError) Error() string { return "field " + quote(e.field) + ": " + e.msg }

// errTypeMismatch is returned by the value parsers when the value is valid JSON of another type; the
// caller turns it into a fieldError naming the field and the value it got.
var errTypeMismatch = errors.New("type mismatch")

func (d *decoder) syntax(msg string) error { return &syntaxError{col: d.i + 1, msg: msg} }

// decode fills rec (which the caller has zeroed) from line. It returns a *syntaxError or nil; a
// field type error is left in d.ferrs (see firstFieldError).
func (d *decoder) decode(line []byte, rec *Record) error {
	d.b, d.i, d.present, d.ferrs, d.errBits = line, 0, fieldSet{}, d.ferrs[:0], fieldSet{}
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
	if d.i < len(d.b) && d.b[d.i] > ' ' { // compact JSON: usually no whitespace at all
		return
	}
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
	bit, ok := keyField(key)
	if !ok {
		return d.skip(0)
	}
	var err error
	start := d.i
	switch bit {
	case fK:
		rec.K, err = d.str(true)
	case fT:
		rec.T, err = d.int()
	case fTenant:
		rec.Tenant, err = d.id()
	case fConsumer:
		rec.Consumer, err = d.id()
	case fConn:
		rec.Conn, err = d.id()
	case fSeq:
		rec.Seq, err = d.int()
	case fOp:
		rec.Op, err = d.str(true)
	case fPath:
		rec.Path, err = d.lent(false)
	case fPod:
		rec.Pod, err = d.id()
	case fMID:
		rec.MID, err = d.lent(true)
	case fIntendedT:
		rec.IntendedT, err = d.int()
	case fDoneT:
		rec.DoneT, err = d.int()
	case fRes:
		rec.Res, err = d.str(true)
	case fStatus:
		var v int64
		v, err = d.int()
		rec.Status = int(v)
	case fSrc:
		rec.Src, err = d.str(false)
	case fPhase:
		rec.Phase, err = d.str(true)
	case fErr:
		rec.Err, err = d.str(false)
	case fReason:
		rec.Reason, err = d.str(true)
	case fSince:
		rec.Since, err = d.int()
	case fName:
		rec.Name, err = d.str(true)
	case fLabels:
		rec.Labels, err = d.labels()
	case fValue:
		rec.Value, err = d.float()
	case fConns:
		rec.Conns, err = d.int()
	case fBytesUp:
		rec.BytesUp, err = d.int()
	case fBytesDown:
		rec.BytesDown, err = d.int()
	case fCreatedUnixNs:
		rec.CreatedUnixNs, err = d.int()
	case fFromT:
		rec.FromT, err = d.int()
	case fToT:
		rec.ToT, err = d.int()
	case fFirstSince:
		rec.FirstSince, err = d.int()
	case fFinalCursor:
		rec.FinalCursor, err = d.int()
	case fDurable:
		rec.Durable, err = d.bool()
	case fDrained:
		rec.Drained, err = d.bool()
	case fID:
		rec.ID, err = d.id()
	case fKind:
		rec.Kind, err = d.str(true)
	case fTarget:
		rec.Target, err = d.str(true)
	case fParams:
		err = d.nested(&rec.Params)
	case fPID:
		var v int64
		v, err = d.int()
		rec.PID = int(v)
	case fSignal:
		rec.Signal, err = d.str(true)
	case fCode:
		var v int64
		if v, err = d.int(); err == nil {
			c := int(v)
			rec.Code = &c
		}
	case fV:
		var v int64
		v, err = d.int()
		rec.V = int(v)
	case fRunID:
		rec.RunID, err = d.id()
	case fScenario:
		rec.Scenario, err = d.str(false)
	case fSeed:
		rec.Seed, err = d.int()
	case fStartUnixNs:
		rec.StartUnixNs, err = d.int()
	case fBudget:
		var v float64
		if v, err = d.float(); err == nil {
			rec.Budget = &v
		}
	case fTenants:
		// A list of tenant objects on run records, a count on audit records: the value's shape
		// decides here, the kind's required fields decide later.
		if d.i < len(d.b) && d.b[d.i] == '[' {
			if rec.Tenants, err = d.tenants(); err == errTypeMismatch && !listOfObjects(d.b[start:]) {
				// a list of something else (audited tenant ids): only its length can count
				var items []json.RawMessage
				d.i = start
				bit = fTenantCount
				err = d.nested(&items)
				rec.AuditTenants = int64(len(items))
			}
		} else {
			bit = fTenantCount
			rec.AuditTenants, err = d.int()
		}
	case fBlock:
		rec.Block, err = d.id()
	case fOK:
		rec.OK, err = d.bool()
	case fRows:
		rec.Rows, err = d.int()
	case fError:
		rec.Error, err = d.str(false)
	case fAudit:
		rec.Audit, err = d.bool()
	case fProfile:
		rec.Profile, err = d.str(true)
	case fShard:
		err = d.nested(&rec.Shard)
	case fAbsent:
		rec.Absent, err = d.bool()
	case fBatch:
		rec.Batch, err = d.id()
	case fPods:
		rec.Pods, err = d.idList()
	case fCrashesPerPodYear:
		var v float64
		if v, err = d.float(); err == nil {
			rec.CrashesPerPodYear = &v
		}
	case fPodsInFleet:
		var v int64
		if v, err = d.int(); err == nil {
			n := int(v)
			rec.PodsInFleet = &n
		}
	case fThresholds:
		err = d.nested(&rec.Thresholds)
	case fMetrics:
		rec.Metrics, err = d.idList()
	case fMetricType:
		rec.MetricType, err = d.str(true)
	case fResync:
		rec.Resync, err = d.bool()
	case fProvenance:
		err = d.nested(&rec.Provenance)
	case fLoadT:
		rec.LoadT, err = d.int()
	case fInjectedBy:
		var v int64
		if v, err = d.int(); err == nil {
			if v < 0 || v > MaxShards {
				err = errTypeMismatch
			}
			rec.InjectedBy = int(v)
		}
	case fLoadAvg:
		err = d.nested(&rec.LoadAvg)
	case fTStart:
		rec.TStart, err = d.int()
	case fAfterSeq:
		rec.AfterSeq, err = d.int()
	case fEntries:
		rec.Entries, err = d.int()
	case fSize:
		rec.Size, err = d.int()
	case fRev:
		rec.Rev, err = d.int()
	case fMode:
		rec.Mode, err = d.str(true)
	case fCold:
		rec.Cold, err = d.bool()
	}
	if err == nil {
		d.present.add(bit)
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
	msg := err.Error()
	if err == errTypeMismatch {
		msg = "want " + want(bit) + ", got " + excerpt(d.b[start:d.i])
	}
	d.ferrs = append(d.ferrs, fieldError{field: string(key), msg: msg, bit: bit})
	d.errBits.add(bit)
	return nil
}

// firstFieldError is the first type error on a field that kind k defines, or nil: readers ignore
// fields they do not know on that kind, whatever type another kind gives the same name (a "code"
// string on a conn record is not the pod record's integer code). An unknown kind has none.
func (d *decoder) firstFieldError(k string) *fieldError {
	if d.errBits.empty() {
		return nil
	}
	known := setOf(fK) // "k" itself unusable: nothing else can be judged
	if kinds[k] != nil {
		known = knownFields(k)
	}
	if !d.errBits.intersects(known) {
		return nil
	}
	for i := range d.ferrs {
		if known.has(d.ferrs[i].bit) {
			return &d.ferrs[i]
		}
	}
	return nil
}

// listOfObjects reports whether the JSON array at the start of b is empty or starts with an object.
func listOfObjects(b []byte) bool {
	for _, c := range b[1:] {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', ']':
			return true
		}
		return false
	}
	return false
}
