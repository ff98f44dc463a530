package ledger

import (
	"encoding/binary"
	"math/bits"
)

// field names one JSON field the decoder knows: its index in a fieldSet and in fieldNames.
type field uint8

// The fields, one per JSON name the decoder knows, so required fields can be checked per kind
// without a second pass over the line.
const (
	fK field = iota
	fV
	fRunID
	fScenario
	fSeed
	fStartUnixNs
	fBudget
	fTenants
	fPods
	fTarget
	fCrashesPerPodYear
	fPodsInFleet
	fThresholds
	fT
	fTenant
	fPod
	fConsumer
	fConn
	fSeq
	fOp
	fPath
	fPhase
	fErr
	fMID
	fSrc
	fIntendedT
	fDoneT
	fRes
	fStatus
	fReason
	fSince
	fID
	fKind
	fParams
	fPID
	fSignal
	fCode
	fName
	fLabels
	fValue
	fConns
	fBytesUp
	fBytesDown
	fCreatedUnixNs
	fFromT
	fToT
	fFirstSince
	fFinalCursor
	fDurable
	fDrained
	fBlock
	fOK
	fTenantCount // "tenants" as a number (audit); fTenants is the list (run)
	fRows
	fError
	fAudit
	fProfile
	fShard
	fAbsent
	fMetrics    // run: the families the scenario named (seqgate's addition)
	fMetricType // metric: counter, gauge or untyped, from the scrape (seqgate's addition)
	fBatch
	fResync     // run: consumers list after resets
	fTStart     // resync: the listing began
	fAfterSeq   // resync: the reset's seq
	fEntries    // resync: entries listed
	fSize       // listed
	fRev        // listed
	fMode       // tenant
	fCold       // tenant
	fProvenance // run: what was judged (seqgate's addition)
	fLoadAvg    // end: the machine's load averages at the end (seqgate's addition)
	fInjectedBy // fault: the shard that injected it (seqgate's addition)
	fLoadT      // end: when the load began, on the ledger's clock (seqgate's addition)
	fCount      // number of fields; keep last
)

// fieldWords is the number of 64-bit words of a fieldSet: room for fieldWords*64 fields.
const fieldWords = 2

// A compile-time check that every field fits in a fieldSet: the constant below overflows (and the
// build fails) when fCount exceeds fieldWords*64. Grow fieldWords then.
const _ = uint(fieldWords*64 - int(fCount))

// fieldSet is a set of fields, one bit each. It is a value (an array, no allocation) and its
// methods are small enough to be inlined on the decoder's hot path.
type fieldSet [fieldWords]uint64

// setOf returns the set of the given fields.
func setOf(fs ...field) fieldSet {
	var s fieldSet
	for _, f := range fs {
		s.add(f)
	}
	return s
}

// add puts f in s. (Every field is below fieldWords*64, so the modulo changes nothing; it lets the
// compiler drop the bounds check on the decoder's hot path.)
func (s *fieldSet) add(f field) { s[(f>>6)%fieldWords] |= 1 << (f & 63) }

// has reports whether f is in s.
func (s fieldSet) has(f field) bool { return s[(f>>6)%fieldWords]&(1<<(f&63)) != 0 }

// or is the union of s and o.
func (s fieldSet) or(o fieldSet) fieldSet {
	for i := range s {
		s[i] |= o[i]
	}
	return s
}

// andNot is s without the fields of o.
func (s fieldSet) andNot(o fieldSet) fieldSet {
	for i := range s {
		s[i] &^= o[i]
	}
	return s
}

// intersects reports whether s and o share a field.
func (s fieldSet) intersects(o fieldSet) bool {
	var x uint64
	for i := range s {
		x |= s[i] & o[i]
	}
	return x != 0
}

// empty reports whether s has no field.
func (s fieldSet) empty() bool { return s == fieldSet{} }

// first is the lowest field of s; ok is false when s is empty.
func (s fieldSet) first() (f field, ok bool) {
	for w, x := range s {
		if x != 0 {
			return field(w*64 + bits.TrailingZeros64(x)), true
		}
	}
	return 0, false
}

// fieldNames maps a field to its JSON name (for error messages); one entry per field.
var fieldNames = [...]string{
	"k", "v", "run_id", "scenario", "seed", "start_unix_ns", "budget", "tenants", "pods", "target",
	"crashes_per_pod_year", "pods_in_fleet", "thresholds", "t", "tenant", "pod", "consumer", "conn",
	"seq", "op", "path", "phase", "err", "mid", "src", "intended_t", "done_t", "res", "status",
	"reason", "since", "id", "kind", "params", "pid", "signal", "code", "name", "labels", "value",
	"conns", "bytes_up", "bytes_down", "created_unix_ns", "from_t", "to_t", "first_since",
	"final_cursor", "durable", "drained", "block", "ok", "tenants", "rows", "error", "audit", "profile",
	"shard",
	"absent",
	"metrics", "type",
	"batch",
	"resync", "t_start", "after_seq", "entries", "size", "rev", "mode", "cold",
	"provenance", "load_avg", "injected_by", "load_t",
}

// fieldNames has exactly one name per field: either constant below overflows otherwise.
const (
	_ = uint(len(fieldNames) - int(fCount))
	_ = uint(int(fCount) - len(fieldNames))
)

// kindSpec is one row of the spec's table: the fields a kind must carry and the allowed values of
// its enumerated field, if any.
type kindSpec struct {
	required fieldSet
	phases   []string // allowed values of "phase" (nil: the kind has no phase)
	postRun  bool     // persisted, consumer, end: written after the run's records
	anywhere bool     // drop, audit: allowed among the run's records and among the post-run ones
}

// kinds is the spec table (docs/ledger-v1.md). An explicit map, not init() registration.
var kinds = map[string]*kindSpec{
	// run.tenants may be left out for tenant records after the run record: the Reader requires one or
	// the other (tenants.go).
	KindRun:   {required: setOf(fV, fRunID, fScenario, fSeed, fStartUnixNs, fPods, fTarget)},
	KindMut:   {required: setOf(fMID, fTenant, fOp, fPath, fIntendedT, fT, fDoneT, fRes, fPod)},
	KindEv:    {required: setOf(fConsumer, fTenant, fConn, fT, fSeq, fOp, fPath, fPod)},
	KindReset: {required: setOf(fConsumer, fTenant, fConn, fT, fSeq, fReason)},
	KindConn: {required: setOf(fConsumer, fTenant, fConn, fT, fPhase, fPod, fSince),
		phases: []string{"open", "close", "fail"}},
	KindFault:     {required: setOf(fID, fKind, fTarget, fPhase, fT), phases: []string{"start", "stop"}},
	KindPod:       {required: setOf(fPod, fPhase, fT), phases: []string{"start", "ready", "crash", "exit"}},
	KindMetric:    {required: setOf(fPod, fT, fName, fLabels, fValue)},
	KindProxy:     {required: setOf(fName, fT, fConns, fBytesUp, fBytesDown)},
	KindPersisted: {required: setOf(fTenant, fSeq, fOp, fPath), postRun: true},
	KindConsumer: {required: setOf(fConsumer, fTenant, fFromT, fToT, fFirstSince, fFinalCursor, fDurable),
		postRun: true},
	KindEnd: {required: setOf(fT, fDrained), postRun: true},
	// The drop and audit kinds. A drop is written when its arrival was due, among the run's records;
	// audit attempts come after the run, with persisted.
	KindDrop:  {required: setOf(fTenant, fIntendedT), anywhere: true},
	KindAudit: {required: setOf(fT, fOK, fTenantCount, fRows), anywhere: true},
	// A resync is written when a consumer's listing after a reset ended, its listed entries just
	// before it; tenant records follow the run record.
	KindResync: {required: setOf(fConsumer, fTenant, fConn, fT, fTStart, fAfterSeq, fReason, fOK, fEntries)},
	KindListed: {required: setOf(fConsumer, fT, fPath)},
	KindTenant: {required: setOf(fID, fMode, fCold)},
}

// IsPostRun reports whether records of kind k come after the run's records (persisted, consumer, end).
func IsPostRun(k string) bool {
	s := kinds[k]
	return s != nil && s.postRun
}

// knownFields is every field kind k defines (required and optional, as in its fieldOrder): a type
// error on any other field is ignored, because readers ignore fields they do not know on that kind.
func knownFields(k string) fieldSet {
	known := listed[k]
	known.add(fK)
	if known.has(fTenants) || known.has(fTenantCount) {
		// one name, two shapes: a wrong shape is this kind's error
		known.add(fTenants)
		known.add(fTenantCount)
	}
	return known
}

// IsAnywhere reports whether records of kind k may appear both among the run's records and after
// them (drop, audit: the spec's additions do not place them).
func IsAnywhere(k string) bool {
	s := kinds[k]
	return s != nil && s.anywhere
}

// KnownKind reports whether k is one of the kinds of ledger v1.
func KnownKind(k string) bool { return kinds[k] != nil }

// firstMissing names the lowest required field absent from present.
func firstMissing(required, present fieldSet) string {
	if f, ok := required.andNot(present).first(); ok {
		return fieldNames[f]
	}
	return ""
}

// validate checks a decoded record of a known kind against the spec table: required fields and the
// allowed values of enumerated fields. It returns the field at fault and why.
func validate(r *Record, spec *kindSpec, present fieldSet) (field, msg string) {
	if r.K == KindRun && !present.has(fTenants) && present.has(fTenantCount) {
		return "tenants", `want list of {"id","mode","cold"}, got a count or a list of ids`
	}
	if f := firstMissing(spec.required, present); f != "" {
		return f, "missing (required for k " + quote(r.K) + ")"
	}
	if spec.phases != nil && !oneOf(r.Phase, spec.phases) {
		return "phase", "want one of " + list(spec.phases) + ", got " + quote(r.Phase)
	}
	switch r.K {
	case KindRun:
		if r.V != Version {
			return "v", "unsupported ledger version " + itoa(int64(r.V)) + ", this reader knows 1"
		}
		if !oneOf(r.Target, targets) {
			return "target", "want one of " + list(targets) + ", got " + quote(r.Target)
		}
		if r.Shard != nil && (r.Shard.N < 1 || r.Shard.N > MaxShards || r.Shard.K < 1 || r.Shard.K > r.Shard.N) {
			return "shard", "want {\"k\": K, \"n\": N} with 1 <= K <= N <= " + itoa(MaxShards) + ", got k " + itoa(int64(r.Shard.K)) + " n " + itoa(int64(r.Shard.N))
		}
		for i, t := range r.Tenants {
			if t.ID == "" {
				return "tenants", "tenant " + itoa(int64(i)) + ": missing id"
			}
			if !oneOf(t.Mode, modes) {
				return "tenants", "tenant " + quote(t.ID) + ": mode want one of " + list(modes) + ", got " + quote(t.Mode)
			}
		}
	case KindMut:
		if !oneOf(r.Res, results) {
			return "res", "want one of " + list(results) + ", got " + quote(r.Res)
		}
	case KindTenant:
		if r.ID == "" {
			return "id", "want a tenant id, got an empty string"
		}
		if !oneOf(r.Mode, modes) {
			return "mode", "want one of " + list(modes) + ", got " + quote(r.Mode)
		}
	case KindResync:
		if r.Entries < 0 {
			return "entries", "want a count >= 0, got " + itoa(r.Entries)
		}
	case KindListed:
		if r.Size < 0 {
			return "size", "want a size >= 0, got " + itoa(r.Size)
		}
	case KindAudit:
		if r.Rows < 0 {
			return "rows", "want a count >= 0, got " + itoa(r.Rows)
		}
		if r.AuditTenants < 0 {
			return "tenants", "want a count >= 0, got " + itoa(r.AuditTenants)
		}
	}
	return "", ""
}

var (
	targets = []string{"eventlogd", "external"}
	modes   = []string{"dedicated", "shared"}
	results = []string{ResOK, ResErr, ResTimeout}
)

func oneOf(s string, allowed []string) bool {
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	return false
}

func list(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += "|"
		}
		out += x
	}
	return out
}

// keyTable finds a field by its JSON name: an open-addressing table (linear probing, at most a
// quarter full) over fieldNames, so that the decoder's per-key dispatch is a multiply, usually one
// word compare, and a switch on the field's number. Each entry keeps its name's first eight bytes
// packed in a word (pack8). A name given to two fields ("tenants": the run's list and the audit's
// count) finds the first; the decoder tells them apart by the value's shape.
var keyTable = func() (t [keyTableSize]keyEntry) {
	for f, name := range fieldNames {
		if _, dup := lookupKey(&t, []byte(name)); dup {
			continue
		}
		w := pack8([]byte(name))
		i := keyHash(w, len(name))
		for t[i].name != "" {
			i = (i + 1) % keyTableSize
		}
		t[i] = keyEntry{w: w, name: name, f: field(f)}
	}
	return t
}()

type keyEntry struct {
	w    uint64 // pack8(name)
	name string // "" = empty slot
	f    field
}

// keyTableSize is a power of two at least four times the number of fields (a compile-time check
// below fails otherwise), so that probes stay short.
const (
	keyTableBits = 9
	keyTableSize = 1 << keyTableBits
)

const _ = uint(keyTableSize - 4*int(fCount))

// keyHash hashes a key (its packed first bytes and its length) into keyTable's range.
func keyHash(w uint64, n int) uint32 {
	return uint32(((w ^ uint64(n)<<56) * 0x9e3779b97f4a7c15) >> (64 - keyTableBits))
}

// keyField is the field named key, if any.
func keyField(key []byte) (field, bool) { return lookupKey(&keyTable, key) }

func lookupKey(t *[keyTableSize]keyEntry, key []byte) (field, bool) {
	w := pack8(key)
	for i := keyHash(w, len(key)); ; i = (i + 1) % keyTableSize {
		e := &t[i]
		if e.name == "" {
			return 0, false
		}
		if e.w == w && len(e.name) == len(key) && (len(key) <= 8 || e.name[8:] == string(key[8:])) {
			return e.f, true
		}
	}
}

// pack8 is b's first eight bytes (fewer: zero bytes after them) as a little-endian word. It reads
// the word at once when b's capacity allows (a key or value is a slice of a longer line).
func pack8(b []byte) uint64 {
	if cap(b) >= 8 {
		w := binary.LittleEndian.Uint64(b[:8])
		if len(b) < 8 {
			w &= 1<<(8*uint(len(b))) - 1
		}
		return w
	}
	var w uint64
	for i, c := range b {
		w |= uint64(c) << (8 * uint(i))
	}
	return w
}
