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
	r.owner = owner
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
		s.declared = make(map[string]bool, len(s.hdr.Tenants))
		for _, t := range s.hdr.Tenants {
			s.declared[t.ID] = true
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

// othersFault reports whether rec is a fault record of a fault another agent injected: this agent
// recorded it at its scheduled times so that its own ledger explains its window, and the merge keeps
// the injecting agent's records only, so the merged run sees one fault, not one per agent.
func (s *source) othersFault(rec *Record) bool {
	return rec.K == KindFault && rec.InjectedBy != 0 && s.hdr.Shard != nil && rec.InjectedBy != s.hdr.Shard.K
}

// nextHeld is s.next for a file read among several: its times are moved onto the merged clock and
// its audit records are kept back for the merged audit.
func (s *source) nextHeld() (*Record, error) {
	for {
		rec, err := s.next()
		if err != nil {
			return nil, err
		}
		if err := s.checkOwnTenant(rec); err != nil {
			return nil, err
		}
		if s.othersSample(rec) || s.othersFault(rec) {
			continue
		}
		shiftTimes(rec, s.shift)
		if rec.K != KindAudit {
			return rec, nil
		}
		s.audit.observe(rec)
	}
}

// checkOwnTenant refuses a record of a tenant that s's own run record does not declare: one agent
// cannot vouch for another's tenants (its deliveries or persisted rows would be judged as theirs).
// It checks the tenant field of every record that has one, and a fault's target when it is a tenant
// another file declares. Records without a tenant (pods, metrics) are not refused; metric samples
// labelled with another file's tenant are left out (othersSample).
func (s *source) checkOwnTenant(rec *Record) error {
	if rec.K == tenantKind {
		// A large run declares its tenants in tenant records instead of the run record's list:
		// the file's own declaration, which no other file may make.
		if o := s.r.owner[rec.ID]; o != nil && o != s {
			return &LineError{File: s.name, Line: s.line, Field: "id",
				Msg: "tenant " + quote(rec.ID) + " is also in " + o.name + ": two ledgers drove the same tenant (overlapping shards)"}
		}
		s.r.owner[rec.ID] = s
		s.declared[rec.ID] = true
		return nil
	}
	name, field := "", ""
	switch {
	case rec.Tenant != "":
		name, field = rec.Tenant, "tenant"
	case rec.K == KindFault && rec.Target != "" && s.r.owner[rec.Target] != nil:
		name, field = rec.Target, "target"
	default:
		return nil
	}
	if s.declared[name] {
		return nil
	}
	msg := "tenant " + quote(name) + " is not declared by this ledger's run record"
	if o := s.r.owner[name]; o != nil {
		msg += " (it is " + o.name + "'s)"
	}
	return &LineError{File: s.name, Line: s.line, Field: field, Msg: msg + ": one shard cannot vouch for another's tenants"}
}

// othersSample reports whether rec is a metric sample labelled with a tenant another file declares,
// which the merge leaves out (with one warning per file): agents of one run scrape the same pods, so
// the owner's ledger has the same counter, and another agent's samples could otherwise explain the
// owner's losses (a drop counter is read per pod and tenant_id).
func (s *source) othersSample(rec *Record) bool {
	if rec.K != KindMetric {
		return false
	}
	id := rec.Labels["tenant_id"]
	if id == "" || s.declared[id] {
		return false
	}
	if o := s.r.owner[id]; o == nil || o == s {
		return false // a tenant of no file of the run (another user of the service)
	}
	if s.othersSkipped == 0 {
		s.r.warn(s.name, s.line, "metric samples labelled with another shard's tenant ("+quote(id)+", and any later ones) left out of the merge: that shard's own samples count")
	}
	s.othersSkipped++
	return true
}

// tenantKind is the spec's record kind that declares one tenant of a large run (k "tenant", field id).
const tenantKind = "tenant"

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
	if rec.LoadT != 0 && f.has(fLoadT) {
		rec.LoadT += d
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
