package ledger

import "math/bits"

// Presence bits: one per JSON field the decoder knows, so required fields can be checked per kind
// without a second pass over the line.
const (
	fK uint64 = 1 << iota
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
	fCount // number of fields; keep last
)

// fieldNames maps a presence bit's index to its JSON name (for error messages).
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
}

// kindSpec is one row of the spec's table: the fields a kind must carry and the allowed values of
// its enumerated field, if any.
type kindSpec struct {
	required uint64
	phases   []string // allowed values of "phase" (nil: the kind has no phase)
	postRun  bool     // persisted, consumer, end: written after the run's records
	anywhere bool     // drop, audit: allowed among the run's records and among the post-run ones
}

// kinds is the spec table (docs/ledger-v1.md). An explicit map, not init() registration.
var kinds = map[string]*kindSpec{
	KindRun:   {required: fV | fRunID | fScenario | fSeed | fStartUnixNs | fTenants | fPods | fTarget},
	KindMut:   {required: fMID | fTenant | fOp | fPath | fIntendedT | fT | fDoneT | fRes | fPod},
	KindEv:    {required: fConsumer | fTenant | fConn | fT | fSeq | fOp | fPath | fPod},
	KindReset: {required: fConsumer | fTenant | fConn | fT | fSeq | fReason},
	KindConn: {required: fConsumer | fTenant | fConn | fT | fPhase | fPod | fSince,
		phases: []string{"open", "close", "fail"}},
	KindFault:     {required: fID | fKind | fTarget | fPhase | fT, phases: []string{"start", "stop"}},
	KindPod:       {required: fPod | fPhase | fT, phases: []string{"start", "ready", "crash", "exit"}},
	KindMetric:    {required: fPod | fT | fName | fLabels | fValue},
	KindProxy:     {required: fName | fT | fConns | fBytesUp | fBytesDown},
	KindPersisted: {required: fTenant | fSeq | fOp | fPath, postRun: true},
	KindConsumer: {required: fConsumer | fTenant | fFromT | fToT | fFirstSince | fFinalCursor | fDurable,
		postRun: true},
	KindEnd: {required: fT | fDrained, postRun: true},
	// The drop and audit kinds. A drop is written when its arrival was due, among the run's records;
	// audit attempts come after the run, with persisted.
	KindDrop:  {required: fTenant | fIntendedT, anywhere: true},
	KindAudit: {required: fT | fOK | fTenantCount | fRows, anywhere: true},
}

// IsPostRun reports whether records of kind k come after the run's records (persisted, consumer, end).
func IsPostRun(k string) bool {
	s := kinds[k]
	return s != nil && s.postRun
}

// knownFields is every field kind k defines (required and optional, as in its fieldOrder): a type
// error on any other field is ignored, because readers ignore fields they do not know on that kind.
func knownFields(k string) uint64 {
	known := fK | listed[k]
	if known&(fTenants|fTenantCount) != 0 {
		known |= fTenants | fTenantCount // one name, two shapes: a wrong shape is this kind's error
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
func firstMissing(required, present uint64) string {
	miss := required &^ present
	if miss == 0 {
		return ""
	}
	return fieldNames[bits.TrailingZeros64(miss)]
}

// validate checks a decoded record of a known kind against the spec table: required fields and the
// allowed values of enumerated fields. It returns the field at fault and why.
func validate(r *Record, spec *kindSpec, present uint64) (field, msg string) {
	if r.K == KindRun && present&fTenants == 0 && present&fTenantCount != 0 {
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
