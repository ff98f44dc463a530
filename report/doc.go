// Package report turns one run's ledger and the verifier's Summary into what people look at: a
// self-contained report.html (verdict, failed checks, witnesses, plots over the run's time axis with
// every fault drawn as a band, per-tenant and per-consumer tables, the budget) and a summary.md for a
// CI job summary or a pull-request comment (docs/report.md).
//
// The ledger is read in one streaming pass into time-bucketed series whose number of buckets is
// bounded (the bucket width doubles when the run outgrows them), so memory does not grow with the
// ledger's length; the only per-event state is the set of events not yet delivered to every consumer
// of their tenant (what is in flight, plus the anomalies).
package report
