package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// FileWrite is one file of a batch write.
type FileWrite struct {
	Path    string
	Content []byte
}

// BatchResult is what a committed batch write produced: each file's revision and its event's seq,
// in the order of the files.
type BatchResult struct {
	Revisions []int64
	Seqs      []int64
}

// BatchWrite writes every file and inserts one write event per file, all carrying batch, in one
// transaction: the files and their events commit together or not at all, so no reader can see part
// of the batch. The events are one multi-row INSERT (insertEventsTx) behind the sequence row when
// ordered (GuardLock): they take consecutive seqs under every guard, so no other event of the
// tenant, not even an unserialised GuardHorizon insert, can take a seq inside the batch. A deadlock victim or lock wait timeout runs the whole transaction
// again (bounded).
func (s *TenantStore) BatchWrite(ctx context.Context, files []FileWrite, batch string, ordered bool) (BatchResult, error) {
	var r BatchResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		r = BatchResult{Revisions: make([]int64, len(files)), Seqs: make([]int64, len(files))}
		for i, f := range files {
			rev, err := s.writeBatchFileTx(ctx, tx, f.Path, f.Content)
			if err != nil {
				return fmt.Errorf("%s: %w", f.Path, err)
			}
			r.Revisions[i] = rev
		}
		now := time.Now()
		evs := make([]Event, len(files))
		for i, f := range files {
			evs[i] = Event{Path: f.Path, Op: OpWrite, Batch: batch, CreatedAt: now}
		}
		first, err := insertEventsTx(ctx, tx, s.TenantID, evs, ordered)
		if err != nil {
			return err
		}
		for i := range r.Seqs {
			r.Seqs[i] = first + int64(i)
		}
		return nil
	})
	return r, err
}
