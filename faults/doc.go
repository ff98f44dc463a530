// Package faults injects the failures a seqgate run is about: tenant-DB stalls, latency and outages,
// meta-DB outages, pod crashes, pauses and restarts, a stalled outbox poller, slow and disconnected
// consumers. Each fault kind is one file with a typed parameter struct and Inject/Heal; which target a
// fault hits and when it happens (at, for, every/repeat) are kept apart from what it does.
//
// The harness uses it in four steps:
//
//  1. decode the scenario's `faults:` and `nemesis:` blocks into []Spec and *NemesisSpec (YAML, strict,
//     errors carry line numbers);
//  2. Expand them with the scenario seed into a deterministic []Instance and save it (SaveSchedule) to
//     the run directory before the run starts; `--replay` loads it back (LoadSchedule);
//  3. NewRunner(env, instances, record, clock) and Run it beside the load: it injects and heals each
//     instance at its time and writes a `fault` ledger record for every start and stop;
//  4. HealAll before the drain, on Ctrl-C and on a harness error; any error from Run or HealAll makes
//     the run inconclusive, never a silent pass.
//
// Env is the harness's side: tenant and meta-DB toxiproxy proxies, pod handles, admin URLs, consumers.
package faults
