package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// MaxBatchFiles bounds the files of one batch write (the body is bounded by --max-body as well).
const MaxBatchFiles = 100

// batchPiecePause is how long the batch-in-pieces defect waits between the two transactions it
// splits a batch into: long enough for other writers' events to land between the pieces.
const batchPiecePause = 300 * time.Millisecond

// batchIDPattern is what a client-chosen batch id may look like (it is stored and sent in frames).
var batchIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// batchBody is the body of POST /v1/fs:batch-write.
type batchBody struct {
	Batch string `json:"batch"` // optional: the client's id for the batch; the pod draws one otherwise
	Files []struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	} `json:"files"`
}

// handleBatchWrite serves POST /v1/fs:batch-write: many files written in one transaction with
// their events, which share a batch id (file_changed's batch field). 400 names the bad field.
//
// The transaction runs without the client's cancellation (bounded by --request-timeout): a client
// that hangs up after the events' INSERT took their seqs would otherwise roll it back, a hole every
// stream of the pool waits --sse-horizon-wait on.
func (s *Server) handleBatchWrite(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.cfg.RequestTimeout)
	defer cancel()
	files, batch, err := s.readBatch(w, r)
	if err != nil {
		code := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			code = http.StatusRequestEntityTooLarge
		}
		writeErr(w, code, err.Error())
		return
	}
	st := tenantStore(r)
	ordered := s.publisher.Guard == store.GuardLock
	pieces := [][]store.FileWrite{files}
	if s.cfg.Defects.On(defect.BatchInPieces) && len(files) > 1 {
		pieces = [][]store.FileWrite{files[:len(files)/2], files[len(files)/2:]}
	}
	var res store.BatchResult
	for i, piece := range pieces {
		if i > 0 && !sleep.For(ctx, batchPiecePause) { // defect: a later piece commits after other writes
			s.fsError(w, "batch_write", ctx.Err())
			return
		}
		part, err := st.BatchWrite(ctx, piece, batch, ordered)
		if err != nil {
			s.fsError(w, "batch_write", err)
			return
		}
		s.publisher.Inserted(st, part.Seqs[len(part.Seqs)-1])
		res.Revisions = append(res.Revisions, part.Revisions...)
		res.Seqs = append(res.Seqs, part.Seqs...)
	}
	s.m.Mutations.WithLabelValues("batch_write", "ok").Inc()
	if s.cfg.AfterMutation != nil {
		s.cfg.AfterMutation(st.TenantID)
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "batch": batch, "revisions": res.Revisions})
}

// readBatch decodes and checks the body, bounded by --max-body (parseBatch).
func (s *Server) readBatch(w http.ResponseWriter, r *http.Request) ([]store.FileWrite, string, error) {
	files, batch, err := parseBatch(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, "", fmt.Errorf("body: larger than %d bytes (--max-body): %w", s.cfg.MaxBody, err)
	}
	return files, batch, err
}

// parseBatch decodes a batch-write body and checks it: 1..MaxBatchFiles files, each a valid path
// (once) with a content string; a batch id that matches batchIDPattern, or none (one is drawn).
// Errors name the field.
func parseBatch(body io.Reader) ([]store.FileWrite, string, error) {
	var b batchBody
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, "", err
		}
		return nil, "", errors.New(`body: want {"batch"?: ID, "files": [{"path": "/a", "content": "..."}]}: ` + err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "", errors.New("body: more than one JSON value")
	}
	if len(b.Files) == 0 || len(b.Files) > MaxBatchFiles {
		return nil, "", fmt.Errorf("files: want 1..%d files, got %d", MaxBatchFiles, len(b.Files))
	}
	if b.Batch == "" {
		var id [8]byte
		_, _ = rand.Read(id[:])
		b.Batch = "b" + hex.EncodeToString(id[:])
	} else if !batchIDPattern.MatchString(b.Batch) {
		return nil, "", errors.New("batch: want 1..64 characters of A-Z a-z 0-9 . _ -, got " + strconv.Quote(b.Batch))
	}
	seen := make(map[string]bool, len(b.Files))
	out := make([]store.FileWrite, len(b.Files))
	for i, f := range b.Files {
		p := cleanPath(f.Path)
		if err := checkPath(p); err != nil {
			return nil, "", fmt.Errorf("files[%d].path: %w", i, err)
		}
		if seen[p] {
			return nil, "", fmt.Errorf("files[%d].path: %s is already in this batch", i, strconv.Quote(p))
		}
		seen[p] = true
		if f.Content == nil {
			return nil, "", fmt.Errorf("files[%d].content: missing (a string, may be empty)", i)
		}
		out[i] = store.FileWrite{Path: p, Content: []byte(*f.Content)}
	}
	return out, b.Batch, nil
}
