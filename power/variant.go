package power

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seqgate/seqgate/harness/scenario"
)

// Variant returns the scenario src with sets applied (PATH=VALUE, as `seqgate run --set`: the same
// for every run of a measurement), then its seed set to seed and its pods' defect set to defect
// (empty: the correct build). Everything else, comments and faults included, is kept as written, so
// the two arms of a pair differ in exactly these two fields.
func Variant(src []byte, seed int64, defect string, sets ...string) ([]byte, error) {
	if err := CheckSets(sets); err != nil {
		return nil, err
	}
	return scenario.Override(src, append(slices.Clone(sets), fmt.Sprintf("seed=%d", seed), "pods.eventlogd.defect="+defect))
}

// CheckSets refuses overrides that would undo what power varies itself: the seed and the defect.
func CheckSets(sets []string) error {
	for _, s := range sets {
		path, _, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("--set %q: want PATH=VALUE", s)
		}
		if p := strings.TrimSpace(path); p == "seed" || p == "pods.eventlogd.defect" {
			return fmt.Errorf("--set %q: power sets %s itself on every run (--seeds, the matrix)", s, p)
		}
	}
	return nil
}
