package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/internal/wait"
)

// TestDialLimiter: at most n dials in progress per address; another address dials meanwhile (a
// hung endpoint never holds up the others); a dial waiting for a slot gives up with its context;
// every slot is given back, so the held dials all complete once released. Control: with no bound
// (n = the number of dials) all of them run at once, so the bound is what the count measures.
func TestDialLimiter(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, c := range []struct {
		name          string
		n, dials      int
		wantMaxAtOnce int
	}{{"bounded", 3, 10, 3}, {"control: no bound", 10, 10, 10}} {
		t.Run(c.name, func(t *testing.T) {
			release := make(chan struct{})
			var mu sync.Mutex
			inProgress := map[string]int{}
			maxAtOnce := map[string]int{}
			l := &dialLimiter{n: c.n, dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				mu.Lock()
				inProgress[addr]++
				maxAtOnce[addr] = max(maxAtOnce[addr], inProgress[addr])
				mu.Unlock()
				if addr == "hung:1" {
					<-release
				}
				mu.Lock()
				inProgress[addr]--
				mu.Unlock()
				return nil, errors.New("test dial")
			}}
			var wg sync.WaitGroup
			var done atomic.Int64
			for range c.dials {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _ = l.DialContext(context.Background(), "tcp", "hung:1")
					done.Add(1)
				}()
			}
			// The hung address's slots fill: wait until n of its dials are in progress.
			wait.For(t, 10*time.Second, fmt.Sprintf("%d dials in progress to the hung address", c.wantMaxAtOnce), func() bool {
				mu.Lock()
				defer mu.Unlock()
				return inProgress["hung:1"] == c.wantMaxAtOnce
			})
			if _, err := l.DialContext(context.Background(), "tcp", "other:1"); err == nil || err.Error() != "test dial" {
				t.Fatalf("another address while the first hangs: %v, want its own dial", err)
			}
			if c.n < c.dials {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				_, err := l.DialContext(ctx, "tcp", "hung:1")
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("a dial waiting for a slot: %v, want its context's error", err)
				}
			}
			close(release)
			wg.Wait()
			if done.Load() != int64(c.dials) || maxAtOnce["hung:1"] != c.wantMaxAtOnce {
				t.Fatalf("%d of %d dials done, at most %d at once; want all, %d at once", done.Load(), c.dials, maxAtOnce["hung:1"], c.wantMaxAtOnce)
			}
		})
	}
}

// TestDialLimiterWaitEnds: through a real http.Transport (which dials with a context detached from
// the request's), a dial waiting for the only slot of a hung address returns at once when its
// request ends or the limiter closes, while the dial holding the slot still hangs. The control is a
// request not marked with dialScoped: its waiting dial outlives the request (the leak goleak found
// after the load benchmark) until Close ends it.
func TestDialLimiterWaitEnds(t *testing.T) {
	defer goleak.VerifyNone(t)
	// scopedTook is how long the scoped, cancelled request's waiting dial took to return: the
	// control's window is twenty times that (at least 200 ms).
	var scopedTook time.Duration
	for _, c := range []struct {
		name   string
		scoped bool
		end    string // "cancel": the request is cancelled; "close": the limiter is closed
		ends   bool   // the waiting dial returns before Close
	}{
		{"request cancelled", true, "cancel", true},
		{"limiter closed", true, "close", true},
		{"control: request not scoped, cancelled", false, "cancel", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			release := make(chan struct{})
			var dials atomic.Int64
			l := &dialLimiter{n: 1, dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil, errors.New("test dial")
			}}
			tr := &http.Transport{DialContext: l.DialContext}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			do := func(ctx context.Context) <-chan error {
				ch := make(chan error, 1)
				if c.scoped {
					ctx = dialScoped(ctx)
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://hung.invalid:1/", nil)
				go func() {
					resp, err := client.Do(req)
					if resp != nil {
						resp.Body.Close()
					}
					ch <- err
				}()
				return ch
			}
			first := do(context.Background()) // takes the slot and hangs
			wait.For(t, time.Minute, "the first dial to hang", func() bool { return dials.Load() == 1 })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			second := do(ctx)
			wait.For(t, time.Minute, "the second dial to wait", func() bool { return l.waiting.Load() == 1 })
			start := time.Now()
			switch c.end {
			case "cancel":
				cancel()
				<-second // the request itself ends either way
			case "close":
				l.Close()
			}
			if c.ends {
				wait.For(t, time.Minute, "the waiting dial to return", func() bool { return l.waiting.Load() == 0 })
				if c.end == "cancel" {
					scopedTook = time.Since(start)
				}
			} else {
				if scopedTook == 0 {
					t.Fatal("control: the scoped, cancelled case did not run first")
				}
				// Over twenty times what the scoped case took to return (at least 200 ms), the
				// unscoped wait is still there.
				wait.Never(t, max(20*scopedTook, 200*time.Millisecond), "the unscoped waiting dial to return before Close",
					func() bool { return l.waiting.Load() != 1 })
				l.Close()
				wait.For(t, time.Minute, "Close to end the wait", func() bool { return l.waiting.Load() == 0 })
			}
			if dials.Load() != 1 {
				t.Errorf("%d dials made, want only the first (the waiting one never dialled)", dials.Load())
			}
			l.Close()
			close(release)
			<-first
			if c.end == "close" {
				cancel()
				<-second
			}
		})
	}
}
