// Package shard splits one scenario among N load agents (seqgate run --shard K/N): which tenants
// agent K drives, and the run id every agent of one run shares. Both are functions of the scenario
// and its seed only, so N agents started anywhere agree without talking to each other.
package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/ledger"
)

// Shard is agent K of N (1 <= K <= N). The zero Shard means one agent drives everything.
type Shard struct {
	K, N int
}

// Sharded reports whether s names one agent of several (or one of one).
func (s Shard) Sharded() bool { return s.N > 0 }

// String renders s as K/N.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Parse reads the --shard flag's value, K/N with 1 <= K <= N <= ledger.MaxShards. The error names
// the flag and the value.
func Parse(v string) (Shard, error) {
	bad := func(why string) (Shard, error) {
		return Shard{}, fmt.Errorf("--shard %q: %s (want K/N, agent K of N, 1 <= K <= N <= %d, e.g. 2/4)", v, why, ledger.MaxShards)
	}
	ks, ns, ok := strings.Cut(v, "/")
	if !ok {
		return bad("no /")
	}
	k, kerr := count(ks)
	n, nerr := count(ns)
	switch {
	case kerr != nil || nerr != nil:
		return bad("K and N are whole numbers")
	case n < 1 || n > ledger.MaxShards:
		return bad(fmt.Sprintf("N is %d", n))
	case k < 1 || k > n:
		return bad(fmt.Sprintf("K is %d, outside 1..%d", k, n))
	}
	return Shard{K: k, N: n}, nil
}

// count parses a plain decimal number of at most 6 digits (no sign, no spaces).
func count(s string) (int, error) {
	if s == "" || len(s) > 6 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(s)
}

// Assign returns, for every tenant slot of the scenario (by its 1-based Index), the agent (1..n)
// that drives it. Within each tenant group the slots are shuffled by a generator seeded from seed
// and dealt round robin, continuing where the previous group stopped: every agent gets a share of
// every group (a hot group is not left to one agent) and the agents' totals differ by at most one.
func Assign(tenants []scenario.Tenant, seed int64, n int) map[int]int {
	out := make(map[int]int, len(tenants))
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed5a4d)) // #nosec: a schedule, not a secret
	next := 0
	for start := 0; start < len(tenants); {
		end := start
		for end < len(tenants) && tenants[end].Group == tenants[start].Group {
			end++
		}
		group := make([]int, 0, end-start)
		for _, t := range tenants[start:end] {
			group = append(group, t.Index)
		}
		rng.Shuffle(len(group), func(i, j int) { group[i], group[j] = group[j], group[i] })
		for _, idx := range group {
			out[idx] = next%n + 1
			next++
		}
		start = end
	}
	return out
}

// Check refuses a shard the scenario cannot be split into: more agents than tenants would leave an
// agent with nothing to drive and a ledger with nothing to judge.
func Check(s Shard, sc *scenario.Scenario) error {
	if n := len(sc.Expand()); s.N > n {
		return fmt.Errorf("--shard %s: scenario %s has %d tenants, so at most %d agents (each agent drives whole tenants)", s, sc.Name, n, n)
	}
	return nil
}

// RunID is the run id every agent of a sharded run derives when none is given: the scenario's name,
// its seed and a digest of the resolved scenario (every override applied), so agents that run the
// same scenario agree and agents handed different ones do not. Two runs of the same scenario and
// seed get the same id: give --run-id to tell them apart.
func RunID(sc *scenario.Scenario) (string, error) {
	b, err := sc.Marshal()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%s-s%d-%s", sc.Name, sc.Seed, hex.EncodeToString(sum[:4])), nil
}
