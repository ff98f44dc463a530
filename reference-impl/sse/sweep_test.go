package sse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/internal/eventstream"
	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/signal"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// These tests drive one stream against a real tenant DB (a private MariaDB) and a sweep placed
// exactly where a race would put it: between two replay pages, or between a flushed row's insert
// and the live drain that reads past it.

var srv *dbserver.Server

func TestMain(m *testing.M) {
	s, err := dbserver.Start(context.Background(), dbserver.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sse tests need a MySQL-compatible server binary:", err)
		os.Exit(1)
	}
	srv = s
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	code := m.Run()
	_ = s.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var dbN atomic.Int64

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func tenantStore(t *testing.T) *store.TenantStore {
	t.Helper()
	db, err := store.OpenDB(testCtx(t), srv.DSN(fmt.Sprintf("sse%d", dbN.Add(1))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := store.MigrateTenant(testCtx(t), db); err != nil {
		t.Fatal(err)
	}
	return &store.TenantStore{DB: db, TenantID: "t"}
}

func insert(t *testing.T, st *store.TenantStore, path string, created time.Time) int64 {
	t.Helper()
	seq, err := st.InsertEvent(testCtx(t), store.Event{Path: path, Op: "write", CreatedAt: created}, store.GuardLock)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func sweep(t *testing.T, st *store.TenantStore, cutoff time.Time) {
	t.Helper()
	if _, err := st.Sweep(testCtx(t), cutoff, 1000, 10); err != nil {
		t.Fatal(err)
	}
}

// syncWriter is an http.ResponseWriter the test can read while the stream writes.
type syncWriter struct {
	mu  sync.Mutex
	h   http.Header
	buf bytes.Buffer
}

func (w *syncWriter) Header() http.Header { return w.h }
func (w *syncWriter) WriteHeader(int)     {}
func (w *syncWriter) Flush()              {}
func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

type got struct {
	Type   string
	Seq    int64  `json:"seq"`
	Reason string `json:"reason"`
}

func (g got) String() string {
	if g.Type == "file_changed" {
		return fmt.Sprint(g.Seq)
	}
	if g.Reason != "" {
		return fmt.Sprintf("%s:%s(%d)", g.Type, g.Reason, g.Seq)
	}
	return fmt.Sprintf("%s(%d)", g.Type, g.Seq)
}

func (w *syncWriter) frames() []got {
	w.mu.Lock()
	data := append([]byte(nil), w.buf.Bytes()...)
	w.mu.Unlock()
	var out []got
	r := eventstream.NewReader(bytes.NewReader(data))
	for {
		ev, err := r.Next()
		if err != nil {
			return out
		}
		g := got{Type: ev.Type}
		_ = json.Unmarshal([]byte(ev.Data), &g)
		out = append(out, g)
	}
}

// serve runs one stream from since in the background; stop ends it and waits for it.
func serve(t *testing.T, s *Streamer, st *store.TenantStore, since int64) (w *syncWriter, stop func()) {
	w = &syncWriter{h: http.Header{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(ctx, w, st, since)
	}()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("stream did not end 30s after its context was cancelled")
		}
	}
	t.Cleanup(stop)
	return w, stop
}

// waitFrames waits until the stream has sent a frame matching pred and returns every frame; it
// fails with the frames seen after 10 s.
func waitFrames(t *testing.T, w *syncWriter, what string, pred func(got) bool) []got {
	t.Helper()
	var fs []got
	if !wait.Until(10*time.Second, func() bool {
		fs = w.frames()
		return slices.ContainsFunc(fs, pred)
	}) {
		t.Fatalf("timed out waiting for %s; frames %v", what, fs)
	}
	return fs
}

func newTestStreamer(cfg Config, bus *signal.Bus) *Streamer {
	cfg.Heartbeat = time.Hour // only the frames the test causes
	return NewStreamer(cfg, bus, metrics.New(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func render(fs []got) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(f.String())
	}
	return b.String()
}

// TestSweepMidReplayResetsAndKeepsReplaying: a sweep between two replay pages turns
// the swept range into seq_too_old, and the replay goes on from the mark: the rows above it are
// sent before the stream-current heartbeat, never left behind a heartbeat that claims the stream
// is current.
func TestSweepMidReplayResetsAndKeepsReplaying(t *testing.T) {
	st := tenantStore(t)
	old := time.Now().Add(-2 * time.Hour)
	for i := 1; i <= 5; i++ {
		insert(t, st, fmt.Sprintf("/old%d", i), old)
	}
	for i := 6; i <= 8; i++ {
		insert(t, st, fmt.Sprintf("/new%d", i), time.Now())
	}
	s := newTestStreamer(Config{PageSize: 3}, signal.NewBus())
	var pages atomic.Int32
	s.afterPage = func() {
		if pages.Add(1) == 1 { // after the first page (2, 3, 4): the sweep deletes 1-5, mark 5
			sweep(t, st, time.Now().Add(-time.Hour))
		}
	}
	w, _ := serve(t, s, st, 1)
	waitFrames(t, w, "seq 8", func(f got) bool { return f.Type == "file_changed" && f.Seq == 8 })
	want := "2 3 4 reset:seq_too_old(5) 6 7 8 heartbeat(8)"
	fs := waitFrames(t, w, "the stream-current heartbeat", func(f got) bool { return f.Type == "heartbeat" })
	if r := render(fs); r != want {
		t.Fatalf("frames %q, want %q", r, want)
	}
}

// TestFlushedRowOlderThanRetentionIsNeverSkipped: a retried event is inserted with
// its original created_at, which can already be past the sweep cutoff (retention shorter than the
// retry max age); when a sweep deletes it before a live stream whose last event is recent reads
// past it, the stream says seq_too_old instead of jumping over the seq.
func TestFlushedRowOlderThanRetentionIsNeverSkipped(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ageBelow  bool // the rows below the flushed one have aged out too: the sweep may take it
		wantReset bool
	}{
		// The stream's own rows are young: the sweep keeps the old flushed row above them (a mark
		// never covers a kept row), and the stream delivers it.
		{"young rows below it: kept and delivered", false, false},
		// Everything below it is old too: the sweep deletes it before any stream read it, and the
		// stream, whose last event it received as recent, must still say seq_too_old.
		{"old rows below it: swept, reset", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tenantStore(t)
			bus := signal.NewBus()
			s := newTestStreamer(Config{}, bus)
			before := insert(t, st, "/before", time.Now())
			first := insert(t, st, "/recent", time.Now())
			w, _ := serve(t, s, st, before) // replays first: the stream's last event is recent
			waitFrames(t, w, "the replay heartbeat", func(f got) bool { return f.Type == "heartbeat" })
			flushed := insert(t, st, "/flushed-late", time.Now().Add(-2*time.Hour)) // no wake yet
			if tc.ageBelow {
				if _, err := st.DB.ExecContext(testCtx(t), `UPDATE fs_events SET created_at = ? WHERE seq < ?`, time.Now().UTC().Add(-2*time.Hour), flushed); err != nil {
					t.Fatal(err)
				}
			}
			sweep(t, st, time.Now().Add(-time.Hour))
			next := insert(t, st, "/next", time.Now())
			bus.Publish("t")
			fs := waitFrames(t, w, "the next event", func(f got) bool { return f.Type == "file_changed" && f.Seq == next })
			want := fmt.Sprintf("%d heartbeat(%d) %d %d", first, first, flushed, next)
			if tc.wantReset {
				want = fmt.Sprintf("%d heartbeat(%d) reset:seq_too_old(%d) %d", first, first, flushed, next)
			}
			if r := render(fs); r != want {
				t.Fatalf("frames %q, want %q", r, want)
			}
		})
	}
}
