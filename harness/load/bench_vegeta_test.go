package load

import (
	"context"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/helperproc"
	"github.com/seqgate/seqgate/ledger"
)

// TestBenchServer is the trivial HTTP server of BenchmarkLoadVsVegeta, run as a separate process (the
// test binary re-executed with LOADBENCH_SERVER=1) so that its CPU is not charged to either load
// generator. It prints its address and serves until its stdin closes.
func TestBenchServer(t *testing.T) {
	if os.Getenv("LOADBENCH_SERVER") != "1" {
		t.Skip("helper process of BenchmarkLoadVsVegeta")
	}
	helperproc.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"status":"ok"}`))
	}))
}

// genResult is one generator at one rate: the p99 of (send time - intended time), and per request
// the CPU of this process, its heap allocations and its threads' voluntary context switches (a
// thread going to sleep: a wake-up to come). The last two depend far less on the machine's load
// than CPU time does.
type genResult struct {
	rate, sent   int
	slipP99      time.Duration
	cpuPerReqUs  float64
	allocsPerReq float64
	cswPerReq    float64
}

// usage is what this process has used so far.
type usage struct {
	cpu     time.Duration
	mallocs uint64
	csw     int64
}

func usageNow() usage {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return usage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), mallocs: ms.Mallocs, csw: ru.Nvcsw}
}

func p99(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)*99/100]
}

// result summarises one generator at one rate from its slips and what it used since u0.
func result(rate int, slips []time.Duration, u0 usage) genResult {
	u := usageNow()
	n := float64(max(len(slips), 1))
	return genResult{rate: rate, sent: len(slips), slipP99: p99(slips), cpuPerReqUs: float64((u.cpu - u0.cpu).Microseconds()) / n,
		allocsPerReq: float64(u.mallocs-u0.mallocs) / n, cswPerReq: float64(u.csw-u0.csw) / n}
}

// runSeqgate drives the load driver at rate for dur, recording through the real ledger encoder
// (JSON Lines to io.Discard: a gzip ledger's compression is the ledger's cost, not the driver's);
// the slips are read as the records are written.
func runSeqgate(url string, rate int, dur time.Duration) genResult {
	w := ledger.NewWriter(io.Discard)
	var slips []time.Duration // appended under the writer's lock
	w.Observe(func(r *ledger.Record) {
		if r.K == ledger.KindMut {
			slips = append(slips, time.Duration(r.T-r.IntendedT))
		}
	})
	start := time.Now()
	d := NewDriver(Config{RunID: "bench", Seed: 1, Start: start, Sink: w,
		Endpoints: func() []Endpoint { return []Endpoint{{Name: "srv", URL: url}} }})
	blk := Block{Index: 1, Tenants: []Tenant{{ID: "t1", Key: "k", Index: 1}},
		Load: scenario.Load{Executor: "constant-arrival-rate", Rate: float64(rate), Duration: scenario.Duration(dur),
			MaxInFlight: 4096, Timeout: scenario.Duration(5 * time.Second), Mix: map[string]int{"write": 1}}}
	u0 := usageNow()
	d.Run(context.Background(), start, []Block{blk})
	_ = w.Close()
	return result(rate, slips, u0)
}

func runVegeta(url string, rate int, dur time.Duration) genResult {
	tgt := vegeta.NewStaticTargeter(vegeta.Target{Method: "PUT", URL: url + "/v1/fs/bench/x", Body: []byte("seqgate bench\n")})
	atk := vegeta.NewAttacker(vegeta.Workers(64), vegeta.MaxWorkers(4096), vegeta.KeepAlive(true))
	pacer := vegeta.ConstantPacer{Freq: rate, Per: time.Second}
	// vegeta's schedule: hit n (its Seq) is due n+1 intervals after Attack reads the clock as it
	// begins (began here is read just before the call). Measured from its first send instead, that
	// send's own lateness would be taken off every slip.
	interval := time.Duration(pacer.Per.Nanoseconds() / int64(pacer.Freq))
	var slips []time.Duration
	u0 := usageNow()
	began := time.Now()
	for res := range atk.Attack(tgt, pacer, dur, "bench") {
		slips = append(slips, res.Timestamp.Sub(began.Add(time.Duration(res.Seq+1)*interval)))
	}
	return result(rate, slips, u0)
}

// BenchmarkLoadVsVegeta measures, side by side in one run against the same trivial server (its own
// process), the highest constant rate each generator holds with a p99 schedule slip under 1 ms, and
// its CPU per request. It reports seqgate/vegeta ratios of both (goal: rate ratio >= 1, CPU ratio <= 1
// at the highest rate both held) and logs slip and CPU per request of both at every rate. Rates double
// from 500/s; each step lasts 2 s, after a warm-up of both, with the order of the two alternating
// from step to step. On a busy machine neither may hold 1 ms: the per-rate lines still compare them
// side by side.
func BenchmarkLoadVsVegeta(b *testing.B) {
	url := helperproc.Start(b, "TestBenchServer", "LOADBENCH_SERVER=1")
	const dur = 2 * time.Second
	best := map[string]genResult{}
	byRate := map[int][2]genResult{}
	// Both warm up first (the server's and each generator's first connections, stacks and heap),
	// discarded: the first rate measured used to charge that to whichever ran first.
	runSeqgate(url, 500, dur/4)
	runVegeta(url, 500, dur/4)
	for range b.N {
		for step, rate := 0, 500; rate <= 32000; step, rate = step+1, rate*2 {
			// Which generator runs first alternates with the step, so neither always meets the
			// server (and the machine) just after the other's burst.
			var sg, vg genResult
			if step%2 == 0 {
				sg, vg = runSeqgate(url, rate, dur), runVegeta(url, rate, dur)
			} else {
				vg, sg = runVegeta(url, rate, dur), runSeqgate(url, rate, dur)
			}
			b.Logf("rate %6d/s: seqgate sent %6d slip p99 %8s cpu %6.1f us/req %5.1f allocs/req %4.2f csw/req | "+
				"vegeta sent %6d slip p99 %8s cpu %6.1f us/req %5.1f allocs/req %4.2f csw/req | seqgate/vegeta cpu %.2f csw %.2f",
				rate, sg.sent, sg.slipP99, sg.cpuPerReqUs, sg.allocsPerReq, sg.cswPerReq, vg.sent, vg.slipP99, vg.cpuPerReqUs, vg.allocsPerReq, vg.cswPerReq,
				sg.cpuPerReqUs/max(vg.cpuPerReqUs, 1e-9), sg.cswPerReq/max(vg.cswPerReq, 1e-9))
			byRate[rate] = [2]genResult{sg, vg}
			for name, g := range map[string]genResult{"seqgate": sg, "vegeta": vg} {
				if g.slipP99 < time.Millisecond && g.sent >= rate*int(dur/time.Second)*95/100 && g.rate > best[name].rate {
					best[name] = g
				}
			}
			if sg.sent < rate && vg.sent < rate { // both far below the schedule: higher rates say nothing more
				break
			}
		}
	}
	sg, vg := best["seqgate"], best["vegeta"]
	b.ReportMetric(float64(sg.rate), "seqgate_max_rate/s")
	b.ReportMetric(float64(vg.rate), "vegeta_max_rate/s")
	if vg.rate > 0 {
		b.ReportMetric(float64(sg.rate)/float64(vg.rate), "rate_ratio")
	}
	// CPU per request compared at the same rate: the highest one both generators held.
	if common, ok := byRate[min(sg.rate, vg.rate)]; ok && common[1].cpuPerReqUs > 0 {
		b.ReportMetric(common[0].cpuPerReqUs/common[1].cpuPerReqUs, "cpu_per_req_ratio@common_rate")
	}
}
