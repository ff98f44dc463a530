package ledger

import "sync"

// Sink receives ledger records as they are observed. *Writer is one; implementations must be safe for
// concurrent use, and must not keep the *Record (the caller may reuse it).
type Sink interface {
	Write(*Record) error
}

var (
	_ Sink = (*Writer)(nil)
	_ Sink = (*Memory)(nil)
)

// Memory is a Sink that keeps a copy of every record in memory, in arrival order; for tests and
// small tools. The zero value is ready to use and safe for concurrent use.
type Memory struct {
	mu   sync.Mutex
	recs []Record
}

// Write keeps a copy of r.
func (m *Memory) Write(r *Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, *r)
	return nil
}

// Records returns a copy of the records written so far.
func (m *Memory) Records() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Record(nil), m.recs...)
}
