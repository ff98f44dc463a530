package power

import (
	"fmt"

	"github.com/seqgate/seqgate/harness/scenario"
)

// Variant returns the scenario src with its seed set to seed and its pods' defect set to defect
// (empty: the correct build), through the same override as `seqgate run --set`. Everything else,
// comments and faults included, is kept as written, so the two arms of a pair differ in exactly
// these two fields.
func Variant(src []byte, seed int64, defect string) ([]byte, error) {
	return scenario.Override(src, []string{fmt.Sprintf("seed=%d", seed), "pods.eventlogd.defect=" + defect})
}
