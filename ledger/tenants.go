package ledger

import "io"

// A run's tenants come either in its run record's "tenants" list or, for runs too large to list them
// there, as tenant records right after the run record. The Reader presents both the same way: the
// run record it returns carries every tenant in Tenants, and tenant records are not returned.

// readTenants is called after s's run record was read into s.hdr (and while s.dec still holds that
// record's fields): it folds the tenant records that follow into s.hdr.Tenants and leaves the first
// other record pending. A run record with a "tenants" list and tenant records as well, or with
// neither, is an error.
func (s *source) readTenants() error {
	listed := s.dec.present.has(fTenants)
	runLine := s.line
	n := 0
	for {
		rec, err := s.next()
		if err != nil && err != io.EOF {
			return err
		}
		if err == io.EOF || rec.K != KindTenant {
			s.pending = err == nil
			break
		}
		if listed {
			return &LineError{File: s.name, Line: s.line, Field: "k",
				Msg: `a "tenant" record, but the run record (line ` + itoa(int64(runLine)) +
					`) lists "tenants": a ledger gives its tenants one way or the other, not both`}
		}
		s.hdr.Tenants = append(s.hdr.Tenants, Tenant{ID: rec.ID, Mode: rec.Mode, Cold: rec.Cold, Name: rec.Name})
		n++
	}
	if !listed && n == 0 {
		return &LineError{File: s.name, Line: runLine, Field: "tenants",
			Msg: `missing (required for k "run", unless "tenant" records follow it)`}
	}
	return nil
}

// errLateTenant is a tenant record anywhere but right after the run record (or another tenant
// record): the run's tenants must be known before its first other record.
func errLateTenant(s *source) error {
	return &LineError{File: s.name, Line: s.line, Field: "k",
		Msg: `a "tenant" record after other records (tenant records come right after the run record)`}
}

// checkDeclared refuses a record of a single ledger whose tenant its run (or tenant) records do not
// declare: the verifier judges only declared tenants, so such a record's mutations and deliveries
// would otherwise go unjudged, and a loss in them unseen.
func (s *source) checkDeclared(rec *Record) error {
	t := rec.Tenant
	if t == "" {
		return nil
	}
	// A few declared tenants seen lately, by their last byte: most records hit it (an interned
	// tenant compares by pointer) and skip the map.
	slot := &s.declCache[t[len(t)-1]%uint8(len(s.declCache))]
	if *slot == t {
		return nil
	}
	if s.declared[t] {
		*slot = t
		return nil
	}
	return &LineError{File: s.name, Line: s.line, Field: "tenant",
		Msg: "tenant " + quote(rec.Tenant) + " is not declared by the run record (its tenants list or tenant records): a record of an undeclared tenant cannot be judged"}
}
