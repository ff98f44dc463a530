package verifier

import (
	"errors"
	"fmt"
	"io"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/threshold"
)

// DefaultWitnesses is how many instances of each anomaly a Summary keeps when Options.Witnesses is 0.
const DefaultWitnesses = 20

// DefaultBudget is the loss budget when neither Options nor the run record sets one.
const DefaultBudget = 1e-4

// Options tune a verification.
type Options struct {
	// Budget, when set, overrides the run record's loss budget (0 is zero tolerance).
	Budget *float64
	// Witnesses is the number of instances kept per check: 0 means DefaultWitnesses, < 0 none.
	Witnesses int
	// Thresholds judge the ledger against a new gate: each path's expressions replace the run
	// record's for that path, and the run record's other paths still apply. ThresholdsFrom names
	// where they came from in errors (e.g. "--threshold"; default "options").
	Thresholds     map[string][]string
	ThresholdsFrom string
	// SlowestDeliveries is how many of the slowest deliveries the summary keeps as witnesses: 0
	// means DefaultSlowest, < 0 none.
	SlowestDeliveries int
}

// RecordSource yields ledger records in ledger order and io.EOF at the end. The returned record may be
// reused by the next call. *ledger.Reader is one.
type RecordSource interface {
	Next() (*ledger.Record, error)
}

// UnusableError means the input cannot be judged (exit code 3): a read error, a ledger without a run
// record, or an invalid threshold. Err names the line, field or cause.
type UnusableError struct{ Err error }

// Error returns the cause's message, which names the file and line, the field or the cause.
func (e *UnusableError) Error() string { return e.Err.Error() }

// Unwrap returns the cause (a *ledger.LineError for malformed input).
func (e *UnusableError) Unwrap() error { return e.Err }

// checker computes one property of the ledger: it sees every record once, in order, then writes its
// numbers (and witnesses) into the Summary. Finish runs in list order, so a checker may read what an
// earlier one wrote (projection reads loss).
type checker interface {
	Observe(r *ledger.Record)
	Finish(s *Summary)
}

// checkers builds the checkers of the list of checks (checks.go), in its order.
func checkers(ix *index, w *witnessSet, slow *slowest) []checker {
	return checkersOf(&checkEnv{ix: ix, w: w, slow: slow})
}

// Verify judges the ledger r reads and adds the reader's warnings (torn last line, unknown kinds) to
// the Summary. Errors are *UnusableError (exit code 3) naming the line or cause.
func Verify(r *ledger.Reader, opts Options) (*Summary, error) {
	r.BorrowStrings() // every checker copies what it keeps of a record's path and mid
	p := newPipe(r)   // decoding on one core, the checks on another
	s, err := VerifySource(p, opts)
	p.close() // the reader is done (or stopped) before its warnings are read
	if err != nil {
		return nil, err
	}
	for _, w := range r.Warnings() {
		s.Warnings = append(s.Warnings, w.String())
	}
	return s, nil
}

// VerifySource judges the records of src. Errors are *UnusableError (exit code 3); the verdict itself
// is in the Summary.
func VerifySource(src RecordSource, opts Options) (*Summary, error) {
	ix := newIndex()
	w := newWitnessSet(opts.Witnesses)
	cs := checkers(ix, w, newSlowest(opts.SlowestDeliveries))
	disp := newDispatch(cs)
	var n int64
	var th threshold.List
	for {
		r, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &UnusableError{err}
		}
		n++
		wasRun := ix.hasRun
		if err := ix.observe(r); err != nil {
			return nil, &UnusableError{fmt.Errorf("record %d: %w", n, err)}
		}
		if !wasRun && ix.hasRun {
			if th, err = parseThresholds(ix.run.Thresholds, opts); err != nil {
				return nil, &UnusableError{err}
			}
			ix.windows = windowsAsked(th)
			ix.muts.keepAllIntended(ix.windows)
		}
		for _, c := range disp.of(r.K) {
			c.Observe(r)
		}
	}
	if !ix.hasRun {
		return nil, &UnusableError{errors.New("empty ledger: no run record")}
	}
	s := newSummary()
	s.Records = n
	s.Run = ix.run.RunInfo
	s.Run.Ended, s.Run.Drained, s.Run.LoadAvgEnd, s.Run.LoadStartMs = ix.ended, ix.drained, ix.loadAvgEnd, ix.loadStartMs
	s.Budget = DefaultBudget
	if ix.run.Budget != nil {
		s.Budget = *ix.run.Budget // 0 is zero tolerance: any loss fails
	}
	if opts.Budget != nil {
		s.Budget = *opts.Budget
	}
	// Per-tenant and per-consumer entries are made by the checkers as they find numbers for them,
	// so a run of many idle tenants costs no entry for each (idle.go).
	for _, c := range cs {
		c.Finish(s)
	}
	nameScopes(s, ix)
	if err := resolveThresholdIDs(s, ix, th); err != nil {
		return nil, &UnusableError{err}
	}
	pruneIdle(s)
	countIdle(s, ix)
	s.Thresholds = mergeThresholds(ix.run.Thresholds, opts.Thresholds)
	s.Witnesses = w.lists()
	s.Timeline = w.tl
	s.Warnings = append(s.Warnings, ix.warnings...)
	decide(s, ix, th)
	return s, nil
}
