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
	var bit field
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
		rec.Path, err = d.lent(false)
	case "pod":
		bit = fPod
		rec.Pod, err = d.id()
	case "mid":
		bit = fMID
		rec.MID, err = d.lent(true)
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
		var v float64
		if v, err = d.float(); err == nil {
			rec.Budget = &v
		}
	case "tenants":
		// A list of tenant objects on run records, a count on audit records: the value's shape
		// decides here, the kind's required fields decide later.
		if d.i < len(d.b) && d.b[d.i] == '[' {
			bit = fTenants
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
	case "block":
		bit = fBlock
		rec.Block, err = d.id()
	case "ok":
		bit = fOK
		rec.OK, err = d.bool()
	case "rows":
		bit = fRows
		rec.Rows, err = d.int()
	case "error":
		bit = fError
		rec.Error, err = d.str(false)
	case "audit":
		bit = fAudit
		rec.Audit, err = d.bool()
	case "profile":
		bit = fProfile
		rec.Profile, err = d.str(true)
	case "shard":
		bit = fShard
		err = d.nested(&rec.Shard)
	case "absent":
		bit = fAbsent
		rec.Absent, err = d.bool()
	case "batch":
		bit = fBatch
		rec.Batch, err = d.id()
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
	case "metrics":
		bit = fMetrics
		rec.Metrics, err = d.idList()
	case "type":
		bit = fMetricType
		rec.MetricType, err = d.str(true)
	case "resync":
		bit = fResync
		rec.Resync, err = d.bool()
	case "provenance":
		bit = fProvenance
		err = d.nested(&rec.Provenance)
	case "load_t":
		bit = fLoadT
		rec.LoadT, err = d.int()
	case "injected_by":
		bit = fInjectedBy
		var v int64
		if v, err = d.int(); err == nil {
			if v < 0 || v > MaxShards {
				err = errTypeMismatch
			}
			rec.InjectedBy = int(v)
		}
	case "load_avg":
		bit = fLoadAvg
		err = d.nested(&rec.LoadAvg)
	case "t_start":
		bit = fTStart
		rec.TStart, err = d.int()
	case "after_seq":
		bit = fAfterSeq
		rec.AfterSeq, err = d.int()
	case "entries":
		bit = fEntries
		rec.Entries, err = d.int()
	case "size":
		bit = fSize
		rec.Size, err = d.int()
	case "rev":
		bit = fRev
		rec.Rev, err = d.int()
	case "mode":
		bit = fMode
		rec.Mode, err = d.str(true)
	case "cold":
		bit = fCold
		rec.Cold, err = d.bool()
	default:
		return d.skip(0)
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
