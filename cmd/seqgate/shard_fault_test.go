package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/shard"
	"github.com/seqgate/seqgate/ledger"
)

// shardFaultScenario: four tenants split over two agents, one consumer each, and a fault that
// disconnects one tenant's consumer (TARGET) for a second.
const shardFaultScenario = `name: shardfault
seed: 5
duration: 8s
drain_timeout: 60s
tenants:
  - {group: hot, count: 4, mode: shared}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 3, timeout: 60s}
consumers:
  - {count: 1}
faults:
  - {at: 2s, kind: consumer_disconnect, target: TARGET}
`

// TestShardedRunWithFault: two seqgate agents (--shard 1/2 and 2/2) drive one eventlogd with a fault
// on a tenant of agent 1. Agent 1 injects it, agent 2 records it at its scheduled time without
// injecting it (both ledgers carry it, injected_by 1), and the merged verify sees one fault, not two.
// A fault on a tenant of agent 2 is refused by agent 1, naming the tenant.
func TestShardedRunWithFault(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB, eventlogd and two seqgate processes (about 20 s)")
	}
	probe, err := scenario.Parse("probe.yaml", []byte(strings.Replace(shardFaultScenario, "TARGET", "tenant_1", 1)))
	if err != nil {
		t.Fatal(err)
	}
	owner := shard.Assign(probe.Expand(), probe.Seed, 2)
	var mine, theirs string
	for idx, k := range owner {
		name := fmt.Sprintf("tenant_%d", idx)
		if k == 1 && (mine == "" || name < mine) {
			mine = name
		}
		if k == 2 && (theirs == "" || name < theirs) {
			theirs = name
		}
	}
	if mine == "" || theirs == "" {
		t.Fatalf("assignment %v gives each agent no tenant", owner)
	}
	svc := startService(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// A fault on agent 2's tenant: agent 1 refuses it, naming the tenant (exit 3).
	bad := writeTestFile(t, dir, "bad.yaml", strings.Replace(shardFaultScenario, "TARGET", theirs, 1))
	var o, e bytes.Buffer
	err = seqgate(ctx, &o, &e, "run", bad, "--target", svc.url, "--dsn", svc.dsn, "--shard", "1/2", "--out", filepath.Join(dir, "bad1"))
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != exitUnusable || !strings.Contains(e.String()+o.String(), "acts on "+theirs+", which agent 1 of this sharded run does not drive") {
		t.Errorf("agent 1 with a fault on %s: %v\n%s\n%s", theirs, err, tail(o.String()), tail(e.String()))
	}

	sc := writeTestFile(t, dir, "shardfault.yaml", strings.Replace(shardFaultScenario, "TARGET", mine, 1))
	type agent struct {
		out, errOut bytes.Buffer
		err         error
	}
	agents := make([]*agent, 2)
	var wg sync.WaitGroup
	for i := range agents {
		agents[i] = &agent{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := agents[i]
			a.err = seqgate(ctx, &a.out, &a.errOut, "run", sc, "--target", svc.url, "--dsn", svc.dsn,
				"--shard", fmt.Sprintf("%d/2", i+1), "--out", filepath.Join(dir, fmt.Sprintf("shard%d", i+1)))
		}()
	}
	wg.Wait()
	var ledgers []string
	for i, a := range agents {
		if a.err != nil {
			t.Fatalf("agent %d: %v\n%s\n%s", i+1, a.err, tail(a.out.String()), tail(a.errOut.String()))
		}
		path := filepath.Join(dir, fmt.Sprintf("shard%d", i+1), "ledger.jsonl.gz")
		ledgers = append(ledgers, path)
		faults := faultRecords(t, path)
		if len(faults) != 2 || faults[0].InjectedBy != 1 || faults[1].InjectedBy != 1 || faults[0].Target != mine {
			t.Errorf("agent %d's ledger: fault records %+v, want the fault's start and stop, injected_by 1", i+1, faults)
		}
	}
	mergedJSON := filepath.Join(dir, "merged.json")
	o.Reset()
	e.Reset()
	if err := seqgate(ctx, &o, &e, append([]string{"verify", "--json", mergedJSON}, ledgers...)...); err != nil {
		t.Fatalf("verify of the two ledgers: %v\n%s\n%s", err, tail(o.String()), tail(e.String()))
	}
	var merged struct {
		Verdict string `json:"verdict"`
		Acked   int64  `json:"acked"`
		Faults  []struct {
			ID     string `json:"id"`
			Target string `json:"target"`
		} `json:"faults"`
	}
	readJSON(t, mergedJSON, &merged)
	if merged.Verdict != "pass" || merged.Acked == 0 || len(merged.Faults) != 1 || merged.Faults[0].Target != mine {
		t.Errorf("merged verdict %s, acked %d, faults %+v: want a pass with one fault on %s", merged.Verdict, merged.Acked, merged.Faults, mine)
	}
}

// faultRecords are the fault records of one shard's ledger, decoded line by line (a Reader refuses a
// shard alone: it is not the run).
func faultRecords(t *testing.T, path string) []faultLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []faultLine
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec faultLine
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			continue // another kind's shape (an audit's tenants is a count)
		}
		if rec.K == ledger.KindFault {
			out = append(out, rec)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// faultLine is what the test reads of a fault record.
type faultLine struct {
	K          string `json:"k"`
	Target     string `json:"target"`
	Phase      string `json:"phase"`
	T          int64  `json:"t"`
	InjectedBy int    `json:"injected_by"`
}
