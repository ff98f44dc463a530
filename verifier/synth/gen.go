package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

const (
	ms         = int64(time.Millisecond)
	sec        = int64(time.Second)
	scrapeStep = 5 * sec // the harness's default scrape interval
	maxScrapes = 2000    // a very long (slow-rate) run scrapes less often rather than write millions of samples
	loadStart  = 1 * sec
	prefix     = "sg"
	// fakeStartUnixNs is the run's wall-clock start: fixed, so the same seed gives the same bytes.
	fakeStartUnixNs = int64(1_795_000_000_000_000_000)
)

// Event-producing, structural and silent ops (the spec's classes).
var (
	eventOps      = []string{ledger.OpWrite, ledger.OpWrite, ledger.OpWrite, ledger.OpWrite, ledger.OpWrite, ledger.OpWrite, ledger.OpCreate, ledger.OpCreate, ledger.OpUploadComplete, ledger.OpSymlink}
	structuralOps = []string{ledger.OpRename, ledger.OpDelete, ledger.OpMkdir, ledger.OpCopy}
)

// Shares of extra (non-W) mutations per event mutation: structural, chmod, err/timeout.
const (
	pStructural = 0.02
	pChmod      = 0.01
	pAmbiguous  = 0.003
)

// Counter reasons used for counter-explained losses, in turn.
var dropReasons = []string{"tenant_cap", "global_cap", "expired"}

const dropMetric = "drive9_sse_event_retry_dropped_total"

type tenantState struct {
	idx      int
	id       string
	shared   bool
	cold     bool
	active   int // index among active tenants, -1 for cold
	dom      *seqDomain
	cons     []*consumer
	rows     []row
	lastPath string // latest delivered event path (what a leak shows another tenant)
	tail     int    // closing events after the main phase
	// proxy counters (cumulative)
	conns, up, down int64
}

// seqDomain is one AUTO_INCREMENT: a dedicated tenant's own, or the shared pool's (shared tenants see
// holes in their seqs, as drive9's shared schema does).
type seqDomain struct {
	seq, lastCommit int64
}

// row is one audited fs_events row, kept compact: the ledger's persisted records are written at the
// end (24 bytes per event instead of a whole record).
type row struct {
	seq, created int64
	mut          uint32
	op           uint8
}

// evInfo is one persisted mutation as its consumers see it.
type evInfo struct {
	seq       int64
	commit    int64
	sendT     int64
	done      int64
	path, op  string
	tenant    *tenantState
	recovered bool
	tailK     int // -1 in the main phase; k-th closing event otherwise
	reset     bool
}

type victimKind uint8

const (
	vNone victimKind = iota
	vCounter
	vSilent
	vCrash
)

type victim struct {
	kind   victimKind
	tenant *tenantState
	pod    int
	reason string
}

type gen struct {
	cfg     Config
	rng     *rand.Rand
	w       *ledger.Writer
	q       queue
	runID   string
	tenants []*tenantState
	active  []*tenantState
	pods    []string
	podDown []bool
	shared  seqDomain
	truth   Truth

	nmut        int // mutations so far (mid numbers)
	nghost      int
	flushed     int64 // everything before this time has been written
	maxKey      int64
	inTail      bool
	stopScrapes bool
	scrapeEvery int64
	nextPG      int64 // records at the next progress line

	mainN     int // event mutations of the main phase (Events minus closing events)
	seriesIdx map[[3]string]int
	victims   map[int]victim
	recovered map[int]int // W index -> recovered mutations inserted before it

	series []series
	drops  []drop
	sched  []scheduled

	crashPod int // -1 without a crash
	crashAtW int
	crashed  bool
}

// series is one drop counter {tenant_id, reason} on one pod.
type series struct {
	pod    int
	tenant string
	reason string
	value  float64
}

type drop struct {
	at     int64
	series int
}

type scheduled struct {
	at int64
	do func(at int64)
}

// Generate writes a synthetic ledger with cfg's anomalies to w (it does not close w) and returns the
// ground truth. The same Config gives the same bytes.
func Generate(cfg Config, w *ledger.Writer) (Truth, error) {
	if err := cfg.Validate(); err != nil {
		return Truth{}, err
	}
	cfg = cfg.withDefaults()
	g := &gen{
		cfg:      cfg,
		rng:      rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eb9a7e)),
		w:        w,
		runID:    "synth-" + strconv.FormatInt(cfg.Seed, 10),
		crashPod: -1,
	}
	g.truth.Budget = cfg.Budget
	g.setup()
	if err := g.plan(); err != nil {
		return Truth{}, err
	}
	if err := g.writeRun(); err != nil {
		return Truth{}, err
	}
	g.startup()
	if err := g.mainPhase(); err != nil {
		return Truth{}, err
	}
	if err := g.tailPhase(); err != nil {
		return Truth{}, err
	}
	if n := g.unplaced(); n > 0 {
		return Truth{}, fmt.Errorf("synth: %d consumer anomalies found no event to land on; raise --events", n)
	}
	if err := g.finish(); err != nil {
		return Truth{}, err
	}
	g.truth.Acked = cfg.Events
	g.truth.Records = g.w.Records()
	g.truth.finish()
	return g.truth, nil
}

func (g *gen) setup() {
	for i := range g.cfg.Pods {
		g.pods = append(g.pods, "pod-"+strconv.Itoa(i))
	}
	g.podDown = make([]bool, g.cfg.Pods)
	// Cold tenants are the last ones; every third tenant lives in the shared pool.
	for i := range g.cfg.Tenants {
		t := &tenantState{idx: i, id: "t" + strconv.Itoa(i), shared: i%3 == 2, cold: i >= g.cfg.Tenants-g.cfg.Cold, active: -1}
		if t.shared {
			t.dom = &g.shared
		} else {
			t.dom = &seqDomain{}
		}
		if !t.cold {
			t.active = len(g.active)
			g.active = append(g.active, t)
		}
		t.conns, t.up, t.down = 1, 800, 1200 // provisioning traffic, before the first proxy sample
		g.tenants = append(g.tenants, t)
	}
	n := 0
	for _, t := range g.tenants {
		for j := range g.cfg.ConsumersPerTenant {
			c := &consumer{g: g, t: t, id: t.id + ".c" + strconv.Itoa(j), failAt: math.MaxInt64, reopenAt: math.MaxInt64}
			c.pods[0] = n % g.cfg.Pods
			c.conns[0] = c.id + "#1"
			t.cons = append(t.cons, c)
			n++
		}
	}
}

func (g *gen) writeRun() error {
	rec := ledger.Record{K: ledger.KindRun, V: ledger.Version, RunID: g.runID, Scenario: "synthetic",
		Seed: g.cfg.Seed, StartUnixNs: fakeStartUnixNs, Budget: &g.cfg.Budget, Pods: g.pods, Target: "eventlogd", Resync: g.cfg.Resync}
	for _, t := range g.tenants {
		mode := "dedicated"
		if t.shared {
			mode = "shared"
		}
		rec.Tenants = append(rec.Tenants, ledger.Tenant{ID: t.id, Mode: mode, Cold: t.cold})
	}
	if g.cfg.Idle == 0 {
		return g.w.Write(&rec)
	}
	// A run with idle tenants names every tenant in tenant records, as a large run does.
	tenants := rec.Tenants
	rec.Tenants = nil
	if err := g.w.Write(&rec); err != nil {
		return err
	}
	for i := range g.cfg.Idle {
		tenants = append(tenants, ledger.Tenant{ID: "t" + strconv.Itoa(g.cfg.Tenants+i), Mode: "dedicated"})
	}
	for _, t := range tenants {
		tr := ledger.Record{K: ledger.KindTenant, ID: t.ID, Mode: t.Mode, Cold: t.Cold}
		if err := g.w.Write(&tr); err != nil {
			return err
		}
	}
	return nil
}

// startup: pods start and become ready, consumers connect and get initial_sync; the first scrape.
func (g *gen) startup() {
	for i, p := range g.pods {
		r := g.q.rec()
		*r = ledger.Record{K: ledger.KindPod, Pod: p, Phase: "start", T: int64(i) * 10 * ms, PID: 1000 + i}
		g.push(r.T, r)
		r = g.q.rec()
		*r = ledger.Record{K: ledger.KindPod, Pod: p, Phase: "ready", T: 400*ms + int64(i)*10*ms}
		g.push(r.T, r)
	}
	at := 600 * ms
	for _, t := range g.tenants {
		for _, c := range t.cons {
			at += 100_000 // 0.1 ms apart
			c.open(at)
		}
	}
	g.schedule(at+ms, g.scrape)
}

// push queues a record for writing at its observation time.
func (g *gen) push(key int64, r *ledger.Record) {
	if key < g.flushed {
		panic(fmt.Sprintf("synth: record %q at %d queued after %d was written", r.K, key, g.flushed))
	}
	g.maxKey = max(g.maxKey, key)
	g.q.push(key, r)
}

func (g *gen) schedule(at int64, do func(int64)) {
	g.sched = append(g.sched, scheduled{at: at, do: do})
	for i := len(g.sched) - 1; i > 0 && g.sched[i].at < g.sched[i-1].at; i-- {
		g.sched[i], g.sched[i-1] = g.sched[i-1], g.sched[i]
	}
}

// advance runs what is scheduled up to now and writes every record observed before now: nothing
// generated from now on can be earlier.
func (g *gen) advance(now int64) error {
	for len(g.sched) > 0 && g.sched[0].at <= now {
		s := g.sched[0]
		g.sched = g.sched[1:]
		s.do(s.at)
	}
	return g.flush(now)
}

func (g *gen) flush(bound int64) error {
	for {
		r := g.q.popBefore(bound)
		if r == nil {
			break
		}
		if err := g.w.Write(r); err != nil {
			return err
		}
		g.q.release(r)
	}
	g.flushed = max(g.flushed, bound)
	if g.cfg.Progress != nil {
		if n := g.w.Records(); n >= g.nextPG {
			if g.nextPG > 0 {
				fmt.Fprintf(g.cfg.Progress, "gen-ledger: %d records\n", n)
			}
			g.nextPG = n - n%1_000_000 + 1_000_000
		}
	}
	return nil
}

// scrape writes every live pod's metrics and every DB proxy's counters, then schedules the next.
func (g *gen) scrape(at int64) {
	for i := 0; i < len(g.drops); {
		if d := g.drops[i]; d.at <= at {
			g.series[d.series].value++
			g.drops = append(g.drops[:i], g.drops[i+1:]...)
			continue
		}
		i++
	}
	for p, name := range g.pods {
		if g.podDown[p] {
			continue
		}
		r := g.q.rec()
		*r = ledger.Record{K: ledger.KindMetric, Pod: name, T: at, Name: "drive9_sse_event_retry_buffer_depth",
			Labels: map[string]string{}, Value: 0}
		g.push(at, r)
		for _, s := range g.series {
			if s.pod != p {
				continue
			}
			r := g.q.rec()
			*r = ledger.Record{K: ledger.KindMetric, Pod: name, T: at, Name: dropMetric,
				Labels: map[string]string{"tenant_id": s.tenant, "reason": s.reason}, Value: s.value}
			g.push(at, r)
		}
	}
	for _, t := range g.tenants {
		r := g.q.rec()
		*r = ledger.Record{K: ledger.KindProxy, Name: "tenant_" + t.id, Tenant: t.id, T: at, Conns: t.conns, BytesUp: t.up, BytesDown: t.down}
		g.push(at, r)
	}
	r := g.q.rec()
	*r = ledger.Record{K: ledger.KindProxy, Name: "meta", T: at, Conns: 4 + int64(g.nmut/1000), BytesUp: 5000 + int64(g.nmut)*180,
		BytesDown: 9000 + int64(g.nmut)*90}
	g.push(at, r)
	if !g.stopScrapes {
		g.schedule(at+g.scrapeEvery, g.scrape)
	}
}

func (g *gen) mid(n int) string { return "m" + strconv.Itoa(n) }

func (g *gen) path(t *tenantState, mid string) string {
	return "/" + prefix + "/" + g.runID + "/" + t.id + "/" + mid
}

// route picks the pod that answers a mutation: any pod that is up.
func (g *gen) route() int {
	for {
		p := g.rng.IntN(len(g.pods))
		if !g.podDown[p] {
			return p
		}
	}
}

func (g *gen) jitter(base, spread int64) int64 { return base + g.rng.Int64N(spread) }

// sendDelay is the client's own queueing: usually sub-millisecond, sometimes tens of ms.
func (g *gen) sendDelay() int64 {
	if g.rng.Float64() < 0.01 {
		return g.jitter(5*ms, 45*ms)
	}
	return g.rng.Int64N(200_000)
}
