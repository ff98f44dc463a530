package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/seqgate/seqgate/harness/run"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/shard"
)

// runIDPattern is what --run-id accepts: the id is a path segment of every mutation
// (/seqgate/<run_id>/...) and of the default run directory.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// shardOf reads --shard and --run-id: the agent this run is (the zero Shard: the only one) and the
// run id (empty: the harness's default), derived from the scenario when a sharded run names none.
func shardOf(sc *scenario.Scenario, f runFlags) (shard.Shard, string, error) {
	var sh shard.Shard
	if f.shard != "" {
		var err error
		if sh, err = shard.Parse(f.shard); err != nil {
			return sh, "", err
		}
	}
	if f.runID != "" {
		if !runIDPattern.MatchString(f.runID) {
			return sh, "", fmt.Errorf("--run-id %q: want 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (it is a path segment)", f.runID)
		}
		return sh, f.runID, nil
	}
	if !sh.Sharded() {
		return sh, "", nil
	}
	id, err := shard.RunID(sc)
	return sh, id, err
}

// shardDone ends an agent's run: it judges nothing (its ledger is one part of the run), and says
// where its ledger is and how the run is judged. It exits 0 when the agent completed its part.
func shardDone(stdout io.Writer, res *run.Result, sh shard.Shard) error {
	fmt.Fprintf(stdout, "shard %s of run %s: offered %d, acked %d, dropped %d, %d events delivered, drained %v; ledger %s\n",
		sh, res.RunID, res.Offered, res.Acked, res.Dropped, res.Events, res.Drained, res.Ledger)
	fmt.Fprintf(stdout, "the run's verdict: seqgate verify with the ledgers of all %d agents (docs/scale-out.md)\n", sh.N)
	if res.Interrupted {
		return &exitError{exitUnusable, errors.New("interrupted: this agent's ledger is complete up to the interruption and marked so (end.reason)")}
	}
	return nil
}
