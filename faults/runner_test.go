package faults

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/ledger"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// records collects the Runner's ledger records.
type records struct {
	mu   sync.Mutex
	recs []ledger.Record
}

func (r *records) add(rec *ledger.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, *rec)
}

func (r *records) phases(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.recs {
		if rec.ID == id {
			s := rec.Phase
			if rec.Err != "" {
				s += "!"
			}
			out = append(out, s)
		}
	}
	return out
}

func sinceStart() Clock {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }
}

// TestRunnerTimeline runs a small schedule against real proxies and checks that every fault is
// injected and healed in time order, recorded once as start and once as stop, and leaves no toxic.
func TestRunnerTimeline(t *testing.T) {
	env := faultstest.NewEnv(t, "t1", "t2")
	doc := decodeScenario(t, `
faults:
  - {at: 50ms, for: 150ms, kind: tenant_db_stall, target: t1, params: {then: resume}}
  - {at: 100ms, for: 100ms, kind: tenant_db_down, target: t2}
  - {at: 150ms, for: 100ms, kind: meta_db_latency, params: {latency: 10ms}}
`)
	in, err := Expand(doc.Faults, nil, 1, time.Second, TargetSet{Tenants: env.TenantNames})
	if err != nil {
		t.Fatal(err)
	}
	var rec records
	clock := sinceStart()
	r, err := NewRunner(env, in, rec.add, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, x := range in {
		if got := rec.phases(x.ID); !slices.Equal(got, []string{"start", "stop"}) {
			t.Errorf("%s records %v, want [start stop]", x.ID, got)
		}
	}
	for _, rc := range rec.recs {
		x := in[map[string]int{"f001": 0, "f002": 1, "f003": 2}[rc.ID]]
		if rc.K != ledger.KindFault || rc.Kind != x.Kind || rc.Target != x.Target || !reflect.DeepEqual(rc.Params, x.Params.Map()) {
			t.Errorf("record %+v does not describe %+v", rc, x)
		}
		// a fault on one tenant names it (this Env names tenants by id); the meta DB's names none
		if want := map[string]string{"f001": "t1", "f002": "t2", "f003": ""}[rc.ID]; rc.Tenant != want {
			t.Errorf("%s record tenant %q, want %q", rc.ID, rc.Tenant, want)
		}
		if rc.Phase == "start" && time.Duration(rc.T) < x.At || rc.Phase == "stop" && time.Duration(rc.T) < x.End() {
			t.Errorf("%s %s recorded at %s, before its time", rc.ID, rc.Phase, time.Duration(rc.T))
		}
	}
	for name, p := range env.Proxies {
		if n := len(p.Toxics.GetToxicArray()); n != 0 || !p.Enabled {
			t.Errorf("proxy %s: %d toxics, enabled %v after the run", name, n, p.Enabled)
		}
	}
	if a := r.activeIDs(); len(a) != 0 {
		t.Errorf("active after Run: %v", a)
	}
}

// TestRunnerHealAllOnCancel: a fault still active when the run is interrupted (Ctrl-C) is healed by
// HealAll, recorded once, and nothing is injected after HealAll.
func TestRunnerHealAllOnCancel(t *testing.T) {
	env := faultstest.NewEnv(t, "t1")
	in := []Instance{
		{ID: "f001", Kind: kinds.TenantDBStallName, Target: "t1", Targets: []string{"t1"}, At: 0, For: time.Hour, Params: paramsOf(t, kinds.TenantDBStallName, kinds.StallParams{Then: kinds.ThenReset})},
		{ID: "f002", Kind: kinds.TenantDBDownName, Target: "t1", Targets: []string{"t1"}, At: 300 * time.Millisecond, For: time.Hour},
	}
	var rec records
	r, err := NewRunner(env, in, rec.add, sinceStart())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	wait.Until(5*time.Second, func() bool { return len(r.activeIDs()) > 0 })
	if got := r.activeIDs(); !slices.Equal(got, []string{"f001"}) {
		t.Fatalf("active %v, want [f001]", got)
	}
	// Progress lines name an active fault by kind and target (its stable name when it has one).
	if got := r.ActiveLabels(); !slices.Equal(got, []string{"f001 tenant_db_stall(t1)"}) {
		t.Fatalf("active labels %v, want [f001 tenant_db_stall(t1)]", got)
	}
	if err := r.HealAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(env.Proxies["t1"].Toxics.GetToxicArray()); n != 0 {
		t.Fatalf("%d toxics left after HealAll", n)
	}
	if got := rec.phases("f001"); !slices.Equal(got, []string{"start", "stop"}) {
		t.Errorf("f001 records %v", got)
	}
	if got := rec.phases("f002"); len(got) != 0 {
		t.Errorf("f002 was injected after HealAll: %v", got)
	}
	if err := r.HealAll(context.Background()); err != nil {
		t.Fatalf("second HealAll: %v", err)
	}
	if got := rec.phases("f001"); len(got) != 2 {
		t.Errorf("second HealAll wrote records: %v", got)
	}
}

// TestRunnerFailures: a heal that fails is an *Error from HealAll (phase heal) and an error on the
// stop record; an inject that fails is an *Error from Run (phase inject). Neither is silent.
func TestRunnerFailures(t *testing.T) {
	env := faultstest.NewEnv(t)
	pod := faultstest.NewPod(t, "sleep", "60")
	env.Pods["p1"] = pod
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	env.Admin["p1"] = srv.URL
	in := []Instance{
		{ID: "f001", Kind: kinds.PodCrashName, Target: "p1", Targets: []string{"p1"}, At: 0, For: time.Hour, Params: paramsOf(t, kinds.PodCrashName, kinds.PodCrashParams{Restart: true})},
		{ID: "f002", Kind: kinds.OutboxPollerStallName, Target: "p1", Targets: []string{"p1"}, At: 0, For: time.Millisecond},
	}
	var rec records
	r, err := NewRunner(env, in, rec.add, sinceStart())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	wait.Until(5*time.Second, func() bool { return !pod.Running() })
	pod.FailRestart(errors.New("no capacity"))
	// f002 fails at once and is done; f001 waits for its hour until the cancel.
	wait.Until(5*time.Second, func() bool { return len(rec.phases("f002")) >= 2 })
	cancel()
	runErr := <-done
	var fe *Error
	if !errors.As(runErr, &fe) || fe.ID != "f002" || fe.Phase != "inject" {
		t.Fatalf("Run error %v, want the inject failure of f002", runErr)
	}
	healErr := r.HealAll(context.Background())
	if !errors.As(healErr, &fe) || fe.ID != "f001" || fe.Phase != "heal" {
		t.Fatalf("HealAll error %v, want the heal failure of f001", healErr)
	}
	if got := rec.phases("f001"); !slices.Equal(got, []string{"start", "stop!"}) {
		t.Errorf("f001 records %v, want a stop with its error", got)
	}
	// f002's clean-up heal (resume) got the same 404, so it stays active too.
	if got := r.activeIDs(); !slices.Equal(got, []string{"f001", "f002"}) {
		t.Errorf("a failed heal must stay active for a retry, got %v", got)
	}
}

// TestGuard: Heal before Inject is refused, a second Inject is refused, Heal is idempotent.
func TestGuard(t *testing.T) {
	n := 0
	g := guarded(funcFault{inject: func() error { return nil }, heal: func() error { n++; return nil }})
	ctx := context.Background()
	if err := g.Heal(ctx); !errors.Is(err, ErrNotInjected) {
		t.Fatalf("heal before inject: %v", err)
	}
	if err := g.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Inject(ctx); !errors.Is(err, ErrAlreadyInjected) {
		t.Fatalf("second inject: %v", err)
	}
	for range 3 {
		if err := g.Heal(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n != 1 {
		t.Fatalf("underlying heal ran %d times, want 1", n)
	}
}

type funcFault struct{ inject, heal func() error }

func (f funcFault) Inject(context.Context) error { return f.inject() }
func (f funcFault) Heal(context.Context) error   { return f.heal() }

// TestRunnerInterruptedInject: a pod_restart cut off by the end of the run (its start fails on the
// cancelled context) is not reported as broken; it stays active and HealAll finishes the restart.
func TestRunnerInterruptedInject(t *testing.T) {
	env := faultstest.NewEnv(t)
	pod := faultstest.NewPod(t, "sh", "-c", `trap "" TERM; while :; do sleep 1; done`)
	env.Pods["p1"] = pod
	faultstest.WaitProcState(t, pod.PID(), 'S')
	in := []Instance{{ID: "f001", Kind: kinds.PodRestartName, Target: "p1", Targets: []string{"p1"}, Params: paramsOf(t, kinds.PodRestartName, kinds.PodRestartParams{Grace: 500 * time.Millisecond})}}
	var rec records
	r, err := NewRunner(env, in, rec.add, sinceStart())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	wait.Until(5*time.Second, func() bool { return len(rec.phases("f001")) > 0 })
	cancel() // during the 500ms grace: the start that follows sees a cancelled context
	if err := <-done; err != nil {
		t.Fatalf("an interrupted inject was reported as a failure: %v", err)
	}
	if got := r.activeIDs(); !slices.Equal(got, []string{"f001"}) {
		t.Fatalf("active %v, want [f001] left for HealAll", got)
	}
	if err := r.HealAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !pod.Running() {
		t.Fatal("HealAll did not finish the restart")
	}
	if got := rec.phases("f001"); !slices.Equal(got, []string{"start", "stop"}) {
		t.Errorf("records %v", got)
	}
}

// TestRecordOnlyRunner: an agent that does not own a sharded run's faults writes each one's start and
// stop at its times, marked injected_by the owner, and touches nothing (its proxies keep no toxic);
// the owner's runner, on the same schedule, does inject.
func TestRecordOnlyRunner(t *testing.T) {
	env := faultstest.NewEnv(t, "t1")
	doc := decodeScenario(t, `
faults:
  - {at: 20ms, for: 300ms, kind: tenant_db_down, target: t1}
`)
	in, err := Expand(doc.Faults, nil, 1, time.Second, TargetSet{Tenants: env.TenantNames})
	if err != nil {
		t.Fatal(err)
	}
	var rec records
	clock := sinceStart()
	r := NewRecordOnly(in, 1, rec.add, clock)
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	wait.For(t, 5*time.Second, "the start record", func() bool { return len(rec.phases("f001")) >= 1 })
	for name, p := range env.Proxies {
		if !p.Enabled || len(p.Toxics.GetToxicArray()) != 0 {
			t.Errorf("proxy %s was touched by a record-only runner", name)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := rec.phases("f001"); !slices.Equal(got, []string{"start", "stop"}) {
		t.Fatalf("records %v, want [start stop]", got)
	}
	for _, rc := range rec.recs {
		if rc.InjectedBy != 1 || rc.Kind != "tenant_db_down" || rc.Target != "t1" {
			t.Errorf("record %+v: want injected_by 1 and the fault's kind and target", rc)
		}
		if rc.Phase == "stop" && time.Duration(rc.T) < in[0].End() {
			t.Errorf("stop recorded at %s, before the fault's end %s", time.Duration(rc.T), in[0].End())
		}
	}
}
