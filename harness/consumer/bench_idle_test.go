package consumer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/helperproc"
	"github.com/seqgate/seqgate/ledger"
)

// TestIdleSSEServer is the SSE server of BenchmarkIdleConsumers, run as a separate process (the test
// binary re-executed with IDLE_SERVER=1) so its memory is not counted with the consumers': every
// stream gets reset(initial_sync) and then a heartbeat every 5 s, as an idle tenant's stream does.
func TestIdleSSEServer(t *testing.T) {
	if os.Getenv("IDLE_SERVER") == "" {
		t.Skip("helper process of BenchmarkIdleConsumers")
	}
	helperproc.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		fmt.Fprintf(w, "event: reset\ndata: {\"seq\":0,\"reason\":\"initial_sync\"}\n\n")
		fl.Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Second):
				fmt.Fprintf(w, "event: heartbeat\ndata: {\"seq\":0}\n\n")
				fl.Flush()
			}
		}
	}))
}

// MaxIdleConsumerBytes is what one idle durable consumer may cost the harness: a 1,000-tenant run
// holds a thousand of them.
const MaxIdleConsumerBytes = 32 << 10

// BenchmarkIdleConsumers opens N idle durable consumers (IDLE_CONSUMERS, default 1,000) of an SSE
// server in its own process, through the client a run's consumers use (NewClient(0)), waits until
// each has its first frame, and reports what they hold: the Go heap and goroutine stacks in use
// (after a GC) and the process's resident memory, both as deltas from before they opened, per
// consumer. It fails when the heap-and-stacks figure passes MaxIdleConsumerBytes.
func BenchmarkIdleConsumers(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("IDLE_CONSUMERS")); err == nil && v > 0 {
		n = v
	}
	url := helperproc.Start(b, "TestIdleSSEServer", "IDLE_SERVER=1")
	for range b.N {
		w := ledger.NewWriter(io.Discard)
		var mu sync.Mutex
		sink := sinkFunc(func(r *ledger.Record) error { mu.Lock(); defer mu.Unlock(); return w.Write(r) })
		client := NewClient(0)
		before, rssBefore := inUse()
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		cs := make([]*Consumer, n)
		var wg sync.WaitGroup
		for i := range cs {
			cs[i] = New(Config{Name: fmt.Sprintf("c%d", i), Tenant: "t1", Key: "k", Durable: true,
				BackoffMin: 100 * time.Millisecond, BackoffMax: time.Second, Start: start, Sink: sink, Client: client,
				Endpoints: func() []Endpoint { return []Endpoint{{Name: "srv", URL: url}} }})
			wg.Add(1)
			go func() { defer wg.Done(); cs[i].Run(ctx) }()
		}
		for deadline := time.Now().Add(120 * time.Second); ; {
			ready := 0
			for _, c := range cs {
				if c.Frames() > 0 {
					ready++
				}
			}
			if ready == n {
				break
			}
			if time.Now().After(deadline) {
				cancel()
				wg.Wait()
				b.Fatalf("only %d of %d consumers had their first frame within 120 s", ready, n)
			}
			time.Sleep(10 * time.Millisecond) // pacing the poll
		}
		after, rssAfter := inUse()
		if path := os.Getenv("IDLE_HEAPPROFILE"); path != "" {
			if f, err := os.Create(path); err == nil {
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
		perConsumer := float64(after-before) / float64(n)
		goroutines := runtime.NumGoroutine()
		b.Logf("%d idle consumers: %.0f bytes of heap and stacks each, %.0f bytes of RSS each, %d goroutines",
			n, perConsumer, float64(rssAfter-rssBefore)/float64(n), goroutines)
		cancel()
		wg.Wait()
		client.CloseIdleConnections()
		b.ReportMetric(perConsumer, "heap+stack_B/consumer")
		b.ReportMetric(float64(rssAfter-rssBefore)/float64(n), "rss_B/consumer")
		b.ReportMetric(float64(n), "consumers")
		if perConsumer > MaxIdleConsumerBytes {
			b.Errorf("an idle consumer holds %.0f bytes of heap and stacks, more than %d", perConsumer, MaxIdleConsumerBytes)
		}
	}
}

// inUse returns the Go heap and stacks in use after a full GC, and the process's resident set, in bytes.
func inUse() (heapStack, rss int64) {
	// Several collections: each one may halve a parked goroutine's stack, down to what it uses, as
	// the collections of a long run do.
	for range 4 {
		runtime.GC()
	}
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if os.Getenv("IDLE_HEAPPROFILE") != "" {
		fmt.Fprintf(os.Stderr, "heap in use %d, stacks in use %d\n", ms.HeapInuse, ms.StackInuse)
	}
	return int64(ms.HeapInuse + ms.StackInuse), vmRSS()
}

// vmRSS is the process's VmRSS from /proc/self/status (0 where there is none).
func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
