package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/seqgate/seqgate/internal/eventstream"
	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// BenchmarkVsRawInsert measures eventlogd beside the server it runs on: the raw rate of
// single-row autocommit INSERTs into fs_events with C connections, then eventlogd's acked events/s
// with C tenant-DB connections and W closed-loop writers, each event delivered to a subscriber of
// its tenant, for one hot tenant (a dedicated pool) and for 16 tenants (a shared pool), under each
// late-commit guard and each --event-commit mode (separate: the write and its event commit apart;
// joined: in one transaction; grouped: a tenant's concurrent writes in one). Raw and eventlogd run
// one after the other in the same process against the same private MariaDB, so the ratio
// eventlogd/raw is measured in one run; the raw rate is taken before and after each layout's
// eventlogd cells and their mean is the ratio's denominator (on a loaded machine it drifts within
// minutes). Every acked event must be delivered, in seq order, and every row of the tenant DB below
// a consumer's last seq must have reached it (no skip); a run where that fails is reported as a
// failure, not as a rate.
//
//	go test -run '^$' -bench VsRawInsert -benchtime 1x -v ./reference-impl/api/
//
// VSRAW_SECONDS (default 5) sets each measurement's length, VSRAW_CONNS (default 16) C,
// VSRAW_WRITERS (default 16 C) W: the requests in flight, which a pod that groups a tenant's
// writes needs many of (with W = C a group holds at most C writes and the closed loop waits on
// each group's round trips); raw is also measured with W connections, for comparison only.
// VSRAW_CLIENT (fasthttp, the default, or net/http) is the writers' HTTP client (see putter).
// VSRAW_PROFILE=DIR writes a CPU profile of each eventlogd cell alone to
// DIR/<layout>-<guard>-<commit>.pprof (go tool pprof -top DIR/...). VSRAW_GUARDS and VSRAW_COMMITS
// (comma-separated) pick the cells: every guard and every mode by default; VSRAW_LAYOUTS the
// layouts (one: one hot tenant, 16: 16 tenants; both by default). VSRAW_DURABLE=1 runs the server
// with innodb_flush_log_at_trx_commit=1 (a log flush per commit, a production server's default)
// instead of the test servers' 2 (no flush per commit, where a commit costs little more than any
// other statement).
func BenchmarkVsRawInsert(b *testing.B) {
	d := time.Duration(envInt(b, "VSRAW_SECONDS", 5)) * time.Second
	conns := envInt(b, "VSRAW_CONNS", 16)
	writers := envInt(b, "VSRAW_WRITERS", 16*conns)
	client := envList(b, "VSRAW_CLIENT", []string{"fasthttp"}, []string{"fasthttp", "net/http"})[0]
	profDir := os.Getenv("VSRAW_PROFILE")
	guards := envList(b, "VSRAW_GUARDS", []string{"lock", "horizon"}, slices.Collect(maps.Keys(store.Guards)))
	commits := envList(b, "VSRAW_COMMITS", api.EventCommitModes, api.EventCommitModes)
	layouts := envList(b, "VSRAW_LAYOUTS", []string{"one", "16"}, []string{"one", "16"})
	if os.Getenv("VSRAW_DURABLE") == "1" {
		setFlush(b, 1)
		defer setFlush(b, 2)
	}
	for i := 0; i < b.N; i++ {
		for _, layout := range []struct {
			name    string
			tenants int
		}{{"one hot tenant", 1}, {"16 tenants", 16}} {
			if !slices.Contains(layouts, strings.Fields(layout.name)[0]) {
				continue
			}
			var rawCPU float64 // server and client CPU per raw insert, summed over both measurements
			raw := func(when string) float64 {
				c0 := takeCPU(b)
				rate, n := rawInsertRate(b, conns, d)
				cpu := takeCPU(b).minus(c0).per(n)
				rawCPU += cpu.db + cpu.self
				b.Logf("raw %s: %s layout, %d connections: %.0f inserts/s; CPU per insert: server %.0f µs, client %.0f µs",
					when, layout.name, conns, rate, cpu.db, cpu.self)
				return rate
			}
			before := raw("before")
			if layout.tenants == 1 {
				c0 := takeCPU(b)
				rate, n := httpFloorRate(b, client, writers, d)
				cpu := takeCPU(b).minus(c0).per(n)
				b.Logf("HTTP floor: %d closed-loop writers (%s client) PUT to a handler that only reads the body and answers as a write does: %.0f requests/s, %.2f of raw before; CPU per request %.0f µs (server and client in this process)",
					writers, client, rate, rate/before, cpu.self)
				b.ReportMetric(rate/before, "http_floor/raw")
				if writers != conns {
					// Not the denominator (that is raw with eventlogd's connection count): shown so that
					// a reader sees whether raw would gain from as many clients as eventlogd has.
					wr, _ := rawInsertRate(b, writers, d)
					b.Logf("raw with %d connections (one per writer; for comparison only): %.0f inserts/s, %.2f of raw before", writers, wr, wr/before)
				}
			}
			type cell struct {
				g      store.Guard
				commit string
				r      vsResult
				cpu    struct{ db, self float64 }
				allocs float64 // heap allocations of the Go process per acked event
				stmts  string
			}
			var cells []cell
			for _, gname := range guards {
				g := store.Guards[gname]
				for _, commit := range commits {
					q0 := statements(b)
					stopProfile := startProfile(b, profDir, fmt.Sprintf("%s-%s-%s", strings.Fields(layout.name)[0], g, commit))
					r := eventlogdRate(b, g, commit, layout.tenants, conns, writers, client, d)
					stopProfile()
					cells = append(cells, cell{g, commit, r, r.cpu.per(r.n), float64(r.allocs) / float64(max(r.n, 1)), statementsPer(statements(b), q0, r.n)})
				}
			}
			after := raw("after")
			rawRate := (before + after) / 2
			acked := map[string]float64{}
			for _, c := range cells {
				r := c.r
				ratio := r.acked / rawRate
				groups := ""
				if r.groups > 0 {
					groups = fmt.Sprintf("; %.1f writes per group", float64(r.n)/r.groups)
				}
				b.Logf("statements per acked event: %s, guard %s, event-commit %s: %s%s", layout.name, c.g, c.commit, c.stmts, groups)
				b.Logf("eventlogd vs raw: %s, guard %s, event-commit %s, %d connections, %d writers (%s client): raw %.0f inserts/s (mean of %.0f before, %.0f after), eventlogd %.0f acked events/s, eventlogd/raw %.2f; delivery p50 %.1f ms, p99 %.1f ms; %d of %d acked delivered, %d skipped (pod: %.0f hot inserts failed, %.0f flushed, %.0f horizon gaps given up); CPU per event: server %.0f µs, eventlogd+load+consumers %.0f µs; eventlogd/raw that CPU alone allows (raw's server and client CPU per insert over the CPU per event of one side): this process's %.2f, the DB server's %.2f",
					layout.name, c.g, c.commit, conns, writers, client, rawRate, before, after, r.acked, ratio, r.p50, r.p99, r.delivered, r.n, r.skipped, r.hotErrors, r.flushed, r.givenUp, c.cpu.db, c.cpu.self,
					rawCPU/2/max(c.cpu.self, 1), rawCPU/2/max(c.cpu.db, 1))
				if len(r.refused) > 0 {
					b.Errorf("%s, guard %s, event-commit %s: writes refused (status: count) %v: the pod must admit every writer", layout.name, c.g, c.commit, r.refused)
				}
				if r.delivered != r.n || r.skipped != 0 {
					b.Errorf("%s, guard %s, event-commit %s: %d of %d acked events delivered, %d skipped", layout.name, c.g, c.commit, r.delivered, r.n, r.skipped)
				}
				// Which side bounds the ratio: the one whose CPU per event leaves the lower ratio.
				goAllows, dbAllows := rawCPU/2/max(c.cpu.self, 1), rawCPU/2/max(c.cpu.db, 1)
				bound := "the Go process (eventlogd, its writers and subscribers)"
				if dbAllows < goAllows {
					bound = "the DB server"
				}
				if min(goAllows, dbAllows) > 1.5*ratio {
					// Neither side's CPU comes near: the time goes to waiting (commits, the box's other work).
					bound = fmt.Sprintf("neither side's CPU (it alone allows %.2f): waits, such as commits or a loaded box", min(goAllows, dbAllows))
				}
				b.Logf("eventlogd/raw %.2f (%s, guard %s, event-commit %s) beside its CPU per event: Go process %.0f µs (%.0f heap allocations), DB server %.0f µs (raw: %.0f µs per insert, server and client); bound by %s",
					ratio, layout.name, c.g, c.commit, c.cpu.self, c.allocs, c.cpu.db, rawCPU/2, bound)
				key := strings.ReplaceAll(layout.name, " ", "_") + "/" + c.g.String() + "/" + c.commit
				b.ReportMetric(ratio, key+"_eventlogd/raw")
				b.ReportMetric(c.cpu.self, key+"_go_cpu_us/event")
				b.ReportMetric(c.cpu.db, key+"_db_cpu_us/event")
				b.ReportMetric(c.allocs, key+"_go_allocs/event")
				b.ReportMetric(r.p99, key+"_p99_ms")
				acked[c.g.String()+"/"+c.commit] = r.acked
			}
			for _, g := range guards {
				if sep, joined := acked[g+"/separate"], acked[g+"/joined"]; sep > 0 && joined > 0 {
					b.Logf("joined vs separate: %s, guard %s: %.2fx acked events/s", layout.name, g, joined/sep)
				}
			}
		}
	}
}

// startProfile starts a CPU profile to dir/name.pprof (nothing when dir is empty) and returns its stop.
func startProfile(b *testing.B, dir, name string) func() {
	b.Helper()
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err != nil {
		b.Fatalf("VSRAW_PROFILE: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatalf("VSRAW_PROFILE: %v (a -cpuprofile of the whole run cannot be taken with it)", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}
}

// setFlush sets the private server's innodb_flush_log_at_trx_commit.
func setFlush(b *testing.B, v int) {
	b.Helper()
	h, err := store.OpenDB(context.Background(), db.DSN(""))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Exec(fmt.Sprintf(`SET GLOBAL innodb_flush_log_at_trx_commit = %d`, v)); err != nil {
		b.Fatal(err)
	}
	b.Logf("innodb_flush_log_at_trx_commit = %d", v)
}

// envList reads a comma-separated list of allowed values (def when unset).
func envList(b *testing.B, name string, def, allowed []string) []string {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	out := strings.Split(v, ",")
	for _, x := range out {
		if !slices.Contains(allowed, x) {
			b.Fatalf("%s=%q: %q is not one of %s", name, v, x, strings.Join(allowed, ", "))
		}
	}
	return out
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

var benchDB atomic.Int64

// statements reads the server's statement counters (SHOW GLOBAL STATUS: Com_*), to say what an acked
// event costs the DB.
func statements(b *testing.B) map[string]float64 {
	b.Helper()
	h, err := store.OpenDB(context.Background(), db.DSN(""))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	rows, err := h.Query(`SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Com_insert', 'Com_update', 'Com_delete', 'Com_begin', 'Com_commit', 'Com_rollback', 'Questions')`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var k string
		var v float64
		if err := rows.Scan(&k, &v); err != nil {
			b.Fatal(err)
		}
		out[strings.TrimPrefix(k, "Com_")] = v
	}
	return out
}

func statementsPer(after, before map[string]float64, n int) string {
	var parts []string
	for _, k := range []string{"Questions", "select", "insert", "update", "begin", "commit", "rollback"} {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, (after[k]-before[k])/float64(max(n, 1))))
	}
	return strings.Join(parts, ", ")
}

// cpuSample is the CPU time (user + system) of the DB server and of this process so far.
type cpuSample struct{ db, self time.Duration }

func takeCPU(b *testing.B) cpuSample {
	b.Helper()
	var s cpuSample
	if raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", db.Pid())); err == nil {
		// fields after the command's closing parenthesis: state is field 3, utime 14, stime 15
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
		var ut, st int64
		if len(f) > 12 {
			fmt.Sscan(f[11], &ut)
			fmt.Sscan(f[12], &st)
		}
		s.db = time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return s
}

// heapAllocs is the count of heap objects this process allocated so far (a count, so less
// sensitive to a loaded machine than CPU time).
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func (a cpuSample) minus(b cpuSample) cpuSample { return cpuSample{a.db - b.db, a.self - b.self} }

// per returns the CPU per unit in microseconds (as durations' float counts).
func (a cpuSample) per(n int) struct{ db, self float64 } {
	if n == 0 {
		n = 1
	}
	return struct{ db, self float64 }{float64(a.db.Microseconds()) / float64(n), float64(a.self.Microseconds()) / float64(n)}
}

// rawInsertRate is the server's own single-row insert rate: conns goroutines, each with its own
// connection, run eventlogd's INSERT (autocommit) on a fresh tenant schema for d. It returns the
// rate and the number of inserts.
func rawInsertRate(b *testing.B, conns int, d time.Duration) (float64, int) {
	b.Helper()
	ctx := context.Background()
	h, err := store.OpenDB(ctx, db.DSN(fmt.Sprintf("vsraw%d", benchDB.Add(1))))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if err := store.MigrateTenant(ctx, h); err != nil {
		b.Fatal(err)
	}
	h.SetMaxOpenConns(conns)
	h.SetMaxIdleConns(conns)
	return closedLoop(b, conns, d, func(w, _ int) error {
		_, err := h.ExecContext(ctx, `INSERT INTO fs_events (tenant_id, path, op, actor, created_at) VALUES (?, ?, ?, ?, ?)`,
			"raw", fmt.Sprintf("/w%d", w), "write", "", time.Now().UTC())
		return err
	})
}

// closedLoop runs conns workers that each call do (with its worker number and its call count) one
// call after the other for d, and returns the calls per second and the count. A failed call ends
// its worker and the benchmark.
func closedLoop(b *testing.B, conns int, d time.Duration, do func(w, i int) error) (float64, int) {
	var n atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				if err := do(w, i); err != nil {
					b.Error(err)
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds(), int(n.Load())
}

// httpFloorRate is the rate of the benchmark's writers (closed-loop PUTs through the same
// client) against a handler that does no work but read the body and answer as a write does: the
// ceiling of any HTTP service measured this way on this machine, DB or not.
func httpFloorRate(b *testing.B, client string, writers int, d time.Duration) (float64, int) {
	b.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"revision":1,"status":"ok"}`+"\n")
	}))
	defer ts.Close()
	put := newPutter(client, ts.URL, writers)
	defer put.close()
	uris := make([][]byte, writers)
	return closedLoop(b, writers, d, func(w, i int) error {
		uris[w] = writeURI(uris[w][:0], ts.URL, w, i)
		_, err := put.put(context.Background(), uris[w], "Bearer k")
		return err
	})
}

// writeURI appends the URI of writer w's i-th write to dst: base/v1/fs/w<w>/<i> (its path, from
// /w, is what the writer records; the subscriber parses it back: writeOf).
func writeURI(dst []byte, base string, w, i int) []byte {
	dst = append(append(dst, base...), "/v1/fs/w"...)
	dst = append(strconv.AppendInt(dst, int64(w), 10), '/')
	return strconv.AppendInt(dst, int64(i), 10)
}

// writeOf parses a path written by writeURI back into its writer and write number.
func writeOf(path string) (w, i int, ok bool) {
	rest, isWriter := strings.CutPrefix(path, "/w")
	ws, is, found := strings.Cut(rest, "/")
	if !isWriter || !found {
		return 0, 0, false
	}
	w, err1 := strconv.Atoi(ws)
	i, err2 := strconv.Atoi(is)
	return w, i, err1 == nil && err2 == nil
}

// putter is the writers' HTTP client: PUT a one-byte body to uri with an Authorization header
// (auth: "Bearer KEY") and return the status. The writers pass bytes they reuse and a header value
// made once, so the load client allocates nothing of its own per request. fasthttp (the default) is a load client's client: on these 2 cores the writers share the
// CPU with eventlogd and the DB server, and net/http's client (a reader and a writer goroutine per
// connection, each request handed between three) costs more CPU per request than eventlogd's own
// handler; VSRAW_CLIENT=net/http measures with it instead.
type putter interface {
	put(ctx context.Context, uri []byte, auth string) (int, error)
	close()
}

func newPutter(client, base string, conns int) putter {
	if client == "net/http" {
		return &netPutter{base: base, c: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}}}
	}
	// Dial: a plain dialer for the loopback address, not fasthttp's default TCPDialer, whose DNS
	// cache starts a cleaner goroutine (TCPDialer.tcpAddrsClean) that nothing can stop.
	// MaxIdleConnDuration: the connection cleaner (HostClient.connsCleaner) ends once no
	// connection is left, at its next wake; a short period makes that wake come soon after close.
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &fastPutter{base: base, c: &fasthttp.HostClient{Addr: strings.TrimPrefix(base, "http://"), MaxConns: conns,
		Dial: func(addr string) (net.Conn, error) { return d.Dial("tcp", addr) }, MaxIdleConnDuration: fastIdle}}
}

type netPutter struct {
	base string
	c    *http.Client
}

func (p *netPutter) put(ctx context.Context, uri []byte, auth string) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, "PUT", string(uri), strings.NewReader("x"))
	req.Header.Set("Authorization", auth)
	resp, err := p.c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Body.Close()
}

func (p *netPutter) close() { p.c.CloseIdleConnections() }

type fastPutter struct {
	base string
	c    *fasthttp.HostClient
}

func (p *fastPutter) put(_ context.Context, uri []byte, auth string) (int, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURIBytes(uri)
	req.Header.SetMethod("PUT")
	req.Header.Set("Authorization", auth)
	req.SetBodyString("x")
	if err := p.c.Do(req, resp); err != nil {
		return 0, err
	}
	return resp.StatusCode(), nil
}

// fastIdle is the fasthttp client's idle-connection period: connections idle that long are closed
// (the writers keep theirs busy while a step runs), and its cleaner checks that often.
const fastIdle = time.Second

// close closes the idle connections, then waits until fasthttp's connection cleaner has seen that
// none is left and ended (within one fastIdle), so that no goroutine of the client outlives the
// benchmark (goleak in TestMain).
func (p *fastPutter) close() {
	p.c.CloseIdleConnections()
	deadline := time.Now().Add(30 * fastIdle)
	for goroutineRuns("fasthttp.(*HostClient).connsCleaner") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// goroutineRuns reports whether a goroutine has fn on its stack.
func goroutineRuns(fn string) bool {
	buf := make([]byte, 1<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte(fn))
}

type vsResult struct {
	acked        float64 // acked events per second
	n, delivered int
	skipped      int
	refused      map[int]int // writes answered other than 200, by status
	p50, p99     float64     // ms from the write's answer to the frame's arrival
	// What the pod counted: hot event inserts that failed (buffered), buffered events flushed,
	// gaps its horizon readers gave up after --sse-horizon-wait.
	hotErrors, flushed, givenUp float64
	groups                      float64 // write groups committed (--event-commit grouped)
	// The Go process's and the DB server's CPU and the process's heap allocations from the
	// writers' start to the last delivery.
	cpu    cpuSample
	allocs uint64
}

// eventlogdRate runs one pod (guard g, --event-commit commit, conns tenant-DB connections) with one
// subscriber per tenant and the given writers (closed loop, each on one tenant) for d, then waits
// for every acked event.
func eventlogdRate(b *testing.B, g store.Guard, commit string, tenants, conns, writers int, client string, d time.Duration) vsResult {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d+2*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("vs%d_", benchDB.Add(1))
	pool := store.PoolSpec{ID: "ded", Role: store.RoleDedicated, DSN: db.DSN(prefix + "ded")}
	if tenants > 1 {
		pool = store.PoolSpec{ID: "shared", Role: store.RoleShared, DSN: db.DSN(prefix + "shared")}
	}
	// The pod admits every writer: one tenant's share of the request slots (--max-tenant-inflight)
	// covers all of them, as a deployment with a tenant this hot would set it. Under the defaults
	// (128 of 512) half the writers would be answered 429 with Connection: close, and the benchmark
	// would measure refusals and reconnects instead of writes.
	lim := api.Limits{ProvisionToken: testProvisionToken, MaxInflight: 2 * writers, MaxTenantInflight: writers}
	srv, err := api.New(ctx, api.Config{PodID: "bench", MetaDSN: db.DSN(prefix + "meta"), Pools: []store.PoolSpec{pool},
		Guard: g, EventCommit: commit, DB: store.PoolOptions{MaxOpen: conns}, Limits: lim, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	srv.Start()
	ts := httptest.NewServer(srv.Handler())
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: tenants}} // provisioning and streams
	put := newPutter(client, ts.URL, writers)
	defer func() {
		srv.StopStreams()
		ts.Close()
		_ = srv.Close()
		httpc.CloseIdleConnections()
		put.close()
	}()
	keys := make([]string, tenants)
	ids := make([]string, tenants)
	for i := range keys {
		m := benchDo(b, ctx, httpc, "POST", ts.URL+"/v1/provision", testProvisionToken, `{"pool":"`+pool.ID+`"}`)
		ids[i], keys[i] = m["tenant_id"].(string), m["api_key"].(string)
	}
	type arrival struct {
		seq int64
		at  time.Time
	}
	var mu sync.Mutex
	// The first frame of each path: a writer's paths (writeOf) by writer and write number (no map
	// of strings per event: the benchmark's own bookkeeping shares the process it measures), any
	// other path in others. narrived counts them.
	arrived := make([][]arrival, writers)
	others := map[string]arrival{}
	narrived := 0
	outOfOrder := 0
	resets := map[string]int{} // reset frames by reason (initial_sync expected once per subscriber)
	var ended atomic.Int64     // streams that ended before the benchmark stopped them
	var sw sync.WaitGroup
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	// A stream answers its headers before it reads the tenant's head for reset(initial_sync): the
	// writers start once every stream sent its first heartbeat (its cursor is set, at 0), or rows
	// committed meanwhile fall below the initial_sync seq, where a client resyncs instead of
	// receiving frames, and would count here as missed.
	var ready sync.WaitGroup
	ready.Add(len(keys))
	for i, k := range keys {
		req, _ := http.NewRequestWithContext(sctx, "GET", ts.URL+"/v1/events?since=0", nil)
		req.Header.Set("X-API-Key", k)
		resp, err := httpc.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("subscribe tenant %d: %v %v", i, err, resp)
		}
		sw.Add(1)
		go func() {
			defer sw.Done()
			defer resp.Body.Close()
			r := eventstream.NewReader(resp.Body)
			var last int64
			first := true
			defer func() {
				if first {
					ready.Done()
				}
			}()
			for {
				ev, err := r.Next()
				if err != nil {
					if sctx.Err() == nil {
						ended.Add(1)
					}
					return
				}
				var f frame
				_ = json.Unmarshal([]byte(ev.Data), &f)
				if ev.Type == "reset" {
					mu.Lock()
					resets[f.Reason]++
					mu.Unlock()
				}
				if ev.Type == "heartbeat" && first {
					first = false
					ready.Done()
				}
				if ev.Type != "file_changed" {
					continue
				}
				now := time.Now()
				mu.Lock()
				if f.Seq <= last {
					outOfOrder++
				}
				last = f.Seq
				if w, i, ok := writeOf(f.Path); ok && w < writers {
					if i >= len(arrived[w]) {
						arrived[w] = slices.Grow(arrived[w], i+1-len(arrived[w]))[:i+1]
					}
					if arrived[w][i].at.IsZero() {
						arrived[w][i] = arrival{f.Seq, now}
						narrived++
					}
				} else if _, ok := others[f.Path]; !ok {
					others[f.Path] = arrival{f.Seq, now}
					narrived++
				}
				mu.Unlock()
			}
		}()
	}
	ready.Wait()
	acks := make([][]time.Time, writers) // by write number: when it was acked (zero: refused)
	refused := make([]map[int]int, writers)
	var ww sync.WaitGroup
	// What the cell costs is counted from here to the last delivery: not the pod's start, the
	// provisioning and the streams' opening before, nor the teardown and the check of every row after.
	c0, a0 := takeCPU(b), heapAllocs()
	start := time.Now()
	deadline := start.Add(d)
	for w := 0; w < writers; w++ {
		acks[w], refused[w] = make([]time.Time, 0, 1024), map[int]int{}
		ww.Add(1)
		go func() {
			defer ww.Done()
			auth := "Bearer " + keys[w%tenants]
			var uri []byte
			for i := 0; time.Now().Before(deadline); i++ {
				uri = writeURI(uri[:0], ts.URL, w, i)
				code, err := put.put(ctx, uri, auth)
				if err != nil {
					b.Error(err)
					return
				}
				if code == 200 {
					acks[w] = append(acks[w], time.Now())
				} else {
					acks[w] = append(acks[w], time.Time{})
					refused[w][code]++
				}
			}
		}()
	}
	ww.Wait()
	elapsed := time.Since(start)

	n := 0
	for _, a := range acks {
		for _, at := range a {
			if !at.IsZero() {
				n++
			}
		}
	}
	// Every acked event within 60 s (the frames come long before on a healthy pod).
	wait.Until(60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return narrived >= n
	})
	cpu, allocs := takeCPU(b).minus(c0), heapAllocs()-a0
	stop()
	srv.StopStreams()
	sw.Wait()
	res := vsResult{acked: float64(n) / elapsed.Seconds(), n: n, skipped: outOfOrder, refused: map[int]int{}, cpu: cpu, allocs: allocs,
		hotErrors: metricSum(b, srv, "eventlogd_event_insert_results_total", map[string]string{"path": "hot", "result": "error"}),
		flushed:   metricSum(b, srv, "drive9_sse_event_retry_flush_total", map[string]string{"result": "ok"}),
		givenUp:   metricSum(b, srv, "eventlogd_sse_horizon_gaps_given_up_total", nil),
		groups:    metricSum(b, srv, "eventlogd_write_group_size", nil)}
	for _, r := range refused {
		for code, c := range r {
			res.refused[code] += c
		}
	}
	var lat []float64
	for w, a := range acks {
		for i, at := range a {
			if at.IsZero() || i >= len(arrived[w]) {
				continue
			}
			if f := arrived[w][i]; !f.at.IsZero() {
				res.delivered++
				lat = append(lat, max(0, float64(f.at.Sub(at).Microseconds())/1000))
			}
		}
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		res.p50, res.p99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	}
	// No skip: every row a tenant DB holds was delivered to its tenant's subscriber.
	h, err := store.OpenDB(ctx, pool.DSN)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	delivered := map[int64]bool{}
	for _, a := range others {
		delivered[a.seq] = true
	}
	for _, as := range arrived {
		for _, a := range as {
			if !a.at.IsZero() {
				delivered[a.seq] = true
			}
		}
	}
	rows, err := h.QueryContext(ctx, `SELECT seq, tenant_id, path FROM fs_events ORDER BY seq`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var missed []string
	for rows.Next() {
		var s int64
		var tenant, path string
		if err := rows.Scan(&s, &tenant, &path); err != nil {
			b.Fatal(err)
		}
		if !delivered[s] {
			res.skipped++
			missed = append(missed, fmt.Sprintf("seq %d (tenant %d, %s)", s, slices.Index(ids, tenant), path))
		}
	}
	if len(missed) > 0 || len(resets) > tenants || resets["initial_sync"] != tenants || ended.Load() > 0 {
		b.Logf("guard %s, event-commit %s, %d tenants: rows never delivered: %v; resets received %v; %d streams ended early",
			g, commit, tenants, missed[:min(len(missed), 10)], resets, ended.Load())
	}
	return res
}

func benchDo(b *testing.B, ctx context.Context, c *http.Client, method, url, key, body string) map[string]any {
	b.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
		b.Fatalf("%s %s: %d %v %v", method, url, resp.StatusCode, m, err)
	}
	return m
}
