// Package synth writes synthetic ledgers with exactly the anomalies asked for, and the ground truth
// of what a correct verifier must find in them (docs/ledger-v1.md, "gen-ledger"). It is how the
// verifier is tested against known answers and how its speed is measured at ten million records.
package synth

import (
	"fmt"
	"io"
)

// Config describes one synthetic run. Counts of anomalies are exact: each injection produces one
// counted instance under the spec's definitions and nothing else.
type Config struct {
	Seed               int64
	Tenants            int     // tenants in the run record (cold ones included)
	ConsumersPerTenant int     // durable SSE consumers per tenant
	Events             int     // acked event-producing mutations (the spec's W, "acked")
	Pods               int     // eventlogd pods (default 3)
	Rate               float64 // event-producing mutations per second over the run (default 1000)
	Budget             float64 // loss budget of the run record (default 1e-4)
	Cold               int     // cold tenants: no writers, their DB proxies stay flat
	// Idle tenants are named in the run (as tenant records, which then name every tenant) and have
	// no records at all: no writers, no consumers, no proxy. They model a run of many mostly idle
	// tenants, whose summary must stay small.
	Idle int

	Lost           int // lost, explained by a retry_dropped_total counter on the acking pod
	Silent         int // lost, unexplained
	CrashLoss      int // lost, acked by a pod that later crashes
	Skipped        int // (consumer, event): cursor passed a persisted event without delivering it
	Undelivered    int // (consumer, event): persisted event beyond the consumer's final cursor
	Duplicates     int // (consumer, event) delivered twice
	Leaks          int // ev delivered to a consumer with the path of another tenant's mutation
	Unexpected     int // ev whose path matches no mutation at all
	Reorder        int // (consumer, event) overtaken by the next event, sent after its ack
	Recovered      int // ambiguous (timeout) mutations whose event appears anyway
	SeqTooOld      int // (consumer, event) not delivered, covered by a later seq_too_old reset
	SpuriousResets int // seq_too_old resets that jump the cursor over a row still in the audit
	ColdWakeups    int // cold tenants whose DB proxy counters rise (at most Cold)
	SeqMismatch    int // (consumer, event) delivered in a frame carrying the consumer's previous seq
	MaskedSkips    int // (consumer, event) skipped, with a frame at its seq carrying a path no mutation wrote
	// Resync makes the run record say resync and every consumer list after each reset but
	// structural_change: --seq-too-old events are then passed by a server_restart reset at their
	// seq and shown by the listing after it (resync_proven), and ResyncMissed ones are passed the
	// same way by a listing that does not show them (resync_missed, a failure).
	Resync       bool
	ResyncMissed int

	// Progress, when set, receives a line per million records written (for big runs).
	Progress io.Writer
}

// withDefaults fills unset optional fields.
func (c Config) withDefaults() Config {
	if c.Pods == 0 {
		c.Pods = 3
	}
	if c.Rate == 0 {
		c.Rate = 1000
	}
	if c.Budget == 0 {
		c.Budget = 1e-4
	}
	return c
}

// mutationVictims is the number of event mutations that are lost in some way.
func (c Config) mutationVictims() int { return c.Lost + c.Silent + c.CrashLoss }

// consumerArms is the number of per-consumer injections placed on delivered events.
func (c Config) consumerArms() int {
	return c.Skipped + c.Duplicates + c.Leaks + c.Unexpected + c.Reorder + c.SeqTooOld + c.SpuriousResets + c.SeqMismatch + c.MaskedSkips + c.ResyncMissed
}

// Validate reports the first impossible or contradictory setting, naming the flag.
func (c Config) Validate() error {
	c = c.withDefaults()
	neg := []struct {
		name string
		v    int
	}{
		{"tenants", c.Tenants}, {"consumers-per-tenant", c.ConsumersPerTenant}, {"events", c.Events},
		{"pods", c.Pods}, {"cold", c.Cold}, {"idle-tenants", c.Idle}, {"lost", c.Lost}, {"silent", c.Silent}, {"crash-loss", c.CrashLoss},
		{"skipped", c.Skipped}, {"undelivered", c.Undelivered}, {"duplicates", c.Duplicates}, {"leaks", c.Leaks},
		{"unexpected", c.Unexpected}, {"reorder", c.Reorder}, {"recovered", c.Recovered},
		{"seq-too-old", c.SeqTooOld}, {"spurious-resets", c.SpuriousResets}, {"cold-wakeups", c.ColdWakeups},
		{"seq-mismatch", c.SeqMismatch}, {"masked-skips", c.MaskedSkips}, {"resync-missed", c.ResyncMissed},
	}
	for _, n := range neg {
		if n.v < 0 {
			return fmt.Errorf("--%s %d: must not be negative", n.name, n.v)
		}
	}
	switch {
	case c.Tenants < 1:
		return fmt.Errorf("--tenants %d: need at least 1", c.Tenants)
	case c.Cold >= c.Tenants:
		return fmt.Errorf("--cold %d: at least one of the %d tenants must be active (not cold)", c.Cold, c.Tenants)
	case c.ColdWakeups > c.Cold:
		return fmt.Errorf("--cold-wakeups %d: more than the %d cold tenants (one wakeup per cold tenant)", c.ColdWakeups, c.Cold)
	case c.Pods < 1:
		return fmt.Errorf("--pods %d: need at least 1", c.Pods)
	case c.Rate <= 0:
		return fmt.Errorf("--rate %v: must be positive", c.Rate)
	case c.Budget < 0 || c.Budget > 1:
		return fmt.Errorf("--budget %v: want a fraction in [0, 1]", c.Budget)
	case c.CrashLoss > 0 && c.Pods < 2:
		return fmt.Errorf("--crash-loss %d: needs --pods >= 2 (one pod crashes, another carries on)", c.CrashLoss)
	case c.ResyncMissed > 0 && !c.Resync:
		return fmt.Errorf("--resync-missed %d: needs --resync (a listing to miss the event)", c.ResyncMissed)
	case c.Leaks > 0 && c.Tenants-c.Cold < 2:
		return fmt.Errorf("--leaks %d: needs at least 2 active tenants (a leak shows one tenant another's path)", c.Leaks)
	}
	active := c.Tenants - c.Cold
	consumers := active * c.ConsumersPerTenant
	if c.consumerArms()+c.Undelivered > 0 && c.ConsumersPerTenant < 1 {
		return fmt.Errorf("consumer anomalies (skipped, undelivered, duplicates, ...) need --consumers-per-tenant >= 1")
	}
	skipClass, resetClass := c.Skipped+c.Undelivered+c.MaskedSkips, c.SeqTooOld+c.SpuriousResets+c.ResyncMissed
	if skipClass > 0 && resetClass > 0 && consumers < 2 {
		return fmt.Errorf("--skipped/--undelivered/--masked-skips and --seq-too-old/--spurious-resets together need 2 consumers of active tenants (a seq_too_old reset would excuse a skip)")
	}
	tail := active + c.Undelivered
	if c.Events < tail {
		return fmt.Errorf("--events %d: too few; need at least %d (one closing event per active tenant plus one per --undelivered)", c.Events, tail)
	}
	main := c.Events - tail
	if v := c.mutationVictims(); v > 0 && main < 10*v {
		return fmt.Errorf("--events %d: too few for %d lost mutations (lost+silent+crash-loss); need at least %d", c.Events, v, tail+10*v)
	}
	if arms := c.consumerArms(); arms > 0 && consumers > 0 {
		perConsumer := (arms + consumers - 1) / consumers
		perTenant := main / active
		if perTenant < 20*perConsumer {
			need := tail + active*20*perConsumer
			return fmt.Errorf("--events %d: too few for %d consumer anomalies over %d consumers; need at least %d", c.Events, arms, consumers, need)
		}
	}
	if c.Recovered > main {
		return fmt.Errorf("--recovered %d: more than the %d events of the main phase", c.Recovered, main)
	}
	return nil
}
