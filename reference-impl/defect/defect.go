// Package defect lists the seeded defects eventlogd can switch on (--defect NAME) so that seqgate can
// prove it catches each one. Each is one known-bad behaviour; none is on by default.
package defect

import (
	"fmt"
	"sort"
	"strings"
)

// Name is one seeded defect.
type Name string

// The defects, one behaviour each.
const (
	DropOnInsertFailure    Name = "drop-on-insert-failure"   // a failed hot-path insert is logged and dropped (no retry buffer, no metric)
	NoSecondWake           Name = "no-second-wake"           // a flushed retry entry neither signals the outbox nor wakes local streams
	SinglePageReplay       Name = "single-page-replay"       // replay sends one page; live drain also stops after one page per wake
	UnsignalledQueueDrop   Name = "unsignalled-queue-drop"   // a full SSE send queue silently drops frames instead of reset(slow_consumer)
	UnboundedOutboxPinning Name = "unbounded-outbox-pinning" // the outbox prune floor ignores cursor age: a stalled pod pins it
	ColdDBSweeper          Name = "cold-db-sweeper"          // a periodic sweeper touches every tenant DB, quiet or not
	LateCommitSkip         Name = "late-commit-skip"         // event inserts do not lock the tenant's sequence row: a late commit is skipped
	CrossTenantLeak        Name = "cross-tenant-leak"        // event reads drop the tenant filter (visible in a shared pool)
	UncountedDrop          Name = "uncounted-drop"           // retry-buffer drops are not counted in drive9_sse_event_retry_dropped_total
	SpuriousSeqTooOld      Name = "spurious-seq-too-old"     // a stream that started on an empty tenant answers the first new rows with reset(seq_too_old) (the real drive9's quirk)
	SilentFanoutDrop       Name = "silent-fanout-drop"       // the outbox poller wakes at most 2 tenants per read and drops the other wakes, uncounted (seed 004's bounded fan-out)
	MassCloseOnLag         Name = "mass-close-on-lag"        // a lagged outbox read closes every stream of the pod at once (seed 004's reconnect storm)
	UnboundedSweep         Name = "unbounded-sweep"          // the lazy retention sweep is one unbounded DELETE run inline on the write path, throttled only once it returns
	UnorderedOutbox        Name = "unordered-outbox"         // outbox transactions skip the order-row lock: an id taken early can commit after a higher one, and the poller passes it
	BatchInPieces          Name = "batch-in-pieces"          // a batch write commits in two transactions with a pause between them (seed 003: readers see part of a batch, then other events)
	ResetPassesBatch       Name = "reset-passes-batch"       // under --event-commit separate a reset does not settle the seqs below it: a batch write still committing is neither in the resync listing nor above the cursor
	NarrowSettle           Name = "narrow-settle"            // a reset settles only the --sse-page-size seqs below the head: in a shared pool neighbours fill that window and a write committing further below is passed
	AnyTenantSweepMark     Name = "any-tenant-sweep-mark"    // readers pass a gap at or below the highest sweep mark of any tenant, not only their own: a neighbour's swept row lets a write in flight be skipped
	PullHorizonCursor      Name = "pull-horizon-cursor"      // a stream refuses a since above the tenant's head that the pull endpoint handed out under the horizon guard: reset(server_restart) on every reconnect
	PullWakesCold          Name = "pull-wakes-cold"          // the pull endpoint queries the tenant DB on every poll, never answering a poll at the head from the meta head hint
)

// All is the explicit list of defects.
var All = []Name{DropOnInsertFailure, NoSecondWake, SinglePageReplay, UnsignalledQueueDrop, UnboundedOutboxPinning,
	ColdDBSweeper, LateCommitSkip, CrossTenantLeak, UncountedDrop, SpuriousSeqTooOld, SilentFanoutDrop, MassCloseOnLag, UnboundedSweep,
	UnorderedOutbox, BatchInPieces, ResetPassesBatch, NarrowSettle, AnyTenantSweepMark, PullHorizonCursor, PullWakesCold}

// Set is the defects switched on.
type Set map[Name]bool

// On reports whether d is switched on.
func (s Set) On(d Name) bool { return s[d] }

// Parse turns a comma-separated list (or repeated flags joined by commas) into a Set, naming an
// unknown defect and the allowed values.
func Parse(list string) (Set, error) {
	s := Set{}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		ok := false
		for _, d := range All {
			if string(d) == f {
				s[d], ok = true, true
			}
		}
		if !ok {
			return nil, fmt.Errorf("--defect %q: unknown (allowed: %s)", f, names())
		}
	}
	return s, nil
}

// String lists the defects switched on, sorted.
func (s Set) String() string {
	var out []string
	for d := range s {
		out = append(out, string(d))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func names() string {
	out := make([]string, len(All))
	for i, d := range All {
		out[i] = string(d)
	}
	return strings.Join(out, ", ")
}
