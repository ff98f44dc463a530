package api

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
)

type otherKey struct{}

// TestReqCtxAsWithDeadline: a reqCtx answers Deadline, Err, Done and Value as
// context.WithDeadline(parent, d) does, whether or not Done was asked for (the timer is made
// lazily), through the request's end (stop), the parent's cancel and the deadline passing.
func TestReqCtxAsWithDeadline(t *testing.T) {
	const short = 30 * time.Millisecond
	for _, c := range []struct {
		name       string
		timeout    time.Duration
		parentDL   time.Duration // the parent's own deadline (0: none)
		done       bool          // ask for Done before the event
		event      string        // what happens: "", "stop", "cancel" (the parent), "deadline"
		wantErr    error
		wantClosed bool
	}{
		{"live", time.Hour, 0, false, "", nil, false},
		{"live, Done asked", time.Hour, 0, true, "", nil, false},
		{"stopped", time.Hour, 0, false, "stop", context.Canceled, true},
		{"stopped, Done asked", time.Hour, 0, true, "stop", context.Canceled, true},
		{"parent cancelled", time.Hour, 0, false, "cancel", context.Canceled, true},
		{"parent cancelled, Done asked", time.Hour, 0, true, "cancel", context.Canceled, true},
		{"deadline passed", short, 0, false, "deadline", context.DeadlineExceeded, true},
		{"deadline passed, Done asked", short, 0, true, "deadline", context.DeadlineExceeded, true},
		{"deadline passed, then stopped", short, 0, false, "deadline+stop", context.DeadlineExceeded, true},
		{"the parent's deadline is earlier", time.Hour, short, false, "deadline", context.DeadlineExceeded, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, cancel := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "v"))
			defer cancel()
			parent := base
			if c.parentDL > 0 {
				var pc context.CancelFunc
				parent, pc = context.WithTimeout(base, c.parentDL)
				defer pc()
			}
			var rc reqCtx
			rc.init(parent, c.timeout)
			ref, refCancel := context.WithTimeout(parent, c.timeout) // what the pod made before
			defer refCancel()
			if d, ok := rc.Deadline(); !ok || d.Sub(func() time.Time { d, _ := ref.Deadline(); return d }()).Abs() > 10*time.Millisecond {
				t.Fatalf("deadline %v %v, want about %v", d, ok, func() time.Time { d, _ := ref.Deadline(); return d }())
			}
			if c.done {
				_ = rc.Done()
			}
			switch c.event {
			case "stop":
				rc.stop()
				refCancel()
			case "cancel":
				cancel()
			case "deadline", "deadline+stop":
				<-ref.Done()
				// rc's deadline was taken a moment after ref's: wait until it has passed too.
				wait.For(t, 5*time.Second, "the request context's deadline", func() bool { return rc.Err() != nil })
				if c.event == "deadline+stop" {
					rc.stop()
					refCancel()
				}
			}
			if err := rc.Err(); !errors.Is(err, c.wantErr) || (c.wantErr == nil) != (err == nil) {
				t.Fatalf("Err = %v, want %v", err, c.wantErr)
			}
			if err, rerr := rc.Err(), ref.Err(); err != rerr {
				t.Fatalf("Err = %v, context.WithTimeout's %v", err, rerr)
			}
			select {
			case <-rc.Done():
				if !c.wantClosed {
					t.Fatal("Done closed on a live context")
				}
			case <-time.After(2 * short):
				if c.wantClosed {
					t.Fatal("Done not closed")
				}
			}
			if rc.Value(otherKey{}) != "v" || rc.Value(tenantKey) != nil {
				t.Fatalf("values: %v %v", rc.Value(otherKey{}), rc.Value(tenantKey))
			}
			rc.t = reqTenant{}
			rc.tenant = &rc.t
			if rc.Value(tenantKey) != &rc.t {
				t.Fatal("the tenant is not its value")
			}
			rc.stop()
		})
	}
}

// TestReqCtxChildren: a context derived from a reqCtx ends with it (stop, the deadline), as one
// derived from context.WithDeadline's does.
func TestReqCtxChildren(t *testing.T) {
	var rc reqCtx
	rc.init(context.Background(), time.Hour)
	child, cancel := context.WithCancel(&rc)
	defer cancel()
	rc.stop()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("child not cancelled by stop")
	}
	var dl reqCtx
	dl.init(context.Background(), 20*time.Millisecond)
	defer dl.stop()
	child, cancel = context.WithCancel(&dl)
	defer cancel()
	select {
	case <-child.Done():
		if !errors.Is(child.Err(), context.DeadlineExceeded) {
			t.Fatalf("child: %v", child.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("child not ended by the deadline")
	}
}
