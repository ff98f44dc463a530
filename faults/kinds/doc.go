// Package kinds holds the fault kinds, one file each: its name constant, its typed parameter struct
// (time.Duration for durations, the unit in every field's comment), its Def and the Fault it builds
// (Inject/Heal). Which target a fault hits and when are not decided here: package faults schedules,
// guards and runs what these kinds build, and lists them in its Registry.
package kinds
