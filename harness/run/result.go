package run

import (
	"encoding/json"
)

// resultFile is result.json in the run directory: the harness's own figures, which the ledger does
// not carry (arrivals dropped by the open model, wall time).
type resultFile struct {
	RunID       string           `json:"run_id"`
	Interrupted bool             `json:"interrupted"`
	Drained     bool             `json:"drained"`
	FaultError  string           `json:"fault_error,omitempty"`
	Offered     int64            `json:"offered"`
	Dropped     int64            `json:"dropped"`
	DroppedBy   map[string]int64 `json:"dropped_by_tenant,omitempty"`
	Acked       int64            `json:"acked"`
	Events      int64            `json:"events_delivered"`
	LoadSeconds float64          `json:"load_seconds"`
	WallSeconds float64          `json:"wall_seconds"`
	Audit       *AuditResult     `json:"audit,omitempty"`
}

// AuditResult is the outcome of the run's audit, as its ledger record says.
type AuditResult struct {
	OK      bool   `json:"ok"`
	Tenants int    `json:"tenants"`
	Rows    int    `json:"rows"`
	Error   string `json:"error,omitempty"`
	// Passes, FailedPasses and Absent: audit passes during the run (a retention short enough to sweep
	// the run's rows), those in which a tenant could not be read, and the rows they saw that the final
	// audit no longer found (written as persisted with absent).
	Passes       int `json:"passes,omitempty"`
	FailedPasses int `json:"failed_passes,omitempty"`
	Absent       int `json:"absent,omitempty"`
}

func (res *Result) save() error {
	f := resultFile{RunID: res.RunID, Interrupted: res.Interrupted, Drained: res.Drained, Offered: res.Offered,
		Dropped: res.Dropped, DroppedBy: res.DroppedByTenant, Acked: res.Acked, Events: res.Events, LoadSeconds: res.LoadSeconds, WallSeconds: res.Wall.Seconds(),
		Audit: res.Audit}
	if res.FaultErr != nil {
		f.FaultError = res.FaultErr.Error()
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(res.Dir, "result.json", append(b, '\n'), 0o644)
}
