package load

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/ledger"
)

// Endpoint is one place mutations can be sent (a pod, or the external target).
type Endpoint struct {
	Name string // the ledger's pod name
	URL  string // base URL, no trailing slash
}

// Tenant is a provisioned tenant the writers act for.
type Tenant struct {
	ID    string // the service's tenant_id (the ledger's tenant)
	Key   string // API key
	Index int    // 1-based slot in the scenario, seeds its streams
	// Phase shifts its arrivals by this fraction of an interval (0 <= Phase < 1), so the tenants of a
	// group do not all fire at the same instant. The run sets it from the tenant's place in its whole
	// group, so a tenant keeps its schedule whichever agent of a sharded run drives it.
	Phase float64
}

// Block is one scenario load block bound to its tenants.
type Block struct {
	Index   int
	Load    scenario.Load
	Tenants []Tenant
}

// Config is what every writer of a run shares.
type Config struct {
	RunID     string
	Prefix    string // first path segment (default "seqgate")
	Seed      int64
	Start     time.Time // the run's clock origin
	Sink      ledger.Sink
	Endpoints func() []Endpoint // where to send; called per mutation so dead pods can be left out
	Client    *http.Client
}

// Stats are live totals over every writer (safe to read while running).
type Stats struct {
	Offered atomic.Int64 // arrivals the schedule produced
	Dropped atomic.Int64 // arrivals not sent: every request slot of their tenant was busy at the intended time
	Sent    atomic.Int64
	OK      atomic.Int64
	Err     atomic.Int64
	Timeout atomic.Int64
}

// Driver runs the load blocks of a run.
type Driver struct {
	cfg   Config
	Stats Stats
	rr    atomic.Uint64

	mu      sync.Mutex
	files   map[string][]string // tenant -> paths that exist (sources for rename, copy, chmod, delete)
	dropped map[string]int64    // tenant -> arrivals not sent in time
}

// NewDriver returns a Driver for cfg.
func NewDriver(cfg Config) *Driver {
	if cfg.Prefix == "" {
		cfg.Prefix = "seqgate"
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second}}
	}
	return &Driver{cfg: cfg, files: map[string][]string{}, dropped: map[string]int64{}}
}

// DroppedByTenant returns, per tenant id, the arrivals that could not be sent in time (every request
// slot of that tenant was busy). Tenants with none are absent. Safe while running.
func (d *Driver) DroppedByTenant() map[string]int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]int64, len(d.dropped))
	for t, n := range d.dropped {
		out[t] = n
	}
	return out
}

// drop counts an arrival of tenant that was not sent (every request slot busy at its intended time
// due) and writes its drop record: a run that did not apply its load has not tested it, and the
// verifier can only say so if the ledger shows it.
func (d *Driver) drop(tenant string, block int, due time.Time) {
	d.Stats.Dropped.Add(1)
	d.mu.Lock()
	d.dropped[tenant]++
	d.mu.Unlock()
	_ = d.cfg.Sink.Write(&ledger.Record{K: ledger.KindDrop, Tenant: tenant, IntendedT: due.Sub(d.cfg.Start).Nanoseconds(),
		Block: strconv.Itoa(block)})
}

// RunPrefix returns the path prefix of every mutation of the run: /<prefix>/<run_id>/.
func (d *Driver) RunPrefix() string { return "/" + d.cfg.Prefix + "/" + d.cfg.RunID + "/" }

// Path returns the unique path of mutation mid of tenant: /<prefix>/<run_id>/<tenant>/<mid>.
func (d *Driver) Path(tenant, mid string) string {
	return "/" + d.cfg.Prefix + "/" + d.cfg.RunID + "/" + tenant + "/" + mid
}

// Run drives every block from loadStart until its schedule ends or ctx is done, then waits for the
// requests in flight. Each tenant of a block has its own MaxInFlight request slots: a tenant whose
// requests hang (a stalled DB) uses up only its own slots, so the other tenants of the block stay on
// schedule.
func (d *Driver) Run(ctx context.Context, loadStart time.Time, blocks []Block) {
	var sched, inflight sync.WaitGroup
	for _, b := range blocks {
		for _, t := range b.Tenants {
			sem := make(chan struct{}, b.Load.MaxInFlight)
			sched.Add(1)
			go func() {
				defer sched.Done()
				d.schedule(ctx, loadStart, b, t, sem, &inflight)
			}()
		}
	}
	sched.Wait()
	inflight.Wait()
}

func (d *Driver) schedule(ctx context.Context, loadStart time.Time, b Block, t Tenant, sem chan struct{}, inflight *sync.WaitGroup) {
	pace := NewPacer(b.Load, t.Phase)
	mix := NewMix(b.Load.Mix, uint64(d.cfg.Seed), uint64(t.Index)<<16|uint64(b.Index))
	begin := loadStart.Add(b.Load.Start.D())
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for i := 0; ; i++ {
		off, ok := pace(i)
		if !ok {
			return
		}
		due := begin.Add(off)
		timer.Reset(time.Until(due))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		op := mix.Next()
		pick := mix.Pick(1 << 30)
		d.Stats.Offered.Add(1)
		select {
		case sem <- struct{}{}:
		default:
			d.drop(t.ID, b.Index, due)
			continue
		}
		mid := fmt.Sprintf("t%d.b%d.%d", t.Index, b.Index, i)
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			defer func() { <-sem }()
			if op == "batch" {
				d.sendBatch(t, b.Load.Timeout.D(), mid, b.Load.BatchSize, due)
				return
			}
			d.send(t, b.Load.Timeout.D(), mid, op, pick, due)
		}()
	}
}

// take returns an existing file of tenant (removing it when consume is set), or "".
func (d *Driver) take(tenant string, pick int, consume bool) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	fs := d.files[tenant]
	if len(fs) == 0 {
		return ""
	}
	i := pick % len(fs)
	p := fs[i]
	if consume {
		fs[i] = fs[len(fs)-1]
		d.files[tenant] = fs[:len(fs)-1]
	}
	return p
}

func (d *Driver) keep(tenant, path string) {
	d.mu.Lock()
	d.files[tenant] = append(d.files[tenant], path)
	d.mu.Unlock()
}

func (d *Driver) now() int64 { return time.Since(d.cfg.Start).Nanoseconds() }

// UnicodeSuffix ends the path of a write_unicode mutation (valid UTF-8, not ASCII).
const UnicodeSuffix = "-日本-é"

// InvalidUTF8Suffix ends the URL path of a write_invalid_utf8 mutation, percent-encoded as sent:
// the decoded path ends in byte 0xFF, never valid UTF-8. The ledger records it in this escaped
// form (a ledger string is UTF-8); a correct service answers 400 and the mutation is not acked.
const InvalidUTF8Suffix = "-%FF"

// send performs one mutation and writes its mut record. Ops that need an existing file (rename,
// copy, chmod, delete) fall back to a write while the tenant has none.
func (d *Driver) send(t Tenant, timeout time.Duration, mid, op string, pick int, due time.Time) {
	path := d.Path(t.ID, mid)
	var src string
	switch op {
	case "rename", "delete":
		src = d.take(t.ID, pick, true)
	case "copy", "chmod":
		src = d.take(t.ID, pick, false)
	}
	if src == "" && op != "write" && op != "mkdir" && op != "write_unicode" && op != "write_invalid_utf8" {
		op = "write"
	}
	method, query, header, body := http.MethodPut, "", "", io.Reader(nil)
	rawSuffix := "" // sent after the escaped path, not part of the ledger's path
	switch op {
	case "write":
		body = strings.NewReader("seqgate " + mid + "\n")
	case "write_unicode": // a valid non-ASCII path: stored and delivered byte for byte
		op, path = "write", path+UnicodeSuffix
		body = strings.NewReader("seqgate " + mid + "\n")
	case "write_invalid_utf8": // an invalid UTF-8 path: the service must refuse it (4xx), never ack it
		op, rawSuffix = "write", InvalidUTF8Suffix
		path += InvalidUTF8Suffix // the ledger's path is the escaped form (a ledger string is UTF-8)
		body = strings.NewReader("seqgate " + mid + "\n")
	case "mkdir":
		method, query = http.MethodPost, "?mkdir"
	case "rename":
		method, query, header = http.MethodPost, "?rename", "X-Dat9-Rename-Source"
	case "copy":
		method, query, header = http.MethodPost, "?copy", "X-Dat9-Copy-Source"
	case "chmod": // silent op on an existing file: its path is that file's
		method, query, path, src = http.MethodPost, "?chmod&mode=0600", src, ""
	case "delete":
		method, path, src = http.MethodDelete, src, ""
	}
	rec := &ledger.Record{K: ledger.KindMut, MID: mid, Tenant: t.ID, Op: op, Path: path, Src: src,
		IntendedT: due.Sub(d.cfg.Start).Nanoseconds()}
	eps := d.cfg.Endpoints()
	if len(eps) == 0 {
		rec.T = d.now()
		rec.DoneT, rec.Res, rec.Err = rec.T, ledger.ResErr, "no endpoint up"
		d.Stats.Sent.Add(1)
		d.Stats.Err.Add(1)
		_ = d.cfg.Sink.Write(rec)
		return
	}
	ep := eps[d.rr.Add(1)%uint64(len(eps))]
	rec.Pod = ep.Name
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, ep.URL+"/v1/fs"+escapePath(strings.TrimSuffix(path, rawSuffix))+rawSuffix+query, body)
	if err != nil {
		panic(err) // our own URL: a bug, not an input
	}
	req.Header.Set("Authorization", "Bearer "+t.Key)
	if header != "" {
		req.Header.Set(header, rec.Src)
	}
	rec.T = d.now()
	d.Stats.Sent.Add(1)
	d.answer(ctx, rec, req)
	if rec.Res == ledger.ResOK {
		switch op {
		case "write", "copy", "rename":
			d.keep(t.ID, path)
		}
	}
	rec.DoneT = d.now()
	_ = d.cfg.Sink.Write(rec)
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
