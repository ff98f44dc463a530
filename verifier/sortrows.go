package verifier

import "slices"

// sortRows orders audit rows by seq (the audit may arrive in any order, or from several ledgers).
func sortRows(rows []auditRow) {
	slices.SortFunc(rows, func(a, b auditRow) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
}
