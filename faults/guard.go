package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrNotInjected is returned by Heal of a fault whose Inject was never called.
var ErrNotInjected = errors.New("heal before inject")

// ErrAlreadyInjected is returned by a second Inject of the same fault instance.
var ErrAlreadyInjected = errors.New("fault already injected")

type faultState int

const (
	stateNew faultState = iota
	stateInjected
	stateHealed
)

// guard is the small state machine every fault instance runs in: new -> injected -> healed. A failed
// Inject still counts as injected (part of it may have happened), so Heal is attempted; a failed Heal
// stays injected so a later HealAll retries it.
type guard struct {
	mu    sync.Mutex
	state faultState
	f     Fault
}

func guarded(f Fault) *guard { return &guard{f: f} }

func (g *guard) Inject(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != stateNew {
		return ErrAlreadyInjected
	}
	g.state = stateInjected
	return g.f.Inject(ctx)
}

func (g *guard) Heal(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch g.state {
	case stateNew:
		return ErrNotInjected
	case stateHealed:
		return nil
	}
	if err := g.f.Heal(ctx); err != nil {
		return err
	}
	g.state = stateHealed
	return nil
}

// active reports whether the fault was injected and not yet healed.
func (g *guard) active() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state == stateInjected
}

// multi applies one fault to several targets (target "all"): Inject injects each, Heal heals each and
// reports every failure, not just the first, because one unhealed target spoils the run.
type multi []Fault

func (m multi) Inject(ctx context.Context) error {
	var errs []error
	for _, f := range m {
		errs = append(errs, f.Inject(ctx))
	}
	return errors.Join(errs...)
}

func (m multi) Heal(ctx context.Context) error {
	var errs []error
	for _, f := range m {
		errs = append(errs, f.Heal(ctx))
	}
	return errors.Join(errs...)
}

// Error is a fault that could not be injected or healed; the harness turns it into an inconclusive run.
type Error struct {
	ID    string // instance id, e.g. f003
	Kind  string
	Phase string // inject | heal | build
	Err   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("fault %s (%s): %s failed: %v", e.ID, e.Kind, e.Phase, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
