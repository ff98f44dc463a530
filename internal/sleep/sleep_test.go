package sleep

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFor(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want bool
	}{
		{"waited out", context.Background(), time.Millisecond, true},
		{"nothing to wait", context.Background(), 0, true},
		{"negative", cancelled, -time.Second, true},
		{"cancelled before the end", cancelled, time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := For(tc.ctx, tc.d); got != tc.want {
				t.Errorf("For(%v) = %v, want %v", tc.d, got, tc.want)
			}
		})
	}
}

func TestUntil(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if !Until(cancelled, time.Now().Add(-time.Second)) {
		t.Error("a time in the past was not reached at once")
	}
	if Until(cancelled, time.Now().Add(time.Hour)) {
		t.Error("a cancelled context did not cut the wait short")
	}
	if !Until(context.Background(), time.Now().Add(time.Millisecond)) {
		t.Error("a near time was not reached")
	}
}

func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Millisecond, func() {
			calls++
			if calls == 3 {
				cancel()
			}
		})
	}()
	<-done // returns once ctx ends; goleak checks nothing is left
	if calls < 3 {
		t.Errorf("%d calls before cancel, want 3", calls)
	}

	var never int
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	Every(cancelled, time.Hour, func() { never++ })
	if never != 0 {
		t.Errorf("f ran %d times on a cancelled context", never)
	}
}
