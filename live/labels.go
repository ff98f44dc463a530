package live

import (
	"strings"
	"sync"
)

// knownResetReasons are the reset reasons of design 000 and the drive9 server; they are always a
// label value of their own.
var knownResetReasons = []string{"initial_sync", "seq_too_old", "server_restart", "structural_change"}

// maxOtherResetReasons is how many other reasons get a label value of their own (first seen, first
// kept); every later one counts under "other", so a service sending a new reason per frame cannot
// grow /metrics without bound.
const maxOtherResetReasons = 16

// otherLabel is the label value of the reasons past the bound.
const otherLabel = "other"

// resetReasons bounds the reason label of seqgate_resets_received_total. The zero value is ready.
type resetReasons struct {
	mu     sync.Mutex
	others map[string]bool
}

// label returns the label value to count reason under.
func (b *resetReasons) label(reason string) string {
	for _, k := range knownResetReasons {
		if reason == k {
			return k
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.others[reason] {
		return reason
	}
	if len(b.others) >= maxOtherResetReasons || reason == otherLabel {
		return otherLabel
	}
	if b.others == nil {
		b.others = map[string]bool{}
	}
	reason = strings.Clone(reason) // r is reused by the reader
	b.others[reason] = true
	return reason
}
