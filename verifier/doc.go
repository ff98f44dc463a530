// Package verifier judges a ledger (docs/ledger-v1.md): in one streaming pass it computes every
// definition of the spec (loss and its explanation, skipped, undelivered, duplicates, leaks, latency,
// reorder, reconnect storms, cold wakeups, budget projection and its confidence bound), keeps the first
// witnesses of each anomaly, applies the run's thresholds and returns a Summary with a verdict.
//
// Each property is one checker in its own check_*.go file; Verify composes them from an explicit list.
package verifier
