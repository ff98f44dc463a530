package verifier

import "github.com/seqgate/seqgate/ledger"

// Verdicts of a Summary.
const (
	VerdictPass         = "pass"
	VerdictFail         = "fail"
	VerdictInconclusive = "inconclusive"
)

// Summary is the verifier's result. It marshals to the summary JSON of docs/ledger-v1.md with the
// spec's field names; the Stats fields are inlined at the top level and repeated per tenant and per
// consumer.
type Summary struct {
	Verdict      string    `json:"verdict"`
	FailedChecks []string  `json:"failed_checks"`
	Failures     []Failure `json:"failures"`
	Checks       []Check   `json:"checks"`

	Stats

	Budget float64 `json:"budget"`
	// BoundWithinBudget says whether |W| was large enough for loss_upper_95 to be at or under the budget.
	BoundWithinBudget bool `json:"bound_within_budget"`
	// BudgetProvable is BoundWithinBudget as a number (1 proven, 0 not), for thresholds: one on it that
	// does not hold makes the verdict inconclusive, never a fail (a scenario's budget_proof: required).
	BudgetProvable int64 `json:"budget_provable"`
	// MinAckedForBudget is the |W| at which zero losses would prove the budget at 95%.
	MinAckedForBudget int64 `json:"min_acked_for_budget"`
	// Batches counts the batch writes (mut records sharing a batch) with an acked file: what
	// batch_atomicity judged.
	Batches    int64      `json:"batches"`
	Projection Projection `json:"projection"`

	// Audit is what the after-run audit attempts say: the last attempt, or
	// the first that succeeded. Required is the run record's audit field.
	Audit Audit `json:"audit"`
	// InconclusiveBecause says why the verdict is not pass when nothing failed (and, beside a fail,
	// what was missing as well): no end record, an interrupted run, an empty W, no successful audit
	// where one was due, a run that did not drain.
	InconclusiveBecause []string `json:"inconclusive_because"`

	// Faults lists each fault's span and its recovery; RecoveryMs repeats recovery_ms by fault id
	// (recovery_ms.<id> in thresholds) and RecoveryMaxMs is the largest. A fault whose consumers never
	// caught up counts in UnrecoveredFaults, its recovery_ms running to the end of the run.
	Faults            []FaultInfo        `json:"faults"`
	RecoveryMs        map[string]float64 `json:"recovery_ms"`
	RecoveryMaxMs     float64            `json:"recovery_max_ms"`
	UnrecoveredFaults int64              `json:"unrecovered_faults"`

	// Structural counts how structural ops reached the durable consumers (check_structural.go).
	Structural Structural `json:"structural"`

	// Resyncs counts the consumers' listings after resets and the resets they answered, in a run
	// whose record says resync (check_resync.go).
	Resyncs Resyncs `json:"resyncs"`

	// Windows holds the windowed numbers (steady, fault, recovery) when a threshold names one.
	Windows map[string]*WindowStats `json:"windows,omitempty"`

	Witnesses map[string][]any `json:"witnesses"`
	// Timeline is when the anomalies happened (timeline.go). It is not part of the summary JSON: a
	// Summary read back from JSON has none.
	Timeline *Timeline `json:"-"`
	// SlowestDeliveries are the slowest first deliveries of acked events (Options.SlowestDeliveries,
	// default 10), slowest first: the latency tail by name.
	SlowestDeliveries []SlowDelivery `json:"slowest_deliveries"`
	// Tenants names every tenant: by the scenario's name (tenant_2, the key of per_tenant and the
	// tenant of every witness) and by the service's id (what the ledger's records carry).
	Tenants []TenantInfo `json:"tenants"`
	// PerTenant and PerConsumer hold the numbers of the tenants and consumers with any: an idle one
	// (every number 0: no write, no delivery, no anomaly) has no entry and is counted in
	// PerTenantIdle or PerConsumerIdle instead, so a run of many silent tenants keeps a small
	// summary. A threshold on an idle one's field measures 0, as its entry would have said.
	PerTenant       map[string]*Stats `json:"per_tenant"`
	PerConsumer     map[string]*Stats `json:"per_consumer"`
	PerTenantIdle   int64             `json:"per_tenant_idle,omitempty"`
	PerConsumerIdle int64             `json:"per_consumer_idle,omitempty"`

	// Thresholds is the gate the ledger was judged against: the run record's thresholds, with the
	// paths given to the verifier (seqgate verify --threshold) replacing the run record's.
	Thresholds map[string][]string `json:"thresholds"`

	Run      RunInfo  `json:"run"`
	Records  int64    `json:"records"`
	Warnings []string `json:"warnings,omitempty"`
}

// Stats are the numbers the verifier computes, overall and again per tenant and per consumer. Fields
// that have no meaning for a scope stay zero there; a consumer's acked is its tenant's.
type Stats struct {
	// Tenant and TenantID say whose numbers these are in per_tenant and per_consumer: the tenant's
	// scenario name (or its id when the ledger gives no name) and the service's id.
	Tenant   string `json:"tenant,omitempty"`
	TenantID string `json:"tenant_id,omitempty"`

	Acked             int64            `json:"acked"`
	Lost              int64            `json:"lost"`
	LostByReason      map[string]int64 `json:"lost_by_reason"`
	EventLossFraction float64          `json:"event_loss_fraction"`
	LossUpper95       float64          `json:"loss_upper_95"`

	// Mutations counts the mut records (sent attempts); Drops the arrivals the open model did not
	// send; DroppedFraction = drops / (drops + mutations).
	Mutations       int64   `json:"mutations"`
	Drops           int64   `json:"drops"`
	DroppedFraction float64 `json:"dropped_fraction"`
	// The write outcomes: Offered = Mutations + Drops (the arrivals the schedule produced); the
	// mutations sent, by their mut record's res: OK (answered 2xx, any op: acked counts only the
	// event-producing ones), Err, Timeout.
	Offered int64 `json:"offered"`
	OK      int64 `json:"ok"`
	Err     int64 `json:"err"`
	Timeout int64 `json:"timeout"`
	// Unresolved: acked mutations neither persisted nor delivered in a ledger with no end (or an
	// interrupted one): not lost, counted apart.
	Unresolved int64 `json:"unresolved"`

	Skipped      int64 `json:"skipped"`
	Undelivered  int64 `json:"undelivered"`
	ResetCovered int64 `json:"reset_covered"`
	// ResyncProven, ResyncMissed and ResyncUnproven split reset_covered in a run whose consumers
	// resync: the events a reset passed that the consumer's next listing showed (or that a delete or
	// rename removed first), that it did not show (a failure), and that no ok listing answered
	// (the run cannot pass). All 0 when the run record does not say resync.
	ResyncProven   int64 `json:"resync_proven"`
	ResyncMissed   int64 `json:"resync_missed"`
	ResyncUnproven int64 `json:"resync_unproven"`
	// TenantGone counts expected events beyond a durable consumer's final cursor whose tenant a
	// tenant_delete fault deleted: its key was refused and its stream ended, so they could no longer
	// be delivered (not undelivered, not a failure; docs/ledger-v1.md).
	TenantGone     int64 `json:"tenant_gone"`
	SpuriousResets int64 `json:"spurious_resets"`
	Duplicates     int64 `json:"duplicates"`
	Unexpected     int64 `json:"unexpected"`
	Leaks          int64 `json:"leaks"`
	Recovered      int64 `json:"recovered"`
	// SeqMismatch counts deliveries of a persisted row's path in a frame whose seq is not that row's.
	SeqMismatch int64 `json:"seq_mismatch"`
	// BatchTorn counts (consumer, batch) pairs where the consumer saw a batch write in pieces:
	// part of it followed by other events, or part of it and the rest skipped or undelivered.
	BatchTorn int64 `json:"batch_torn"`

	Deliveries         int64     `json:"deliveries"`
	DeliveredBeforeAck int64     `json:"delivered_before_ack"`
	LatencyMs          Quantiles `json:"latency_ms"`
	IssueLatencyMs     Quantiles `json:"issue_latency_ms"`
	Reorder            Reorder   `json:"reorder"`

	ResetsByReason map[string]int64 `json:"resets_by_reason"`
	Reconnects     Reconnects       `json:"reconnects"`
	ColdWakeups    int64            `json:"cold_wakeups"`

	// Metrics summarises the scraped metric records (metrics.max.<family> in thresholds).
	Metrics Metrics `json:"metrics"`
}

// Structural counts, over durable consumers and the structural rows of the audit past each one's
// first cursor, the form each op reached the consumer in: reset(structural_change) only, the detailed
// file_changed only, or both (design 000 item 5's dual-emit window); reset-covered ones (a seq_too_old
// after the row) and missing ones (a failure).
type Structural struct {
	Expected     int64 `json:"expected"`
	Reset        int64 `json:"reset"`
	FileChanged  int64 `json:"file_changed"`
	Both         int64 `json:"both"`
	ResetCovered int64 `json:"reset_covered"`
	Missing      int64 `json:"missing"`
}

// Resyncs counts, over durable consumers, the resets that oblige a listing (every reason but
// structural_change) by how they ended (proven: every event they passed is proven, or they passed
// none; missed: a listing missed one; unproven: no ok listing answered one), and the resync records:
// listings, those that failed, the files they listed and the time they took in all.
type Resyncs struct {
	Resets         int64   `json:"resets"`
	ResetsProven   int64   `json:"resets_proven"`
	ResetsMissed   int64   `json:"resets_missed"`
	ResetsUnproven int64   `json:"resets_unproven"`
	Listings       int64   `json:"listings"`
	Failed         int64   `json:"failed"`
	Entries        int64   `json:"entries"`
	ListingMs      float64 `json:"listing_ms"`
}

// TenantInfo is one tenant of the run: the name the summary uses and the id the service gave it.
type TenantInfo struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	Mode string `json:"mode,omitempty"`
	Cold bool   `json:"cold,omitempty"`
}

// Audit summarises the audit records.
type Audit struct {
	Required bool   `json:"required"`
	Attempts int64  `json:"attempts"`
	OK       bool   `json:"ok"`
	Tenants  int64  `json:"tenants"`
	Rows     int64  `json:"rows"`
	Error    string `json:"error,omitempty"`
}

// FaultInfo is one fault's span (run-relative ms) and its recovery: from its stop until every durable
// consumer of the affected tenants had a cursor at the head seq the tenant had at the stop.
type FaultInfo struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Target  string   `json:"target"`
	StartMs float64  `json:"start_ms"`
	StopMs  *float64 `json:"stop_ms"` // null: never stopped
	// Tenants are the affected tenants: the ones the start record says it reached (a tenant-DB fault
	// on a DB address several tenants share), else its target, or ["*"] for every tenant.
	Tenants    []string `json:"tenants"`
	RecoveryMs *float64 `json:"recovery_ms"`
	Recovered  bool     `json:"recovered"`
}

// WindowStats are the numbers computed per window, by the time the schedule wanted each arrival
// sent (intended_t).
type WindowStats struct {
	Mutations          int64     `json:"mutations"`
	Drops              int64     `json:"drops"`
	DroppedFraction    float64   `json:"dropped_fraction"`
	Acked              int64     `json:"acked"`
	Lost               int64     `json:"lost"`
	Unresolved         int64     `json:"unresolved"`
	EventLossFraction  float64   `json:"event_loss_fraction"`
	Deliveries         int64     `json:"deliveries"`
	DeliveredBeforeAck int64     `json:"delivered_before_ack"`
	LatencyMs          Quantiles `json:"latency_ms"`
	IssueLatencyMs     Quantiles `json:"issue_latency_ms"`
}

// Quantiles are latency quantiles in milliseconds from an HDR histogram (microsecond resolution).
type Quantiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

// Reorder counts overtaken events and the worst overtaking distance.
type Reorder struct {
	Overtaken int64   `json:"overtaken"`
	MaxMs     float64 `json:"max_ms"`
}

// Reconnects describes connection churn: opens after a consumer's first, and the busiest second.
type Reconnects struct {
	Total   int64 `json:"total"`
	Opens   int64 `json:"opens"`
	MaxPerS int64 `json:"max_per_s"`
}

// Projection is the design's annual loss projection with every input beside the result.
type Projection struct {
	CrashesPerPodYear float64 `json:"crashes_per_pod_year"`
	PodsInFleet       int     `json:"pods_in_fleet"`
	CrashesPerYear    float64 `json:"crashes_per_year"`
	ObservedCrashes   int64   `json:"observed_crashes"`
	CrashLosses       int64   `json:"crash_losses"`
	UnflushedPerCrash float64 `json:"unflushed_per_crash"`
	RunSeconds        float64 `json:"run_seconds"`
	AckedPerSecond    float64 `json:"acked_per_second"`
	AnnualEvents      float64 `json:"annual_events"`
	Fraction          float64 `json:"fraction"`
	// Defaults names the inputs the run record did not set, taken as the defaults
	// (crashes_per_pod_year 12, pods_in_fleet 20): the projection is then of a fleet nobody described.
	Defaults []string `json:"defaults"`
}

// RunInfo echoes the run record's identity so a summary can be traced back to its ledger.
type RunInfo struct {
	RunID    string `json:"run_id"`
	Scenario string `json:"scenario"`
	Seed     int64  `json:"seed"`
	Target   string `json:"target"`
	Profile  string `json:"profile,omitempty"`
	Ended    bool   `json:"ended"`
	Drained  bool   `json:"drained"`
	// Provenance is what the run judged, from its run record (null when the ledger has none);
	// LoadAvgEnd the machine's load averages when it ended, from its end record.
	Provenance *ledger.Provenance `json:"provenance"`
	LoadAvgEnd []float64          `json:"load_avg_end"`
	// LoadStartMs is when the load began, in ms since the run started (the end record's load_t):
	// the origin of a scenario's at: times. Every other time of the summary counts from the run's
	// start; null when the ledger does not say.
	LoadStartMs *float64 `json:"load_start_ms"`
}

// Check is one evaluated verdict check (a spec rule or a threshold), passed or not.
type Check struct {
	Name     string  `json:"name"`
	Passed   bool    `json:"passed"`
	Measured float64 `json:"measured"`
	Limit    string  `json:"limit"`
	// NotJudged says why a broken check does not count: it needs evidence the run lacks (the audit).
	NotJudged string `json:"not_judged,omitempty"`
	// Meaning says in one line what the check means (Meaning).
	Meaning string `json:"meaning"`
}

// A check's result, in the words of Check.Result.
const (
	ResultPass      = "pass"
	ResultNotJudged = "not judged" // broke, but needs evidence the run lacks (NotJudged says which)
	ResultFail      = "FAIL"
)

// Result is the check's outcome, one of ResultPass, ResultNotJudged and ResultFail; each report
// spells it its own way.
func (c Check) Result() string {
	switch {
	case c.Passed:
		return ResultPass
	case c.NotJudged != "":
		return ResultNotJudged
	default:
		return ResultFail
	}
}

// Failure is a check that broke, with the number that broke it.
type Failure struct {
	Check    string  `json:"check"`
	Measured float64 `json:"measured"`
	Limit    string  `json:"limit"`
}

func newStats() *Stats {
	return &Stats{LostByReason: map[string]int64{}, ResetsByReason: map[string]int64{}}
}

// tenant returns the per-tenant stats of id, creating them on first use.
func (s *Summary) tenant(id string) *Stats {
	st, ok := s.PerTenant[id]
	if !ok {
		st = newStats()
		s.PerTenant[id] = st
	}
	return st
}

// TenantStats returns the numbers of the tenant the summary names name: its per_tenant entry, or,
// for an idle tenant (none), zeros. The result must not be modified.
func (s *Summary) TenantStats(name string) *Stats {
	if st, ok := s.PerTenant[name]; ok {
		return st
	}
	return &idleStats
}

// idleStats are an idle tenant's or consumer's numbers: all 0.
var idleStats Stats

// consumer returns the per-consumer stats of id, creating them on first use.
func (s *Summary) consumer(id string) *Stats {
	st, ok := s.PerConsumer[id]
	if !ok {
		st = newStats()
		s.PerConsumer[id] = st
	}
	return st
}

func newSummary() *Summary {
	s := &Summary{
		FailedChecks:        []string{},
		Failures:            []Failure{},
		Witnesses:           map[string][]any{},
		PerTenant:           map[string]*Stats{},
		Tenants:             []TenantInfo{},
		SlowestDeliveries:   []SlowDelivery{},
		PerConsumer:         map[string]*Stats{},
		Faults:              []FaultInfo{},
		RecoveryMs:          map[string]float64{},
		InconclusiveBecause: []string{},
	}
	s.LostByReason = map[string]int64{}
	s.ResetsByReason = map[string]int64{}
	return s
}
