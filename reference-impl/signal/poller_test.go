package signal

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/go-sql-driver/mysql.(*mysqlConn).startWatcher.func1"))
}

// TestLateStartWakesStreamsThatConnectedFirst: a stream subscribed before the poller could start (the
// meta DB was down at the pod's start) read its tenant before a hint that the new poller, starting
// at the outbox head, will never read. The start wakes every local stream to re-read and counts
// poller_start; a start with no stream counts nothing. The hint row is shown to be at or below the
// start position: no read of the poller would ever wake the stream for it.
func TestLateStartWakesStreamsThatConnectedFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := dbserver.Start(ctx, dbserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop() }()
	db, err := store.OpenDB(ctx, srv.DSN("meta"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := store.MigrateMeta(ctx, db); err != nil {
		t.Fatal(err)
	}
	meta := &store.Meta{DB: db}
	for _, subscribed := range []bool{false, true} {
		m := metrics.New(prometheus.NewRegistry())
		bus := NewBus()
		var sub *Sub
		if subscribed {
			sub = bus.Subscribe("t1")
			defer sub.Close()
		}
		if err := meta.InsertNotify(ctx, "other-pod", []string{"t1"}); err != nil {
			t.Fatal(err)
		}
		head, _ := meta.OutboxHead(ctx)
		p := &Poller{Meta: meta, Bus: bus, PodID: "late", Metrics: m, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if !p.start(ctx) {
			t.Fatal("start failed")
		}
		if p.Cursor() < head {
			t.Fatalf("cursor %d below the hint %d: the poller would read it, the case is not shown", p.Cursor(), head)
		}
		got := testutil.ToFloat64(m.SignalLost.WithLabelValues("poller_start"))
		if !subscribed {
			if got != 0 {
				t.Fatalf("a start with no stream counted %v losses", got)
			}
			continue
		}
		select {
		case <-sub.C:
		default:
			t.Fatal("the stream that connected before the start was not woken")
		}
		if got != 1 || testutil.ToFloat64(m.RecoveryWakes) != 1 {
			t.Fatalf("poller_start %v, recovery wakes %v; want 1 and 1", got, testutil.ToFloat64(m.RecoveryWakes))
		}
	}
}
