package ledger

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"sync"
)

// Writer appends records to a ledger. It is safe for concurrent use (each record is one whole line),
// buffers its output (call Flush or Close), and always writes each kind's required fields.
type Writer struct {
	mu   sync.Mutex
	bw   *bufio.Writer
	gz   *gzip.Writer // non-nil when compressing
	f    io.Closer    // non-nil when Create opened the file
	buf  []byte
	err  error // sticky write error
	recs int64
	obs  func(*Record)
}

const writeBufSize = 256 << 10

// NewWriter writes plain JSON Lines to w. Close flushes but does not close w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, writeBufSize)}
}

// NewGzipWriter writes gzip-compressed JSON Lines to w (fast compression: ledgers are large and
// written during the run). Close ends the gzip stream but does not close w.
func NewGzipWriter(w io.Writer) *Writer {
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // the level is valid: no error
	return &Writer{bw: bufio.NewWriterSize(gz, writeBufSize), gz: gz}
}

// Create creates (or truncates) the ledger file at path; a name ending in ".gz" is gzip-compressed.
// "-" writes to stdout.
func Create(path string) (*Writer, error) {
	if path == "-" {
		return NewWriter(os.Stdout), nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	var w *Writer
	if strings.HasSuffix(path, ".gz") {
		w = NewGzipWriter(f)
	} else {
		w = NewWriter(f)
	}
	w.f = f
	return w, nil
}

// Write appends rec as one line. It fails for an unknown kind, a value JSON cannot carry (NaN), or
// an earlier write error (which sticks).
func (w *Writer) Write(rec *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	b, err := AppendRecord(w.buf[:0], rec)
	w.buf = b
	if err != nil {
		return err // a bad record: nothing written, the writer stays usable
	}
	if _, err := w.bw.Write(b); err != nil {
		w.err = err
		return err
	}
	w.recs++
	if w.obs != nil {
		w.obs(rec)
	}
	return nil
}

// Observe makes fn see every record written from now on, in ledger order, right after it is
// written (for live metrics). fn runs under the writer's lock: it must be quick, must not keep rec
// and must not write to w.
func (w *Writer) Observe(fn func(*Record)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.obs = fn
}

// Records is the number of records written so far.
func (w *Writer) Records() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.recs
}

// Flush pushes buffered records to the underlying writer (for gzip: a sync flush, so a reader of a
// crashed run sees everything flushed).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	if w.gz != nil {
		if err := w.gz.Flush(); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// Close flushes, ends the gzip stream, and closes the file if Create opened it. Writes after Close
// fail.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.flushLocked()
	if w.gz != nil {
		if cerr := w.gz.Close(); err == nil {
			err = cerr
		}
		w.gz = nil
	}
	if w.f != nil {
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
		w.f = nil
	}
	if w.err == nil {
		w.err = errWriterClosed
	}
	return err
}

var errWriterClosed = &closedError{}

type closedError struct{}

func (*closedError) Error() string { return "ledger: writer closed" }
