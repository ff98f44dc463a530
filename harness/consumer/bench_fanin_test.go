package consumer

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/helperproc"
	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/ledger"
)

// TestFanInServer is the SSE server of BenchmarkSSEFanIn, run as a separate process (the test binary
// re-executed with FANIN_SERVER=N) so that its CPU is not charged to the consumers: every stream gets
// reset(initial_sync), then N file_changed frames as fast as the socket takes them, then heartbeats.
func TestFanInServer(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("FANIN_SERVER"))
	if n == 0 {
		t.Skip("helper process of BenchmarkSSEFanIn")
	}
	helperproc.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		bw := bufio.NewWriterSize(w, 32<<10)
		fmt.Fprintf(bw, "event: reset\ndata: {\"seq\":0,\"reason\":\"initial_sync\"}\n\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(bw, "event: file_changed\ndata: {\"seq\":%d,\"path\":\"/seqgate/bench/t1/m%d\",\"op\":\"write\",\"ts\":1795961339230}\n\n", i, i)
		}
		bw.Flush()
		fl.Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Second):
				fmt.Fprintf(w, "event: heartbeat\ndata: {\"seq\":%d}\n\n", n)
				fl.Flush()
			}
		}
	}))
}

// BenchmarkSSEFanIn measures how many concurrent SSE consumers one seqgate process holds and how many
// events/s it parses and records (every frame goes through the real consumer and is encoded by the
// real ledger writer into io.Discard), for 100, 1,000 and 4,000 consumers of 1,000 events each
// (complete_fraction < 1 when not every event arrived within 60 s: the limit of this machine).
func BenchmarkSSEFanIn(b *testing.B) {
	const events = 1000
	url := helperproc.Start(b, "TestFanInServer", "FANIN_SERVER="+strconv.Itoa(events))
	for _, n := range []int{100, 1000, 4000} {
		b.Run(fmt.Sprintf("consumers=%d", n), func(b *testing.B) {
			for range b.N {
				w := ledger.NewWriter(io.Discard)
				var mu sync.Mutex
				sink := sinkFunc(func(r *ledger.Record) error { mu.Lock(); defer mu.Unlock(); return w.Write(r) })
				client := NewClient(0) // the client a run's consumers use
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
				wait.Until(60*time.Second, func() bool {
					for _, c := range cs {
						if c.Events() < events {
							return false
						}
					}
					return true
				})
				el := time.Since(start)
				var got int64
				for _, c := range cs {
					got += c.Events()
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				cancel()
				wg.Wait()
				client.CloseIdleConnections()
				if got < int64(n*events) {
					b.Logf("%d consumers: only %d of %d events within the 60 s bound (%s)", n, got, n*events, el)
				}
				b.ReportMetric(float64(got)/float64(n*events), "complete_fraction")
				b.ReportMetric(float64(got)/el.Seconds(), "events/s")
				b.ReportMetric(float64(ms.HeapInuse)/float64(n)/1024, "heap_KiB/consumer")
			}
		})
	}
}

type sinkFunc func(*ledger.Record) error

func (f sinkFunc) Write(r *ledger.Record) error { return f(r) }
