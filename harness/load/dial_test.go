package load

import (
	"context"
	"errors"
	"fmt"
	"net"
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
