package tick

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSleep(t *testing.T) {
	cases := []struct {
		name   string
		cancel bool
		d      time.Duration
		want   bool
	}{
		{"full wait", false, time.Millisecond, true},
		{"cancelled context", true, time.Hour, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				cancel()
			}
			if got := Sleep(ctx, c.d); got != c.want {
				t.Fatalf("Sleep(%v) = %v, want %v", c.d, got, c.want)
			}
		})
	}
}

func TestEveryRunsUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Millisecond, func(context.Context) {
			if n.Add(1) == 3 {
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context was cancelled")
	}
	if got := n.Load(); got != 3 {
		t.Fatalf("fn ran %d times, want 3 (Every must stop once ctx ends)", got)
	}
}
