package verifier

import "math"

// The entry's small fields. Each holds the common value in a few bits and marks any other one as
// escaped: the exact value is then in the table's side table (mutTable.esc), so that no index,
// count or code wraps onto another whatever the number of tenants, consumers or statuses, and an
// entry stays 24 bytes.
const (
	tenantEsc = math.MaxUint16 // mutation.tenant: the tenant's index is in the side table
	consEsc   = math.MaxUint8  // mutation.evCons: the consumer's index is in the side table
	evNEsc    = math.MaxUint8  // mutation.evN: the count is in the side table
	statusEsc = 15             // the status code in mutation.kind: the status is in the side table
	maxEvN    = math.MaxUint16 // evN saturates here (one path delivered that often with one seq)
)

// setTenant records m's tenant index.
func (t *mutTable) setTenant(m *mutation, ti int32) {
	if ti >= 0 && ti < tenantEsc {
		m.dt = m.dt&^0xffff | uint64(ti)
		return
	}
	m.dt |= tenantEsc
	t.escape(m).tenant = ti
}

// tenantOf returns m's tenant index.
func (t *mutTable) tenantOf(m *mutation) int32 {
	if ti := uint16(m.dt); ti != tenantEsc {
		return int32(ti)
	}
	return t.esc[m].tenant
}

// addConsumer registers consumer idx of tenant ti and returns its ordinal among ti's consumers,
// which an entry keeps in a byte (mutation.evCons).
func (t *mutTable) addConsumer(ti, idx int32) int32 {
	if t.consOf == nil {
		t.consOf = map[int32][]int32{}
	}
	t.consOf[ti] = append(t.consOf[ti], idx)
	return int32(len(t.consOf[ti]) - 1)
}

// setEvCons records c as the consumer of m's first delivery (its tenant's consumer of ordinal ord;
// any other consumer is kept in the side table).
func (t *mutTable) setEvCons(m *mutation, c *consumerState) {
	if c.tenant == t.tenantOf(m) && c.ord >= 0 && c.ord < consEsc-1 {
		m.evCons = uint8(c.ord + 1)
		return
	}
	m.evCons = consEsc
	t.escape(m).evCons = c.idx
}

// isEvCons reports whether c is the consumer of m's first delivery, without a lookup when c's
// ordinal is in the entry.
func (t *mutTable) isEvCons(m *mutation, c *consumerState) bool {
	if m.evCons != consEsc && m.evCons != 0 {
		return c.tenant == t.tenantOf(m) && int32(m.evCons)-1 == c.ord
	}
	return t.evCons(m) == c.idx
}

// evCons returns the index of the consumer of m's first delivery, -1 when none.
func (t *mutTable) evCons(m *mutation) int32 {
	switch m.evCons {
	case 0:
		return -1
	case consEsc:
		return t.esc[m].evCons
	}
	return t.consOf[t.tenantOf(m)][m.evCons-1]
}

// evN returns how many deliveries carried m's first seq (saturated at maxEvN).
func (t *mutTable) evN(m *mutation) uint32 {
	if m.evN == evNEsc {
		return uint32(t.esc[m].evN)
	}
	return uint32(m.evN)
}

// setEvN sets that count (saturated at maxEvN).
func (t *mutTable) setEvN(m *mutation, n uint32) {
	n = min(n, maxEvN)
	if n < evNEsc {
		m.evN = uint8(n)
		return
	}
	m.evN = evNEsc
	t.escape(m).evN = uint16(n)
}

// setKind records m's op class, result and HTTP status (clamped to int16, as the entry always kept
// it). A run's statuses are few: the first statusEsc distinct ones get a code, any other is escaped.
func (t *mutTable) setKind(m *mutation, op opClass, res uint8, status int) {
	s := int16(max(min(status, math.MaxInt16), math.MinInt16))
	code := -1
	for i, v := range t.statuses {
		if v == s {
			code = i
			break
		}
	}
	if code < 0 && len(t.statuses) < statusEsc {
		code = len(t.statuses)
		t.statuses = append(t.statuses, s)
	}
	if code < 0 {
		code = statusEsc
		t.escape(m).status = s
	}
	m.kind = uint8(op)&3 | res&3<<2 | uint8(code)<<4
}

// status returns m's HTTP status (0 until its mut record, or when it had none).
func (t *mutTable) status(m *mutation) int16 {
	code := m.kind >> 4
	if code == statusEsc {
		return t.esc[m].status
	}
	return t.statuses[code]
}
