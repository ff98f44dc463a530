// Package faults is the fault machinery of a seqgate run: it decodes a scenario's fault timeline and
// nemesis, expands them into the run's schedule, and injects and heals each fault at its time. What each
// fault kind does lives in package faults/kinds (one file per kind: a typed parameter struct and
// Inject/Heal); package faults/fault is the contract between the two (fault.Def, fault.Env). Registry
// lists the kinds; which target a fault hits and when it happens (at, for, every/repeat) are decided
// here, apart from what it does.
//
// The harness uses it in four steps:
//
//  1. decode the scenario's `faults:` and `nemesis:` blocks into []Spec and *NemesisSpec (YAML, strict,
//     errors carry line numbers); each entry's params become the kind's typed struct (Params) here,
//     once, and stay typed through the schedule to the kind's Build;
//  2. Expand them with the scenario seed into a deterministic []Instance and save it (SaveSchedule) to
//     the run directory before the run starts; `--replay` loads it back (LoadSchedule);
//  3. NewRunner(env, instances, record, clock) and Run it beside the load: it injects and heals each
//     instance at its time and writes a `fault` ledger record for every start and stop;
//  4. HealAll before the drain, on Ctrl-C and on a harness error; any error from Run or HealAll makes
//     the run inconclusive, never a silent pass.
//
// Env is the harness's side: tenant and meta-DB toxiproxy proxies, pod handles, admin URLs, consumers.
package faults
