package api_test

import (
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/api"
)

// TestStopStreamsPacesCloses: at shutdown the pod closes its streams in paced batches (seed 004:
// a server-forced mass close starts a fleet-wide reconnect storm). 20 streams at 100 closes/s go
// one per 10 ms batch (20 batches); the control at 100,000/s closes them in one batch. Either way
// every stream ends and its client sees the end of the response.
func TestStopStreamsPacesCloses(t *testing.T) {
	cases := []struct {
		name        string
		rate        int
		wantBatches float64
	}{
		{"paced", 100, 20},
		{"control-all-in-one-batch", 100000, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.pod("a", func(cfg *api.Config) { cfg.StreamCloseRate = c.rate })
			_, key := p.provision(t, "")
			var subs []*subscriber
			for i := 0; i < 20; i++ {
				s := p.subscribe(t, key, 0).start()
				if _, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok {
					t.Fatalf("stream %d never became current", i)
				}
				subs = append(subs, s)
			}
			mustWithin(t, 30*time.Second, "StopStreams to return", p.srv.StopStreams)
			for i, s := range subs {
				mustWithin(t, 10*time.Second, "stream to end after StopStreams", func() {
					for range s.frames {
					}
				})
				if s.err == nil {
					t.Fatalf("stream %d: no read error at the end", i)
				}
			}
			if got := counter(t, p, "eventlogd_sse_shutdown_close_batch_size", nil); got != c.wantBatches {
				t.Fatalf("%v close batches, want %v", got, c.wantBatches)
			}
		})
	}
}
