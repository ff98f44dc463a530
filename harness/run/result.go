package run

import (
	"encoding/json"

	"github.com/seqgate/seqgate/internal/proccpu"
)

// resultFile is result.json in the run directory: the harness's own figures, which the ledger does
// not carry (arrivals dropped by the open model, wall time). Every field is always written (docs/run.md
// lists them, and a test holds the two together): a reader never has to guess whether an absent field
// means zero.
type resultFile struct {
	RunID            string           `json:"run_id"`
	Interrupted      bool             `json:"interrupted"`
	Drained          bool             `json:"drained"`
	FaultError       string           `json:"fault_error"`
	Tenants          []TenantName     `json:"tenants"`
	Offered          int64            `json:"offered"`
	OfferedPerS      float64          `json:"offered_per_s"`
	Dropped          int64            `json:"dropped"`
	DroppedBy        map[string]int64 `json:"dropped_by_tenant"`
	Acked            int64            `json:"acked"`
	AckedPerS        float64          `json:"acked_per_s"`
	Events           int64            `json:"events_delivered"`
	Resyncs          int64            `json:"resyncs"`
	ResyncsFailed    int64            `json:"resyncs_failed"`
	Listed           int64            `json:"entries_listed"`
	ListingSeconds   float64          `json:"listing_seconds"`
	ScheduledSeconds float64          `json:"scheduled_seconds"`
	LoadSeconds      float64          `json:"load_seconds"`
	LoadStartSeconds float64          `json:"load_start_s"` // the load's start on the ledger's clock: the origin of the scenario's at: times
	WallSeconds      float64          `json:"wall_seconds"`
	Audit            *AuditResult     `json:"audit"` // null: the run had no audit (an external target without --dsn)
	CPU              *proccpu.Window  `json:"cpu"`   // null: the load phase did not run
}

// AuditResult is the outcome of the run's audit, as its ledger record says.
type AuditResult struct {
	OK      bool   `json:"ok"`
	Tenants int    `json:"tenants"`
	Rows    int    `json:"rows"`
	Error   string `json:"error"`
	// Passes, FailedPasses and Absent: audit passes during the run (a retention short enough to sweep
	// the run's rows), those in which a tenant could not be read, and the rows they saw that the final
	// audit no longer found (written as persisted with absent).
	Passes       int `json:"passes"`
	FailedPasses int `json:"failed_passes"`
	Absent       int `json:"absent"`
}

func (res *Result) file() resultFile {
	f := resultFile{RunID: res.RunID, Interrupted: res.Interrupted, Drained: res.Drained, Tenants: res.Tenants,
		Offered: res.Offered, OfferedPerS: res.PerSecond(res.Offered), Dropped: res.Dropped, DroppedBy: res.DroppedByTenant,
		Acked: res.Acked, AckedPerS: res.PerSecond(res.Acked), Events: res.Events, ScheduledSeconds: res.ScheduledSeconds,
		Resyncs: res.Resyncs, ResyncsFailed: res.ResyncsFailed, Listed: res.Listed, ListingSeconds: res.Listing.Seconds(),
		LoadSeconds: res.LoadSeconds, LoadStartSeconds: res.LoadStartSeconds, WallSeconds: res.Wall.Seconds(), Audit: res.Audit, CPU: res.CPU}
	if res.FaultErr != nil {
		f.FaultError = res.FaultErr.Error()
	}
	if f.Tenants == nil {
		f.Tenants = []TenantName{}
	}
	if f.DroppedBy == nil {
		f.DroppedBy = map[string]int64{}
	}
	return f
}

func (res *Result) save() error {
	b, err := json.MarshalIndent(res.file(), "", "  ")
	if err != nil {
		return err
	}
	return writeFile(res.Dir, "result.json", append(b, '\n'), 0o644)
}
