package sse

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// sendQueue decouples reading the log from writing the socket: the producer enqueues frames, one
// writer goroutine writes and flushes them. When the queue stays full for longer than wait, the
// consumer is too slow: the writer discards what is queued, writes reset(slow_consumer) carrying
// the last seq it actually wrote (the client resumes from there, so nothing is skipped) and ends
// the stream. Only this connection is affected.
type sendQueue struct {
	q        chan frame
	wait     time.Duration
	writeTO  time.Duration
	dropMode bool // the unsignalled-queue-drop defect: drop the frame and carry on

	slow     chan struct{} // closed when the producer gave up on this consumer
	slowOnce sync.Once
	done     chan struct{} // closed when the writer exits
	mu       sync.Mutex
	written  int64 // highest seq written to the socket
}

func newSendQueue(size int, wait, writeTimeout time.Duration, dropMode bool) *sendQueue {
	return &sendQueue{q: make(chan frame, size), wait: wait, writeTO: writeTimeout, dropMode: dropMode,
		slow: make(chan struct{}), done: make(chan struct{})}
}

// put enqueues f. It returns false when the stream must end (the writer is gone, or the consumer
// was declared slow); dropped reports a frame dropped under the defect.
func (s *sendQueue) put(ctx context.Context, f frame) (ok, dropped bool) {
	select {
	case s.q <- f:
		return true, false
	case <-s.done:
		return false, false
	default:
	}
	if s.dropMode {
		return true, true // defect: a full queue loses the frame, and nobody is told
	}
	t := time.NewTimer(s.wait)
	defer t.Stop()
	select {
	case s.q <- f:
		return true, false
	case <-s.done:
		return false, false
	case <-ctx.Done():
		return false, false
	case <-t.C:
	}
	s.slowOnce.Do(func() { close(s.slow) })
	return false, false
}

func (s *sendQueue) lastWritten() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// run writes frames until ctx ends, a write fails, or the consumer is declared slow.
func (s *sendQueue) run(ctx context.Context, w http.ResponseWriter) {
	defer close(s.done)
	rc := http.NewResponseController(w)
	write := func(f frame) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.writeTO))
		if _, err := w.Write(f.data); err != nil {
			return false
		}
		if f.seq > 0 {
			s.mu.Lock()
			s.written = max(s.written, f.seq)
			s.mu.Unlock()
		}
		return true
	}
	flush := func() bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.writeTO))
		return rc.Flush() == nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.slow:
			s.sendSlowReset(write, flush)
			return
		case f := <-s.q:
			if !write(f) {
				return
			}
			// Batch: write what is queued, flush once the queue is empty.
			for more := true; more; {
				select {
				case f := <-s.q:
					if !write(f) {
						return
					}
				case <-s.slow:
					s.sendSlowReset(write, flush)
					return
				default:
					more = false
				}
			}
			if !flush() {
				return
			}
		}
	}
}

func (s *sendQueue) sendSlowReset(write func(frame) bool, flush func() bool) {
	if write(resetFrame(s.lastWritten(), ReasonSlowConsumer)) {
		flush()
	}
}
