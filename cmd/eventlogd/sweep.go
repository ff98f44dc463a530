package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// The operator sweep (design 000: the rollback runbook's manual sweep, and the remedy for the storage
// of abandoned dedicated tenants): `eventlogd sweep --before TIME` deletes the fs_events rows created
// before TIME from every pool, or one, with the same batched, mark-raising statements as the
// write-path sweep, pass after pass until nothing older remains. A stream whose cursor was swept
// past gets reset(seq_too_old), never a silent gap. It wakes every DB it sweeps: run it on purpose.

type sweepOptions struct {
	metaDSN, pools, pool, before string
	batch, maxBatches            int
	pause                        time.Duration
}

func sweepFlags(o *sweepOptions, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("eventlogd sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.before, "before", "", "delete rows created before this time: RFC 3339 (2026-11-24T00:00:00Z) or an age (1h = older than one hour); required")
	fs.StringVar(&o.metaDSN, "meta-dsn", "", "meta DB DSN (only to find the default shared pool when --pools is not given)")
	fs.StringVar(&o.pools, "pools", "", "pools file, as for the server; empty: the shared pool shared_pool on the meta server")
	fs.StringVar(&o.pool, "pool", "", "sweep only this pool id (default: every pool)")
	fs.IntVar(&o.batch, "batch", 5000, "rows per DELETE ... LIMIT")
	fs.IntVar(&o.maxBatches, "max-batches", 20, "DELETE statements per pass; passes repeat until nothing older remains")
	fs.DurationVar(&o.pause, "pause", 0, "wait between passes (spreads the purge's load on the DB)")
	return fs
}

// parseBefore reads --before: an RFC 3339 time, or a positive Go duration meaning now minus it.
func parseBefore(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, fmt.Errorf("--before is required (RFC 3339 time such as 2026-11-24T00:00:00Z, or an age such as 168h)")
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("--before %q: not an RFC 3339 time (2026-11-24T00:00:00Z) nor a positive age (168h)", v)
	}
	return now.Add(-d).UTC(), nil
}

func runSweep(args []string, stdout, stderr io.Writer) error {
	var o sweepOptions
	fs := sweepFlags(&o, stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("sweep: unexpected argument %q", fs.Arg(0))
	}
	if err := applyEnv(fs); err != nil {
		return err
	}
	cutoff, err := parseBefore(o.before, time.Now())
	if err != nil {
		return err
	}
	if o.batch <= 0 || o.maxBatches <= 0 {
		return fmt.Errorf("--batch %d, --max-batches %d: both must be positive", o.batch, o.maxBatches)
	}
	var specs []store.PoolSpec
	switch {
	case o.pools != "":
		if specs, err = store.LoadPools(o.pools); err != nil {
			return fmt.Errorf("--pools: %w", err)
		}
	case o.metaDSN != "":
		if specs, err = store.DefaultPools(o.metaDSN); err != nil {
			return err
		}
	default:
		return fmt.Errorf("sweep: give --pools FILE or --meta-dsn DSN (or EVENTLOGD_POOLS / EVENTLOGD_META_DSN)")
	}
	if o.pool != "" {
		var ids []string
		for _, s := range specs {
			ids = append(ids, s.ID)
			if s.ID == o.pool {
				specs = []store.PoolSpec{s}
			}
		}
		if len(specs) != 1 || specs[0].ID != o.pool {
			return fmt.Errorf("--pool %q: not in the pools (allowed: %v)", o.pool, ids)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	fmt.Fprintf(stdout, "sweeping fs_events rows created before %s\n", cutoff.Format(time.RFC3339))
	var total int64
	for _, spec := range specs {
		n, err := sweepPool(ctx, spec, cutoff, o, stdout)
		total += n
		if err != nil {
			return fmt.Errorf("pool %s: %w (deleted %d rows before the error)", spec.ID, err, n)
		}
	}
	fmt.Fprintf(stdout, "done: %d rows deleted in %d pool(s)\n", total, len(specs))
	return nil
}

// sweepPool drains one pool's rows older than cutoff, pass after pass. A pool whose database or
// fs_events table does not exist has nothing to sweep and is never created.
func sweepPool(ctx context.Context, spec store.PoolSpec, cutoff time.Time, o sweepOptions, stdout io.Writer) (int64, error) {
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	db, err := store.OpenExisting(octx, spec.DSN)
	cancel()
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1049 { // ER_BAD_DB_ERROR
		fmt.Fprintf(stdout, "pool %s: no database, nothing to sweep\n", spec.ID)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if ok, err := hasEventsTable(ctx, db); err != nil || !ok {
		if err == nil {
			fmt.Fprintf(stdout, "pool %s: no fs_events table, nothing to sweep\n", spec.ID)
		}
		return 0, err
	}
	var total int64
	for pass := 1; ; pass++ {
		r, err := store.SweepShared(ctx, db, cutoff, o.batch, o.maxBatches)
		total += r.Deleted
		if err != nil {
			return total, err
		}
		fmt.Fprintf(stdout, "pool %s: pass %d deleted %d rows in %d batches\n", spec.ID, pass, r.Deleted, r.Batches)
		if r.Done {
			return total, nil
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(o.pause):
		}
	}
}

func hasEventsTable(ctx context.Context, db *sql.DB) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'fs_events'`).Scan(&n)
	return n > 0, err
}
