package ledger

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// fieldEnc knows how to tell whether one Record field is unset and how to append it as `"name":value`.
type fieldEnc struct {
	zero func(*Record) bool
	enc  func([]byte, *Record) ([]byte, error)
}

func strField(name string, get func(*Record) string) fieldEnc {
	prefix := `"` + name + `":`
	return fieldEnc{
		zero: func(r *Record) bool { return get(r) == "" },
		enc:  func(b []byte, r *Record) ([]byte, error) { return appendString(append(b, prefix...), get(r)), nil },
	}
}

func intField(name string, get func(*Record) int64) fieldEnc {
	prefix := `"` + name + `":`
	return fieldEnc{
		zero: func(r *Record) bool { return get(r) == 0 },
		enc: func(b []byte, r *Record) ([]byte, error) {
			return strconv.AppendInt(append(b, prefix...), get(r), 10), nil
		},
	}
}

func floatField(name string, get func(*Record) float64) fieldEnc {
	prefix := `"` + name + `":`
	return fieldEnc{
		zero: func(r *Record) bool { return get(r) == 0 },
		enc: func(b []byte, r *Record) ([]byte, error) {
			return appendFloat(append(b, prefix...), get(r), name)
		},
	}
}

func boolField(name string, get func(*Record) bool) fieldEnc {
	prefix := `"` + name + `":`
	return fieldEnc{
		zero: func(r *Record) bool { return !get(r) },
		enc: func(b []byte, r *Record) ([]byte, error) {
			return strconv.AppendBool(append(b, prefix...), get(r)), nil
		},
	}
}

func jsonField(name string, isZero func(*Record) bool, get func(*Record) any) fieldEnc {
	prefix := `"` + name + `":`
	return fieldEnc{
		zero: isZero,
		enc: func(b []byte, r *Record) ([]byte, error) {
			v, err := json.Marshal(get(r))
			if err != nil {
				return b, errors.New("field " + quote(name) + ": " + err.Error())
			}
			return append(append(b, prefix...), v...), nil
		},
	}
}

// encoders is indexed by field (fields.go).
var encoders = buildEncoders()

func buildEncoders() (encoders [fCount]fieldEnc) {
	set := func(f field, e fieldEnc) { encoders[f] = e }
	set(fV, intField("v", func(r *Record) int64 { return int64(r.V) }))
	set(fRunID, strField("run_id", func(r *Record) string { return r.RunID }))
	set(fScenario, strField("scenario", func(r *Record) string { return r.Scenario }))
	set(fSeed, intField("seed", func(r *Record) int64 { return r.Seed }))
	set(fStartUnixNs, intField("start_unix_ns", func(r *Record) int64 { return r.StartUnixNs }))
	set(fBudget, fieldEnc{
		zero: func(r *Record) bool { return r.Budget == nil },
		enc: func(b []byte, r *Record) ([]byte, error) {
			return appendFloat(append(b, `"budget":`...), *r.Budget, "budget")
		}})
	set(fTenants, fieldEnc{zero: func(r *Record) bool { return r.Tenants == nil }, enc: appendTenants})
	set(fPods, fieldEnc{zero: func(r *Record) bool { return r.Pods == nil }, enc: appendPods})
	set(fTarget, strField("target", func(r *Record) string { return r.Target }))
	set(fCrashesPerPodYear, fieldEnc{
		zero: func(r *Record) bool { return r.CrashesPerPodYear == nil },
		enc: func(b []byte, r *Record) ([]byte, error) {
			if r.CrashesPerPodYear == nil {
				return append(b, `"crashes_per_pod_year":12`...), nil
			}
			return appendFloat(append(b, `"crashes_per_pod_year":`...), *r.CrashesPerPodYear, "crashes_per_pod_year")
		}})
	set(fPodsInFleet, fieldEnc{
		zero: func(r *Record) bool { return r.PodsInFleet == nil },
		enc: func(b []byte, r *Record) ([]byte, error) {
			n := 20
			if r.PodsInFleet != nil {
				n = *r.PodsInFleet
			}
			return strconv.AppendInt(append(b, `"pods_in_fleet":`...), int64(n), 10), nil
		}})
	set(fThresholds, jsonField("thresholds", func(r *Record) bool { return r.Thresholds == nil },
		func(r *Record) any { return r.Thresholds }))
	set(fT, intField("t", func(r *Record) int64 { return r.T }))
	set(fTenant, strField("tenant", func(r *Record) string { return r.Tenant }))
	set(fPod, strField("pod", func(r *Record) string { return r.Pod }))
	set(fConsumer, strField("consumer", func(r *Record) string { return r.Consumer }))
	set(fConn, strField("conn", func(r *Record) string { return r.Conn }))
	set(fSeq, intField("seq", func(r *Record) int64 { return r.Seq }))
	set(fOp, strField("op", func(r *Record) string { return r.Op }))
	set(fPath, strField("path", func(r *Record) string { return r.Path }))
	set(fPhase, strField("phase", func(r *Record) string { return r.Phase }))
	set(fErr, strField("err", func(r *Record) string { return r.Err }))
	set(fMID, strField("mid", func(r *Record) string { return r.MID }))
	set(fSrc, strField("src", func(r *Record) string { return r.Src }))
	set(fIntendedT, intField("intended_t", func(r *Record) int64 { return r.IntendedT }))
	set(fDoneT, intField("done_t", func(r *Record) int64 { return r.DoneT }))
	set(fRes, strField("res", func(r *Record) string { return r.Res }))
	set(fStatus, intField("status", func(r *Record) int64 { return int64(r.Status) }))
	set(fReason, strField("reason", func(r *Record) string { return r.Reason }))
	set(fSince, intField("since", func(r *Record) int64 { return r.Since }))
	set(fID, strField("id", func(r *Record) string { return r.ID }))
	set(fKind, strField("kind", func(r *Record) string { return r.Kind }))
	set(fParams, jsonField("params", func(r *Record) bool { return r.Params == nil },
		func(r *Record) any { return r.Params }))
	set(fPID, intField("pid", func(r *Record) int64 { return int64(r.PID) }))
	set(fSignal, strField("signal", func(r *Record) string { return r.Signal }))
	set(fCode, fieldEnc{
		zero: func(r *Record) bool { return r.Code == nil },
		enc: func(b []byte, r *Record) ([]byte, error) {
			return strconv.AppendInt(append(b, `"code":`...), int64(*r.Code), 10), nil
		}})
	set(fName, strField("name", func(r *Record) string { return r.Name }))
	set(fLabels, fieldEnc{zero: func(r *Record) bool { return r.Labels == nil }, enc: appendLabels})
	set(fValue, floatField("value", func(r *Record) float64 { return r.Value }))
	set(fConns, intField("conns", func(r *Record) int64 { return r.Conns }))
	set(fBytesUp, intField("bytes_up", func(r *Record) int64 { return r.BytesUp }))
	set(fBytesDown, intField("bytes_down", func(r *Record) int64 { return r.BytesDown }))
	set(fCreatedUnixNs, intField("created_unix_ns", func(r *Record) int64 { return r.CreatedUnixNs }))
	set(fFromT, intField("from_t", func(r *Record) int64 { return r.FromT }))
	set(fToT, intField("to_t", func(r *Record) int64 { return r.ToT }))
	set(fFirstSince, intField("first_since", func(r *Record) int64 { return r.FirstSince }))
	set(fFinalCursor, intField("final_cursor", func(r *Record) int64 { return r.FinalCursor }))
	set(fDurable, boolField("durable", func(r *Record) bool { return r.Durable }))
	set(fDrained, boolField("drained", func(r *Record) bool { return r.Drained }))
	set(fBlock, strField("block", func(r *Record) string { return r.Block }))
	set(fOK, boolField("ok", func(r *Record) bool { return r.OK }))
	set(fTenantCount, intField("tenants", func(r *Record) int64 { return r.AuditTenants }))
	set(fRows, intField("rows", func(r *Record) int64 { return r.Rows }))
	set(fError, strField("error", func(r *Record) string { return r.Error }))
	set(fAudit, boolField("audit", func(r *Record) bool { return r.Audit }))
	set(fProfile, strField("profile", func(r *Record) string { return r.Profile }))
	set(fShard, jsonField("shard", func(r *Record) bool { return r.Shard == nil },
		func(r *Record) any { return r.Shard }))
	set(fAbsent, boolField("absent", func(r *Record) bool { return r.Absent }))
	set(fMetrics, fieldEnc{zero: func(r *Record) bool { return r.Metrics == nil }, enc: func(b []byte, r *Record) ([]byte, error) {
		return appendNames(b, "metrics", r.Metrics), nil
	}})
	set(fMetricType, strField("type", func(r *Record) string { return r.MetricType }))
	set(fBatch, strField("batch", func(r *Record) string { return r.Batch }))
	set(fResync, boolField("resync", func(r *Record) bool { return r.Resync }))
	set(fTStart, intField("t_start", func(r *Record) int64 { return r.TStart }))
	set(fAfterSeq, intField("after_seq", func(r *Record) int64 { return r.AfterSeq }))
	set(fEntries, intField("entries", func(r *Record) int64 { return r.Entries }))
	set(fSize, intField("size", func(r *Record) int64 { return r.Size }))
	set(fRev, intField("rev", func(r *Record) int64 { return r.Rev }))
	set(fMode, strField("mode", func(r *Record) string { return r.Mode }))
	set(fCold, boolField("cold", func(r *Record) bool { return r.Cold }))
	set(fProvenance, jsonField("provenance", func(r *Record) bool { return r.Provenance == nil },
		func(r *Record) any { return r.Provenance }))
	set(fLoadT, intField("load_t", func(r *Record) int64 { return r.LoadT }))
	set(fInjectedBy, intField("injected_by", func(r *Record) int64 { return int64(r.InjectedBy) }))
	set(fLoadAvg, jsonField("load_avg", func(r *Record) bool { return r.LoadAvg == nil },
		func(r *Record) any { return r.LoadAvg }))
	return encoders
}

// fieldOrder is each kind's field order on the wire (the spec table's order, optional fields
// included); fields a record sets outside its kind's list follow in field order.
var fieldOrder = map[string][]field{
	KindRun: {fV, fRunID, fScenario, fSeed, fStartUnixNs, fBudget, fTenants, fPods, fTarget,
		fCrashesPerPodYear, fPodsInFleet, fThresholds, fAudit, fProfile, fShard, fMetrics, fResync, fProvenance},
	KindMut:       {fMID, fTenant, fOp, fPath, fSrc, fIntendedT, fT, fDoneT, fRes, fStatus, fPod, fBatch},
	KindEv:        {fConsumer, fTenant, fConn, fT, fSeq, fOp, fPath, fSrc, fPod, fBatch},
	KindReset:     {fConsumer, fTenant, fConn, fT, fSeq, fReason, fPath, fOp},
	KindConn:      {fConsumer, fTenant, fConn, fT, fPhase, fPod, fSince, fErr, fKind},
	KindFault:     {fID, fKind, fTarget, fPhase, fT, fParams, fInjectedBy},
	KindPod:       {fPod, fPhase, fT, fPID, fSignal, fCode},
	KindMetric:    {fPod, fT, fName, fLabels, fValue, fMetricType},
	KindProxy:     {fName, fTenant, fT, fConns, fBytesUp, fBytesDown},
	KindPersisted: {fTenant, fSeq, fOp, fPath, fCreatedUnixNs, fAbsent},
	KindConsumer:  {fConsumer, fTenant, fFromT, fToT, fFirstSince, fFinalCursor, fDurable, fKind},
	KindEnd:       {fT, fDrained, fReason, fLoadAvg, fLoadT},
	KindDrop:      {fTenant, fIntendedT, fBlock},
	KindAudit:     {fT, fOK, fTenantCount, fRows, fError},
	KindResync:    {fConsumer, fTenant, fConn, fT, fTStart, fAfterSeq, fReason, fOK, fEntries, fError},
	KindListed:    {fConsumer, fT, fPath, fSize, fRev},
	KindTenant:    {fID, fMode, fCold, fName},
}

// listed is the union of each kind's fieldOrder, to find the extras quickly.
var listed = func() map[string]fieldSet {
	m := make(map[string]fieldSet, len(fieldOrder))
	for k, fs := range fieldOrder {
		m[k] = setOf(fs...)
	}
	return m
}()

// extras lists, per kind, the fields outside its fieldOrder (written only when set).
var extras = func() map[string][]field {
	m := make(map[string][]field, len(fieldOrder))
	for k := range fieldOrder {
		skip := listed[k].or(setOf(fK, fTenantCount)) // "tenants" is a count only on audit records
		if listed[k].intersects(setOf(fTenants, fTenantCount)) {
			skip = skip.or(setOf(fTenants, fTenantCount)) // one "tenants" per line, the kind's own
		}
		for f := field(1); f < fCount; f++ {
			if !skip.has(f) {
				m[k] = append(m[k], f)
			}
		}
	}
	return m
}()

// AppendRecord appends rec as one JSON line (with its newline) to b: the kind's required fields
// always (zero values included), its optional and any other fields when set.
func AppendRecord(b []byte, rec *Record) ([]byte, error) {
	spec := kinds[rec.K]
	if spec == nil {
		return b, errors.New("ledger: cannot write a record of unknown kind " + quote(rec.K))
	}
	start := len(b)
	b = append(b, `{"k":`...)
	b = appendString(b, rec.K)
	var err error
	for _, f := range fieldOrder[rec.K] {
		e := &encoders[f]
		if !spec.required.has(f) && e.zero(rec) {
			continue
		}
		b = append(b, ',')
		if b, err = e.enc(b, rec); err != nil {
			return b[:start], errors.New("ledger: k " + quote(rec.K) + ": " + err.Error())
		}
	}
	for _, i := range extras[rec.K] {
		if encoders[i].zero(rec) {
			continue
		}
		b = append(b, ',')
		if b, err = encoders[i].enc(b, rec); err != nil {
			return b[:start], errors.New("ledger: k " + quote(rec.K) + ": " + err.Error())
		}
	}
	return append(b, '}', '\n'), nil
}

func appendTenants(b []byte, r *Record) ([]byte, error) {
	b = append(b, `"tenants":[`...)
	for i, t := range r.Tenants {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendString(b, t.ID)
		b = append(b, `,"mode":`...)
		b = appendString(b, t.Mode)
		b = append(b, `,"cold":`...)
		b = strconv.AppendBool(b, t.Cold)
		if t.Name != "" {
			b = append(b, `,"name":`...)
			b = appendString(b, t.Name)
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

func appendPods(b []byte, r *Record) ([]byte, error) { return appendNames(b, "pods", r.Pods), nil }

// appendNames writes "name":[...] with every string of list.
func appendNames(b []byte, name string, list []string) []byte {
	b = append(append(append(b, '"'), name...), `":[`...)
	for i, p := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, p)
	}
	return append(b, ']')
}

// appendLabels writes labels sorted by name, so equal records are equal bytes.
func appendLabels(b []byte, r *Record) ([]byte, error) {
	b = append(b, `"labels":{`...)
	var keysBuf [8]string
	keys := keysBuf[:0]
	for k := range r.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, r.Labels[k])
	}
	return append(b, '}'), nil
}

// appendFloat formats like encoding/json (shortest repr, exponent only for very large or small).
func appendFloat(b []byte, f float64, name string) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, errors.New("field " + quote(name) + ": " + strconv.FormatFloat(f, 'g', -1, 64) + " is not representable in JSON")
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string: quotes, backslashes and control characters escaped,
// invalid UTF-8 replaced by U+FFFD (as encoding/json does).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
