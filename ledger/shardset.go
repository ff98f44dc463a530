package ledger

import (
	"maps"
	"slices"
	"strings"
)

// MaxShards bounds N in a run record's shard field: a typo such as 1/30000 should not make the
// reader wait for thirty thousand files.
const MaxShards = 1024

// checkSet refuses a set of files that is not the ledgers of one run: a sharded ledger given alone
// or without its siblings, a shard given twice, files of different runs, or two files that drove the
// same tenant. Every error names the file at fault (the second of a pair).
func (r *Reader) checkSet() error {
	first := r.srcs[0]
	if len(r.srcs) == 1 {
		if sh := first.hdr.Shard; sh != nil && sh.N > 1 {
			return &LineError{File: first.name, Line: 1, Field: "shard",
				Msg: "shard " + shardName(sh) + " of run " + quote(first.hdr.RunID) + " alone is not the run: give all " + itoa(int64(sh.N)) + " ledgers to merge them"}
		}
		return nil
	}
	owner := map[string]*source{} // tenant id -> the file that drove it
	byShard := map[int]*source{}
	for _, s := range r.srcs {
		if err := sameRun(first, s); err != nil {
			return err
		}
		if sh := s.hdr.Shard; sh != nil {
			if o := byShard[sh.K]; o != nil {
				return &LineError{File: s.name, Line: 1, Field: "shard",
					Msg: "shard " + shardName(sh) + " is also " + o.name + ": a shard given twice"}
			}
			byShard[sh.K] = s
		}
		for _, t := range s.hdr.Tenants {
			if o := owner[t.ID]; o != nil {
				return &LineError{File: s.name, Line: 1, Field: "tenants",
					Msg: "tenant " + quote(t.ID) + " is also in " + o.name + ": two ledgers drove the same tenant (overlapping shards)"}
			}
			owner[t.ID] = s
		}
	}
	if sh := first.hdr.Shard; sh != nil && len(byShard) != sh.N {
		var missing, given []string
		for k := 1; k <= sh.N; k++ {
			if s := byShard[k]; s != nil {
				given = append(given, s.name+" is "+shardName(s.hdr.Shard))
			} else {
				missing = append(missing, shardName(&Shard{K: k, N: sh.N}))
			}
		}
		return &LineError{File: first.name, Line: 1, Field: "shard",
			Msg: "run " + quote(first.hdr.RunID) + " has " + itoa(int64(sh.N)) + " shards; missing " + strings.Join(missing, ", ") +
				" (given: " + strings.Join(given, ", ") + ")"}
	}
	return nil
}

// sameRun checks that s's run record describes the same run as first's: the id, and what the
// verdict depends on (scenario, seed, target, budget, audit, thresholds), and the same shard count.
func sameRun(first, s *source) error {
	a, b := &first.hdr, &s.hdr
	differs := func(field, got, want string) error {
		return &LineError{File: s.name, Line: 1, Field: field,
			Msg: got + " differs from " + want + " in " + first.name + ": ledgers of different runs"}
	}
	switch {
	case b.RunID != a.RunID:
		return differs("run_id", quote(b.RunID), quote(a.RunID))
	case b.Scenario != a.Scenario:
		return differs("scenario", quote(b.Scenario), quote(a.Scenario))
	case b.Seed != a.Seed:
		return differs("seed", itoa(b.Seed), itoa(a.Seed))
	case b.Target != a.Target:
		return differs("target", quote(b.Target), quote(a.Target))
	case b.Audit != a.Audit:
		return differs("audit", boolName(b.Audit), boolName(a.Audit))
	case !equalPtr(a.Budget, b.Budget):
		return differs("budget", "its budget", "the budget")
	case !maps.EqualFunc(a.Thresholds, b.Thresholds, slices.Equal):
		return differs("thresholds", "its thresholds", "the thresholds")
	case (a.Shard == nil) != (b.Shard == nil):
		return differs("shard", shardName(b.Shard), shardName(a.Shard))
	case a.Shard != nil && a.Shard.N != b.Shard.N:
		return differs("shard", shardName(b.Shard), shardName(a.Shard))
	}
	return nil
}

// unite makes the merged header: every file's tenants and pods, the earliest start; and it sets each
// file's shift, so that its times (nanoseconds since its own start) count from that earliest start.
func (r *Reader) unite() {
	start := r.srcs[0].hdr.StartUnixNs
	for _, s := range r.srcs {
		start = min(start, s.hdr.StartUnixNs)
	}
	r.hdr.StartUnixNs = start
	r.hdr.Shard = nil // the merged run is the whole run
	for i, s := range r.srcs {
		s.shift = s.hdr.StartUnixNs - start
		if i == 0 {
			continue
		}
		r.hdr.Tenants = append(r.hdr.Tenants, s.hdr.Tenants...) // disjoint: checkSet said so
		for _, p := range s.hdr.Pods {
			if !slices.Contains(r.hdr.Pods, p) {
				r.hdr.Pods = append(r.hdr.Pods, p)
			}
		}
	}
}

// nextHeld is s.next for a file read among several: its times are moved onto the merged clock and
// its audit records are kept back for the merged audit.
func (s *source) nextHeld() (*Record, error) {
	for {
		rec, err := s.next()
		if err != nil {
			return nil, err
		}
		shiftTimes(rec, s.shift)
		if rec.K != KindAudit {
			return rec, nil
		}
		s.audit.observe(rec)
	}
}

// shiftTimes adds d to every time of rec that counts from the run's start (the kind's own fields:
// t, intended_t, done_t, from_t, to_t; wall-clock fields such as created_unix_ns are left alone).
func shiftTimes(rec *Record, d int64) {
	if d == 0 {
		return
	}
	f := listed[rec.K]
	if f.has(fT) {
		rec.T += d
	}
	if f.has(fIntendedT) {
		rec.IntendedT += d
	}
	if f.has(fDoneT) {
		rec.DoneT += d
	}
	if f.has(fFromT) {
		rec.FromT += d
	}
	if f.has(fToT) {
		rec.ToT += d
	}
}

// auditOutcome is one file's audit: its first successful attempt, else its last attempt.
type auditOutcome struct {
	attempts int
	rec      Record
}

func (a *auditOutcome) observe(rec *Record) {
	a.attempts++
	if a.attempts > 1 && a.rec.OK {
		return
	}
	a.rec = *rec
}

// mergedAudit returns, once, the audit of the whole run: ok only when every file that promised an
// audit (run.audit) or made one has a successful attempt, with tenants and rows summed and the
// failing files' errors named. Nil when no file audited or it was already returned.
func (r *Reader) mergedAudit() *Record {
	if r.auditDone || len(r.srcs) < 2 {
		return nil
	}
	r.auditDone = true
	audited := false
	m := Record{K: KindAudit, OK: true}
	var errs []string
	for _, s := range r.srcs {
		a := &s.audit
		if a.attempts == 0 && !s.hdr.Audit {
			continue
		}
		audited = true
		m.T = max(m.T, a.rec.T)
		m.AuditTenants += a.rec.AuditTenants
		m.Rows += a.rec.Rows
		switch {
		case a.attempts == 0:
			m.OK = false
			errs = append(errs, s.name+": no audit record (its run record promised one)")
		case !a.rec.OK:
			m.OK = false
			errs = append(errs, s.name+": "+a.rec.Error)
		}
	}
	if !audited {
		return nil
	}
	m.Error = strings.Join(errs, "; ")
	r.merged = m
	return &r.merged
}

func shardName(sh *Shard) string {
	if sh == nil {
		return "no shard"
	}
	return itoa(int64(sh.K)) + "/" + itoa(int64(sh.N))
}

func boolName(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func equalPtr(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
