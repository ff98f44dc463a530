// Package ledger reads and writes ledger v1: the JSON Lines record of everything a run observed
// (docs/ledger-v1.md). It is the seam between the harness, which writes, and the verifier, which judges.
package ledger

// Version is the ledger format version this package reads and writes.
const Version = 1

// Record kinds (the "k" field).
const (
	KindRun       = "run"
	KindMut       = "mut"
	KindEv        = "ev"
	KindReset     = "reset"
	KindConn      = "conn"
	KindFault     = "fault"
	KindPod       = "pod"
	KindMetric    = "metric"
	KindProxy     = "proxy"
	KindPersisted = "persisted"
	KindConsumer  = "consumer"
	KindEnd       = "end"
	KindDrop      = "drop"   // an arrival the open model did not send
	KindAudit     = "audit"  // one attempt of the after-run audit
	KindResync    = "resync" // a consumer's listing after a reset, written when the listing ended
	KindListed    = "listed" // one entry of that listing, just before its resync record
	KindTenant    = "tenant" // a tenant of the run, right after the run record (instead of run.tenants)
)

// Mutation results (mut.res).
const (
	ResOK      = "ok"
	ResErr     = "err"
	ResTimeout = "timeout"
)

// Tenant is one entry of the run record's tenant list.
type Tenant struct {
	ID   string `json:"id"`
	Mode string `json:"mode"` // dedicated | shared
	Cold bool   `json:"cold"`
	// Name is the scenario's name of the tenant (e.g. tenant_2), seqgate's addition: the name faults
	// and thresholds use, beside the service's id. Empty in ledgers that predate it.
	Name string `json:"name,omitempty"`
}

// Shard is the run record's shard field: this ledger is agent K's of the run's N (1 <= K <= N).
// The N ledgers of one run are merged by Open into one run; a set with a shard missing or given
// twice is refused.
type Shard struct {
	K int `json:"k"`
	N int `json:"n"`
}

// Record is one ledger line. It is a flat union of every kind's fields so that one decode serves all
// kinds on the hot path; which fields are meaningful depends on K (see the spec table). Times are
// nanoseconds since the run started on the harness's monotonic clock.
type Record struct {
	K string `json:"k"`

	// run
	V                 int                 `json:"v,omitempty"`
	RunID             string              `json:"run_id,omitempty"`
	Scenario          string              `json:"scenario,omitempty"`
	Seed              int64               `json:"seed,omitempty"`
	StartUnixNs       int64               `json:"start_unix_ns,omitempty"`
	Budget            *float64            `json:"budget,omitempty"` // nil: absent (default 1e-4); 0 is zero tolerance
	Tenants           []Tenant            `json:"tenants,omitempty"`
	Pods              []string            `json:"pods,omitempty"`
	Target            string              `json:"target,omitempty"` // run: eventlogd|external; fault: its target
	CrashesPerPodYear *float64            `json:"crashes_per_pod_year,omitempty"`
	PodsInFleet       *int                `json:"pods_in_fleet,omitempty"`
	Thresholds        map[string][]string `json:"thresholds,omitempty"`
	Audit             bool                `json:"audit,omitempty"`   // an audit of the events table is part of this run
	Profile           string              `json:"profile,omitempty"` // the target profile's name
	// Shard says which of the run's load agents wrote this ledger (seqgate's addition: seqgate run
	// --shard K/N); nil for a run driven by one agent.
	Shard *Shard `json:"shard,omitempty"`
	// Metrics are the metric families the scenario named (seqgate's addition): the verifier reports
	// one that no pod exported.
	Metrics []string `json:"metrics,omitempty"`
	// Resync says that consumers list the tenant's files after every reset but structural_change.
	Resync bool `json:"resync,omitempty"`
	// Provenance is what the run judged: builds, binaries, flags, overrides, the scenario's hash and
	// the machine (seqgate's addition; provenance.go).
	Provenance *Provenance `json:"provenance,omitempty"`

	// shared by several kinds
	T        int64  `json:"t"`
	Tenant   string `json:"tenant,omitempty"`
	Pod      string `json:"pod,omitempty"`
	Consumer string `json:"consumer,omitempty"`
	Conn     string `json:"conn,omitempty"`
	Seq      int64  `json:"seq,omitempty"`
	Op       string `json:"op,omitempty"`
	Path     string `json:"path,omitempty"`
	Phase    string `json:"phase,omitempty"`
	Err      string `json:"err,omitempty"`

	// mut (src is also on an ev of a structural op: its payload's old_path)
	MID       string `json:"mid,omitempty"`
	Src       string `json:"src,omitempty"`
	IntendedT int64  `json:"intended_t,omitempty"`
	DoneT     int64  `json:"done_t,omitempty"`
	Res       string `json:"res,omitempty"`
	Status    int    `json:"status,omitempty"`
	// Batch (mut, ev; seqgate's addition for seed 003): the batch write a mutation was part of,
	// one mut per file sharing it; on ev, the batch the delivered event said it belongs to.
	Batch string `json:"batch,omitempty"`

	// reset
	Reason string `json:"reason,omitempty"`

	// conn
	Since int64 `json:"since,omitempty"`

	// fault
	ID     string         `json:"id,omitempty"`
	Kind   string         `json:"kind,omitempty"`
	Params map[string]any `json:"params,omitempty"` // Target (shared with run) names the fault's target
	// InjectedBy (seqgate's addition) is the shard K of the agent that injected the fault, in a
	// sharded run: the other agents record the fault at its scheduled times without injecting it,
	// and a merge keeps only the injecting agent's records. 0: not sharded.
	InjectedBy int `json:"injected_by,omitempty"`

	// pod
	PID    int    `json:"pid,omitempty"`
	Signal string `json:"signal,omitempty"`
	Code   *int   `json:"code,omitempty"`

	// metric
	Name   string            `json:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	Value  float64           `json:"value,omitempty"`
	// MetricType is the family's TYPE in the scrape: counter, gauge or untyped (seqgate's addition;
	// empty in older ledgers).
	MetricType string `json:"type,omitempty"`

	// proxy
	Conns     int64 `json:"conns,omitempty"`
	BytesUp   int64 `json:"bytes_up,omitempty"`
	BytesDown int64 `json:"bytes_down,omitempty"`

	// persisted. Absent (seqgate's addition): an audit pass during the run saw the row and the final
	// audit no longer did (the retention sweep deleted it meanwhile); it persisted all the same.
	CreatedUnixNs int64 `json:"created_unix_ns,omitempty"`
	Absent        bool  `json:"absent,omitempty"`

	// consumer
	FromT       int64 `json:"from_t,omitempty"`
	ToT         int64 `json:"to_t,omitempty"`
	FirstSince  int64 `json:"first_since,omitempty"`
	FinalCursor int64 `json:"final_cursor,omitempty"`
	Durable     bool  `json:"durable,omitempty"`

	// end
	Drained bool `json:"drained,omitempty"`
	// LoadAvg is the machine's 1, 5 and 15 minute load averages when the run ended (seqgate's
	// addition; nil where unknown).
	LoadAvg []float64 `json:"load_avg,omitempty"`
	// LoadT is when the load phase began, on the ledger's clock (seqgate's addition): the origin of
	// the scenario's at: times, which count from the load's start. 0: unknown (or no load).
	LoadT int64 `json:"load_t,omitempty"`

	// drop (tenant, intended_t shared with mut): Block names the scenario's load block. The spec
	// leaves its type open: a JSON string or number is accepted (a number kept as written); it is
	// written as a string.
	Block string `json:"block,omitempty"`

	// audit (t shared). On the wire its count of audited tenants is "tenants", which names a list of
	// tenant objects on run records: the decoder tells them apart per kind (a list on an audit record
	// counts its items).
	OK           bool   `json:"ok,omitempty"`
	AuditTenants int64  `json:"-"`
	Rows         int64  `json:"rows,omitempty"`
	Error        string `json:"error,omitempty"`

	// resync (consumer, tenant, conn, reason, ok and error shared): T is when the listing ended,
	// TStart when it began, AfterSeq the reset's seq, Entries the count of entries listed.
	TStart   int64 `json:"t_start,omitempty"`
	AfterSeq int64 `json:"after_seq,omitempty"`
	Entries  int64 `json:"entries,omitempty"`

	// listed (consumer, path shared; T is its resync's end): the entry's size and revision, when the
	// listing gives them.
	Size int64 `json:"size,omitempty"`
	Rev  int64 `json:"rev,omitempty"`

	// tenant (id and name shared): one tenant of the run, as an entry of run.tenants would give it.
	// The Reader folds these records into the run record's Tenants and does not return them.
	Mode string `json:"mode,omitempty"`
	Cold bool   `json:"cold,omitempty"`
}
