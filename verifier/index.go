package verifier

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/seqgate/seqgate/ledger"
)

// index is the shared, compact state of the streaming pass: the run record, the mutation table
// (interned by tenant and path, because the spec matches events to mutations by (tenant, path)), the
// consumers' delivery state and the final audit. Checkers read it; only the driver writes it, before the
// checkers see the same record. Memory grows with mutations and consumers, not with ledger length.
type index struct {
	run    runInfo
	hasRun bool
	ended  bool
	// loadAvgEnd is the end record's load_avg (nil when it has none).
	loadAvgEnd []float64
	// loadStartMs is the end record's load_t in ms (nil when it has none).
	loadStartMs *float64
	// interrupted: the end record says the run was stopped early (Ctrl-C); nothing after the stop was
	// drained or audited, so losses and stalls are not provable.
	interrupted bool
	drained     bool
	endT        int64 // the end record's t
	lastT       int64 // the latest t of any run-phase record
	// windows: a threshold names a window, so the checks keep what the windows need (set by the
	// driver once the run record's thresholds are parsed).
	windows bool

	tenantIDs   map[string]int32 // int32: a run may have more than 65,536 tenants
	tenantNames []string         // the ledger's tenant ids, by index
	// tenantLabels is how the summary names each tenant: the scenario's name from the run record
	// (tenant_2), else the id; byLabel finds a tenant by that name.
	tenantLabels []string
	byLabel      map[string]int32
	podIDs       map[string]int32 // int32: a run may have more than 65,536 pods
	podNames     []string         // podNames[0] = "" (unknown)
	connIDs      map[string]int32
	connNames    []string

	muts *mutTable // interned (tenant, path) -> mutation

	consIDs map[string]int32
	cons    []*consumerState

	// tenantC, connC and consC remember recent ids' indices in front of tenantIDs, connIDs and
	// consIDs (idcache.go).
	tenantC, connC, consC idCache

	// audit holds each tenant's audit rows, by tenant index; nil for a tenant with none yet (most of
	// a large run's idle tenants): auditOf reads it, auditFor makes it.
	audit []*tenantAudit

	// gone: tenants a tenant_delete fault deleted -> when (its start record's t); a deletion whose
	// fault record carries an error did not happen for sure and is not taken (deletions).
	gone       map[int32]int64
	goneFailed map[string]bool  // fault ids of tenant_delete faults whose records carry an error
	goneBy     map[string]int32 // fault id -> the tenant it deleted

	orphans []orphan // deliveries whose mutation was unknown when they arrived
	oddSeq  []oddDelivery

	cur frame // what the driver learned about the current record

	modes []string // the distinct tenant modes (internMode)

	// covers, when set (a run whose consumers resync, check_resync.go), decides which events a reset
	// covered, in place of the older seq_too_old rule.
	covers func(c *consumerState, row auditRow) bool

	// unrecv holds, by consumer index, what unreceived found the first time it was asked (nil:
	// more than unreceivedKept rows, walk again).
	unrecv map[int32][]classedRow

	firstMutT, lastMutT int64
	hasMutT             bool
	warnings            []string
	dupMutPaths         int
	// nearTries and nearHits count the persisted records looked for beside their tenant's last
	// row's entry, and those found there (nearPays).
	nearTries, nearHits int
}

// runInfo is the part of the run record the checkers need, copied because records are reused.
type runInfo struct {
	RunInfo
	StartUnixNs int64
	Budget      *float64 // nil: the run record has none (DefaultBudget)
	// Listed is, by tenant index, what the run record (or its tenant records) says of each tenant:
	// kept per index, not as the records' list, so a run of a million tenants holds no copy of it.
	Listed            []listedTenant
	CrashesPerPodYear *float64
	PodsInFleet       *int
	Audit             bool // an audit of the events table is part of this run
	Profile           string
	Thresholds        map[string][]string
	Metrics           []string // the families the scenario named
}

// listedTenant is what the run's tenant list says of one tenant: the mode and cold of its last
// entry, and, for the cold-wakeup check, the cold of its first (an id listed twice keeps both
// readings the verifier always had).
type listedTenant struct {
	mode            string
	cold, coldFirst bool
	listed          bool
}

type opClass uint8

const (
	opUnknown opClass = iota
	opEvent
	opStructural
	opSilent
)

// classifyOp sorts ops as the spec does: file_changed producers, reset(structural_change) producers,
// and silent ops.
func classifyOp(op string) opClass {
	switch op {
	case ledger.OpWrite, ledger.OpCreate, ledger.OpSymlink, ledger.OpHardlink, ledger.OpUploadComplete:
		return opEvent
	case ledger.OpRename, ledger.OpDelete, ledger.OpMkdir, ledger.OpCopy:
		return opStructural
	case ledger.OpChmod:
		return opSilent
	}
	return opUnknown
}

const (
	resOther uint8 = iota
	resOK
	resErr
	resTimeout
)

const (
	fHasMut    uint8 = 1 << iota // a mut record exists for this (tenant, path)
	fPersisted                   // the final audit found its row
	fDelivered                   // an ev with its tenant and path reached some consumer
	fEvMulti                     // evSeq was carried to more than one consumer
	// fSwept: an audit pass during the run found its row and the final audit no longer did (persisted
	// absent: the retention sweep deleted it). It persisted, but it is not "still in the audit".
	fSwept
	fEventRow // an audit row with an event-producing op names it (absent or not)
)

// noTime marks an unknown time.
const noTime = math.MinInt64

// mutation is one interned (tenant, path): a mutation attempt, or a path only seen in events/audit.
//
// It holds no Go pointers and keeps its fields compactly, each exact, with a side table for the rare
// value that does not fit (entryfields.go, muttable.go): done_t in 48 bits beside the tenant's index,
// the send time as a 32-bit difference to done_t and the first delivered seq in 32 bits. What a
// check needs of only some mutations is kept outside the entry: intended_t (mutTable.intended: for
// W's mutations that may still be lost, or for all when the windows need them) and the acking pod
// (a byte of the entry's arena record, mutTable.pod).
type mutation struct {
	// dt is done_t in its high 48 bits (doneNone: no mut record yet; doneEsc: in the side table;
	// mutTable.done) and the tenant's index in its low 16 (tenantEsc: in the side table;
	// mutTable.tenantOf).
	dt uint64
	// dSent is done_t minus the send time t (escaped: the side table).
	dSent int32
	// Deliveries of this path: evSeq (mutTable.evSeq) is the seq of the first one (noTime: none yet),
	// evN how many carried evSeq and evCons the consumer of the first (fEvMulti: another consumer's
	// also carried evSeq). A delivery with another seq goes to index.oddSeq. Against the audit's seq
	// at the end, this counts seq_mismatch exactly, per consumer exactly unless fEvMulti.
	evSeq uint32
	name  uint32 // the path's, mid's and pod's record in the table's arena (mutTable.path, mid, pod)
	// evCons is 1 + the first consumer's ordinal among its tenant's consumers (0: none; consEsc: in
	// the side table; mutTable.evCons), evN the count (mutTable.evN; evNEsc: in the side table).
	evCons, evN uint8
	kind        uint8 // opClass in bits 0-1, the res constant in bits 2-3, the status's code in 4-7 (mutTable.status)
	flags       uint8
}

// inW reports whether m belongs to W: an acked event-producing mutation.
func (m *mutation) inW() bool { return m.flags&fHasMut != 0 && m.op() == opEvent && m.res() == resOK }

// op is the mutation's op class; res its result (resOK, resErr, resTimeout or resOther). They share
// one byte so that an entry stays small.
func (m *mutation) op() opClass { return opClass(m.kind & 3) }
func (m *mutation) res() uint8  { return m.kind >> 2 & 3 }

// persisted is the spec's persisted(m): an audit row or any delivered event with m's tenant and path.
func (m *mutation) persisted() bool { return m.flags&(fPersisted|fSwept|fDelivered) != 0 }

// consumerState is what the verifier keeps per consumer: the compact set of delivered mutation ids
// (matching is by (tenant, path), never by seq), the cursor as the client computes it (max seq seen,
// reset by a resume), and its after-run record.
type consumerState struct {
	idx         int32
	id          string
	tenant      int32
	ord         int32 // its ordinal among its tenant's consumers (mutTable.addConsumer)
	deliveredID *roaring.Bitmap
	cursor      int64
	sawFrame    bool

	hasInitialSync bool
	initialSyncSeq int64
	hasTooOld      bool
	lastTooOldT    int64
	firstT         int64 // first record of this consumer (its first conn open, as a rule)

	hasRecord   bool
	firstSince  int64
	finalCursor int64
	durable     bool
}

// firstCursor is where the consumer's expectations start: its first since, or its initial_sync seq.
func (c *consumerState) firstCursor() int64 {
	fc := c.firstSince
	if c.hasInitialSync && c.initialSyncSeq > fc {
		fc = c.initialSyncSeq
	}
	return fc
}

// tenantAudit holds one tenant's persisted rows (the final DB audit).
type tenantAudit struct {
	rows   rowStore
	seqs   *roaring64.Bitmap
	sorted bool
}

type auditRow struct {
	seq        int64
	persistedT int64 // run-relative ns, or noTime
	id         int32
	op         opClass
}

// orphan is a delivery whose (tenant, path) had no mut record yet when it arrived.
type orphan struct {
	t, seq int64
	cons   int32
	id     int32
	conn   int32
}

// oddDelivery is a delivery whose seq differs from the first delivered seq of its path.
type oddDelivery struct {
	t, seq int64
	cons   int32
	id     int32
	conn   int32
}

// frame is what the driver learned about the current ev, reset or conn record.
type frame struct {
	cons          int32
	id            int32 // mutation id of an ev or a mut, else -1
	conn          int32
	before, after int64 // the consumer's cursor before and after this record
	first         bool  // first delivery of this mutation to this consumer
}

func newIndex() *index {
	ix := &index{
		tenantIDs: map[string]int32{},
		byLabel:   map[string]int32{},
		podIDs:    map[string]int32{"": 0},
		podNames:  []string{""},
		connIDs:   map[string]int32{},
		consIDs:   map[string]int32{},
	}
	ix.muts = newMutTable(&ix.tenantNames)
	return ix
}

func (ix *index) warnf(format string, args ...any) {
	if len(ix.warnings) < 50 {
		ix.warnings = append(ix.warnings, fmt.Sprintf(format, args...))
	}
}

func (ix *index) tenant(id string) int32 {
	if i, ok := ix.tenantC.find(id, ix.tenantIDs); ok {
		return i
	}
	i := int32(len(ix.tenantNames))
	ix.tenantIDs[id] = i
	ix.tenantNames = append(ix.tenantNames, id)
	label := id
	if _, clash := ix.byLabel[id]; clash {
		label = "id:" + id // another tenant is named so: keep the two apart in the summary
	}
	ix.tenantLabels = append(ix.tenantLabels, label)
	ix.audit = append(ix.audit, nil)
	ix.run.Listed = append(ix.run.Listed, listedTenant{})
	return i
}

func (ix *index) pod(name string) int32 {
	if i, ok := ix.podIDs[name]; ok {
		return i
	}
	i := int32(len(ix.podNames))
	ix.podIDs[name] = i
	ix.podNames = append(ix.podNames, name)
	return i
}

func (ix *index) conn(name string) int32 {
	if i, ok := ix.connC.find(name, ix.connIDs); ok {
		return i
	}
	i := int32(len(ix.connNames))
	ix.connIDs[name] = i
	ix.connNames = append(ix.connNames, name)
	return i
}

// lookup finds the mutation id of (tenant, path) without creating it; -1 when unknown.
func (ix *index) lookup(tenant, path string) int32 {
	id, _ := ix.find(tenant, path)
	return id
}

// find is lookup that also returns the key's hash.
func (ix *index) find(tenant, path string) (int32, uint64) { return ix.muts.find(tenant, path) }

// sent returns m's send time (t), intended its intended_t (noTime before its mut record; intended
// is kept only where mutTable.intended says), done its done_t.
func (ix *index) sent(m *mutation) int64  { return ix.muts.sent(m) }
func (ix *index) intended(id int32) int64 { return ix.muts.intended(id) }
func (ix *index) done(m *mutation) int64  { return ix.muts.done(m) }

// path returns the path of m; mid its mid ("" for a path no mut record wrote).
func (ix *index) path(m *mutation) string { return ix.muts.path(m) }
func (ix *index) mid(m *mutation) string  { return ix.muts.mid(m) }

// intern returns the mutation id of (tenant, path), creating an entry on first sight.
func (ix *index) intern(tenant, path string) int32 { return ix.internVia(tenant, path, true) }

// internVia is intern past the recent-lookup cache unless cached (mutTable.findVia).
func (ix *index) internVia(tenant, path string, cached bool) int32 {
	id, h := ix.muts.findVia(tenant, path, cached)
	if id >= 0 {
		return id
	}
	ti := ix.tenant(tenant)
	return ix.muts.add(tenant, ti, path, h, blankEntry)
}

// consumer returns the state of consumer id, creating it on first sight. A consumer id seen with two
// tenants is unusable input: its deliveries could not be judged.
func (ix *index) consumer(id, tenant string, t int64) (*consumerState, error) {
	if i, ok := ix.consC.find(id, ix.consIDs); ok {
		c := ix.cons[i]
		if ix.tenantNames[c.tenant] != tenant {
			return nil, fmt.Errorf("consumer %q has tenant %q here but %q before: a consumer id must belong to one tenant", id, tenant, ix.tenantNames[c.tenant])
		}
		return c, nil
	}
	c := &consumerState{idx: int32(len(ix.cons)), id: id, tenant: ix.tenant(tenant), deliveredID: roaring.New(), firstT: t}
	c.ord = ix.muts.addConsumer(c.tenant, c.idx)
	ix.consIDs[id] = c.idx
	ix.cons = append(ix.cons, c)
	return c, nil
}

// observe folds one record into the index. It fails only on input the verifier cannot judge.
func (ix *index) observe(r *ledger.Record) error {
	ix.cur = frame{cons: -1, id: -1, conn: -1}
	switch r.K {
	case ledger.KindMut, ledger.KindEv, ledger.KindReset, ledger.KindConn: // the common run-phase kinds, without a map lookup
		ix.lastT = max(ix.lastT, r.T, r.DoneT)
	case ledger.KindRun:
	default:
		if !ledger.IsPostRun(r.K) {
			ix.lastT = max(ix.lastT, r.T, r.DoneT)
		}
	}
	if !ix.hasRun && r.K != ledger.KindRun {
		return fmt.Errorf("first record has k=%q; a ledger must start with its k=run record", r.K)
	}
	if ix.muts.len() > maxRowID {
		return fmt.Errorf("more than %d distinct (tenant, path)s: more than one verification can hold", maxRowID+1)
	}
	if err := ix.checkCounts(); err != nil {
		return err
	}
	switch r.K {
	case ledger.KindRun:
		if ix.hasRun {
			return nil // several ledgers of one run: the first run record rules
		}
		if err := checkRunNumbers(r); err != nil {
			return err
		}
		ix.hasRun = true
		ix.run = runInfo{
			RunInfo:           RunInfo{RunID: r.RunID, Scenario: r.Scenario, Seed: r.Seed, Target: r.Target, Profile: r.Profile, Provenance: r.Provenance.Clone()},
			StartUnixNs:       r.StartUnixNs,
			Budget:            clonePtr(r.Budget),
			CrashesPerPodYear: r.CrashesPerPodYear,
			Audit:             r.Audit,
			Profile:           r.Profile,
			PodsInFleet:       r.PodsInFleet,
			Thresholds:        maps.Clone(r.Thresholds),
			Metrics:           slices.Clone(r.Metrics),
		}
		n := len(r.Tenants) // sized once: a large run's tenants would otherwise grow every table by doubling
		ix.tenantIDs = make(map[string]int32, n)
		ix.tenantC = idCache{}
		ix.tenantNames = make([]string, 0, n)
		ix.tenantLabels = make([]string, 0, n)
		ix.audit = make([]*tenantAudit, 0, n)
		ix.run.Listed = make([]listedTenant, 0, n)
		for _, t := range r.Tenants {
			i := ix.tenant(t.ID)
			l := &ix.run.Listed[i]
			if !l.listed {
				l.listed, l.coldFirst = true, t.Cold
			}
			l.mode, l.cold = ix.internMode(t.Mode), t.Cold
		}
		ix.nameTenants(r.Tenants)
	case ledger.KindMut:
		ix.observeMut(r)
	case ledger.KindEv:
		return ix.observeEv(r)
	case ledger.KindReset:
		c, err := ix.consumer(r.Consumer, r.Tenant, r.T)
		if err != nil {
			return err
		}
		if !c.sawFrame && r.Reason == "initial_sync" {
			c.hasInitialSync, c.initialSyncSeq = true, r.Seq
		}
		c.sawFrame = true
		if r.Reason == "seq_too_old" {
			c.hasTooOld, c.lastTooOldT = true, r.T
		}
		ix.advance(c, r.Seq, r.Conn)
	case ledger.KindConn:
		c, err := ix.consumer(r.Consumer, r.Tenant, r.T)
		if err != nil {
			return err
		}
		ix.cur = frame{cons: c.idx, id: -1, conn: ix.conn(r.Conn), before: c.cursor, after: c.cursor}
		if r.Phase == "open" {
			// The server streams from since: that is the cursor now, whether it moved forward or back.
			c.cursor = r.Since
			ix.cur.after = r.Since
		}
	case ledger.KindPersisted:
		ti := ix.tenant(r.Tenant)
		id := int32(-1)
		if a := ix.audit[ti]; a != nil && a.rows.n > 0 && ix.nearPays() {
			// an audit lists a tenant's rows about in the order their entries were made: look beside
			// the last row's entry first, whose neighbours are in cache, before the index
			id = ix.muts.near(a.rows.lastID, ti, r.Tenant, r.Path)
			ix.nearTries++
			if id >= 0 {
				ix.nearHits++
			}
		}
		if id < 0 {
			id = ix.internVia(r.Tenant, r.Path, false) // after the run: the cache holds its last events
		}
		op := classifyOp(r.Op)
		if op == opEvent {
			ix.muts.at(id).flags |= fEventRow
		}
		if op != opStructural && op != opSilent {
			// A delete's or chmod's row shares the path of the file it acted on; it does not prove
			// that the file's write persisted.
			if r.Absent {
				ix.muts.at(id).flags |= fSwept
			} else {
				ix.muts.at(id).flags |= fPersisted
			}
		}
		pt := int64(noTime)
		if r.CreatedUnixNs > 0 && ix.run.StartUnixNs > 0 {
			pt = r.CreatedUnixNs - ix.run.StartUnixNs
		}
		a := ix.auditFor(ti)
		a.rows.add(auditRow{seq: r.Seq, persistedT: pt, id: id, op: op})
		if r.Seq >= 0 && !r.Absent { // seqs: the rows still in the audit (the spurious-reset check)
			a.seqs.Add(uint64(r.Seq))
		}
	case ledger.KindFault:
		ix.observeDeletion(r)
	case ledger.KindConsumer:
		c, err := ix.consumer(r.Consumer, r.Tenant, r.FromT)
		if err != nil {
			return err
		}
		c.hasRecord, c.firstSince, c.finalCursor, c.durable = true, r.FirstSince, r.FinalCursor, r.Durable
	case ledger.KindEnd:
		ix.ended, ix.drained, ix.endT = true, r.Drained, r.T
		ix.loadAvgEnd = slices.Clone(r.LoadAvg)
		if r.LoadT > 0 {
			ms := ms(r.LoadT)
			ix.loadStartMs = &ms
		}
		ix.interrupted = r.Reason == EndReasonInterrupted
	}
	return nil
}

// maxNames is how many tenants, pods, connections or consumers one verification indexes: their int32
// indices never wrap, because a ledger that names more is refused before the next name is taken.
const maxNames = math.MaxInt32 - 1

// checkCounts refuses a ledger whose names would overflow an index (no index may wrap and merge two
// names' numbers); far beyond what memory holds today, but a refusal, never a silent wrap.
func (ix *index) checkCounts() error {
	if max(len(ix.tenantNames), len(ix.podNames), len(ix.connNames), len(ix.cons)) < maxNames {
		return nil // the per-record fast path
	}
	for _, c := range []struct {
		what string
		n    int
	}{{"tenants", len(ix.tenantNames)}, {"pods", len(ix.podNames)}, {"connections", len(ix.connNames)}, {"consumers", len(ix.cons)}} {
		if c.n >= maxNames {
			return fmt.Errorf("more than %d distinct %s: more than one verification can index", maxNames, c.what)
		}
	}
	return nil
}

// checkRunNumbers rejects run-record numbers the projection and the verdict cannot use.
func checkRunNumbers(r *ledger.Record) error {
	if b := r.Budget; b != nil && !(*b >= 0 && *b <= 1) {
		return fmt.Errorf("run record: budget %g: want a fraction in [0, 1]", *b)
	}
	if v := r.CrashesPerPodYear; v != nil && !(*v >= 0 && *v <= 1e6) {
		return fmt.Errorf("run record: crashes_per_pod_year %g: want a number in [0, 1e6]", *v)
	}
	if v := r.PodsInFleet; v != nil && (*v < 0 || *v > 1e7) {
		return fmt.Errorf("run record: pods_in_fleet %d: want a number in [0, 1e7]", *v)
	}
	return nil
}

func (ix *index) observeMut(r *ledger.Record) {
	if !ix.hasMutT || r.T < ix.firstMutT {
		ix.firstMutT = r.T
	}
	if !ix.hasMutT || r.T > ix.lastMutT {
		ix.lastMutT = r.T
	}
	ix.hasMutT = true
	// a new path, mostly: past the recent-lookup cache (add caches it for its events), and a new
	// entry gets its mid with its name
	id, h := ix.muts.findVia(r.Tenant, r.Path, false)
	created := id < 0
	if created {
		id = ix.muts.addMid(r.Tenant, ix.tenant(r.Tenant), r.Path, h, r.MID)
	}
	ix.cur.id = id
	m := ix.muts.at(id)
	op := classifyOp(r.Op)
	if m.flags&fHasMut != 0 {
		// chmod and delete act on an existing file, so they share its path: events match the
		// event-producing mutation. Two event-producing mutations on one path break matching.
		if m.op() == opEvent && op == opEvent {
			ix.dupMutPaths++
			ix.warnf("mut %s: path %q of tenant %s already written by mut %s; paths must be unique per event-producing mutation (kept the first)", r.MID, r.Path, r.Tenant, ix.mid(m))
		}
		if m.op() == opEvent || op != opEvent {
			return
		}
	}
	m.flags |= fHasMut
	if !created {
		ix.muts.setMid(m, r.MID)
	}
	ix.muts.setPod(m, ix.pod(r.Pod))
	res := resOther
	switch r.Res {
	case ledger.ResOK:
		res = resOK
	case ledger.ResErr:
		res = resErr
	case ledger.ResTimeout:
		res = resTimeout
	}
	ix.muts.setKind(m, op, res, r.Status)
	ix.muts.setTimes(id, r.T, r.IntendedT, r.DoneT) // after setKind: whether m is in W decides where intended_t goes
}

func (ix *index) observeEv(r *ledger.Record) error {
	c, err := ix.consumer(r.Consumer, r.Tenant, r.T)
	if err != nil {
		return err
	}
	c.sawFrame = true
	if classifyOp(r.Op) == opStructural {
		// The detailed file_changed form of a structural op (design 000 item 5): the structural check
		// judges it. It delivers no event-producing mutation (a delete shares its file's path).
		ix.advance(c, r.Seq, r.Conn)
		return nil
	}
	id := ix.intern(r.Tenant, r.Path)
	m := ix.muts.at(id)
	m.flags |= fDelivered
	first := c.deliveredID.CheckedAdd(uint32(id))
	ix.advance(c, r.Seq, r.Conn)
	ix.cur.id, ix.cur.first = id, first
	switch evSeq := ix.muts.evSeq(m); {
	case evSeq == noTime:
		ix.muts.setEvSeq(m, r.Seq)
		ix.muts.setEvN(m, 1)
		ix.muts.setEvCons(m, c)
	case evSeq == r.Seq:
		ix.muts.setEvN(m, ix.muts.evN(m)+1)
		if !ix.muts.isEvCons(m, c) {
			m.flags |= fEvMulti
		}
	default:
		ix.oddSeq = append(ix.oddSeq, oddDelivery{t: r.T, seq: r.Seq, cons: c.idx, id: id, conn: ix.cur.conn})
	}
	if m.flags&fHasMut == 0 {
		if len(ix.orphans) == cap(ix.orphans) {
			ix.orphans = ix.resolvedOrphansDropped()
		}
		ix.orphans = append(ix.orphans, orphan{t: r.T, seq: r.Seq, cons: c.idx, id: id, conn: ix.cur.conn})
	}
	return nil
}

// resolvedOrphansDropped drops the orphans whose mut record has come since (delivered before their
// ack: unmatched skips them anyway), so that only deliveries still without a mutation are held.
func (ix *index) resolvedOrphansDropped() []orphan {
	keep := ix.orphans[:0]
	for _, o := range ix.orphans {
		if ix.muts.at(o.id).flags&fHasMut == 0 {
			keep = append(keep, o)
		}
	}
	clear(ix.orphans[len(keep):])
	return keep
}

// advance moves a consumer's cursor as the client does: to the max seq seen over all frames.
func (ix *index) advance(c *consumerState, seq int64, conn string) {
	ix.cur = frame{cons: c.idx, id: -1, conn: ix.conn(conn), before: c.cursor, after: c.cursor}
	if seq > c.cursor {
		c.cursor = seq
		ix.cur.after = seq
	}
}

// nearPays reports whether looking beside the last row's entry (mutTable.near) is worth trying: it is
// given up once most tries miss (an audit in another order than its entries), so that such a ledger
// costs at most a thousand or so wasted tries.
func (ix *index) nearPays() bool { return ix.nearTries < 1024 || ix.nearHits*2 >= ix.nearTries }

// podName returns the name of the pod that acked m ("" when unknown).
func (ix *index) podName(m *mutation) string { return ix.podNames[ix.muts.pod(m)] }

// mutationAt returns the mutation of id.
func (ix *index) mutationAt(id int32) *mutation { return ix.muts.at(id) }

// tenantName returns how the summary names tenant index i: its scenario name (tenant_2) when the run
// record gives one, else its id.
func (ix *index) tenantName(i int32) string { return ix.tenantLabels[i] }

// nameTenants takes the scenario's names of the run record's tenants (seqgate's addition to the
// ledger). A name is used only when it is unique and no other tenant's id, so that naming can never
// merge two tenants' numbers; a tenant without a usable name keeps its id (old ledgers: all of them).
func (ix *index) nameTenants(ts []ledger.Tenant) {
	count := map[string]int{}
	for _, t := range ts {
		count[t.Name]++
	}
	for _, t := range ts {
		i := ix.tenantIDs[t.ID]
		if other, isID := ix.tenantIDs[t.Name]; t.Name == "" || count[t.Name] > 1 || (isID && other != i) || ix.tenantLabels[i] != t.ID {
			if t.Name != "" && t.Name != t.ID {
				ix.warnf("run record: tenant %s: name %q is not unique among the tenants' names and ids; the summary names it by its id", t.ID, t.Name)
			}
			continue
		}
		ix.tenantLabels[i] = t.Name
		ix.byLabel[t.Name] = i
	}
}

// tenantRef finds a tenant by its id or its scenario name (fault targets and thresholds may use either).
func (ix *index) tenantRef(ref string) (int32, bool) {
	if i, ok := ix.tenantIDs[ref]; ok {
		return i, true
	}
	i, ok := ix.byLabel[ref]
	return i, ok
}

// deliveryClass is how one expected event ended for one durable consumer.
type deliveryClass uint8

const (
	classDelivered deliveryClass = iota
	classResetCovered
	classSkipped
	classUndelivered
	// classGone: beyond the final cursor of a consumer whose tenant was deleted during the run.
	classGone
)

// expected calls fn for every expected event of a durable consumer with its class, in seq order.
func (ix *index) expected(c *consumerState, fn func(row auditRow, class deliveryClass)) {
	if !c.durable || !c.hasRecord {
		return
	}
	a := ix.auditOf(c.tenant)
	a.sort()
	first := c.firstCursor()
	a.rows.each(func(row auditRow) bool {
		if row.seq > first && row.op == opEvent {
			fn(row, ix.classify(c, row))
		}
		return true
	})
}

// classedRow is an expected row and its class.
type classedRow struct {
	row   auditRow
	class deliveryClass
}

// unreceivedKept bounds the rows unreceived keeps for one consumer (24 bytes each): a consumer that
// missed more than this is walked again when asked again.
var unreceivedKept = 1 << 16 // a variable for its test

// unreceived calls fn for every expected event of a durable consumer that did not reach it (its
// class is not classDelivered), in seq order: the calls expected makes, less the delivered ones.
// Skipped's and undelivered's Finish both ask, after the classes are settled (resync's Finish, which
// sets covers, and the peers' rows come before both), so the first call keeps what it found and the
// second reads it instead of classifying every row of the audit again. In a run where consumers
// receive what they should, that is nothing.
func (ix *index) unreceived(c *consumerState, fn func(row auditRow, class deliveryClass)) {
	if rows := ix.unrecv[c.idx]; rows != nil {
		for _, r := range rows {
			fn(r.row, r.class)
		}
		return
	}
	if ix.unrecv == nil {
		ix.unrecv = map[int32][]classedRow{}
	}
	rows := []classedRow{}
	ix.expected(c, func(row auditRow, class deliveryClass) {
		if class == classDelivered {
			return
		}
		if rows != nil {
			if len(rows) < unreceivedKept {
				rows = append(rows, classedRow{row, class})
			} else {
				rows = nil
			}
		}
		fn(row, class)
	})
	ix.unrecv[c.idx] = rows
}

// classify decides how an expected event ended for c: delivered when an ev with its path reached c
// (by path, never by seq: a frame at its seq with another path does not deliver it); else
// reset-covered, decided first, when a seq_too_old reached c after it persisted, whether its seq is
// below or above the final cursor; else skipped (at or below the final cursor) or undelivered.
func (ix *index) classify(c *consumerState, row auditRow) deliveryClass {
	if c.deliveredID.Contains(uint32(row.id)) {
		return classDelivered
	}
	if ix.covers != nil {
		if ix.covers(c, row) {
			return classResetCovered
		}
	} else if c.hasTooOld && c.lastTooOldT > ix.persistedAt(row) {
		return classResetCovered
	}
	if row.seq <= c.finalCursor {
		return classSkipped
	}
	if _, ok := ix.deletedAt(c.tenant); ok {
		return classGone
	}
	return classUndelivered
}

// persistedAt is when an audit row persisted (run-relative): its created_unix_ns when the audit gives
// it, else its mutation's done_t; noTime when neither is known.
func (ix *index) persistedAt(row auditRow) int64 {
	if row.persistedT != noTime {
		return row.persistedT
	}
	if m := ix.muts.at(row.id); m.flags&fHasMut != 0 {
		return ix.muts.done(m)
	}
	return noTime
}

// internMode returns mode, one copy per distinct mode: a million tenants share two strings.
func (ix *index) internMode(mode string) string {
	for _, m := range ix.modes {
		if m == mode {
			return m
		}
	}
	mode = strings.Clone(mode)
	ix.modes = append(ix.modes, mode)
	return mode
}

// auditOf returns tenant ti's audit rows to read: none for a tenant without any.
func (ix *index) auditOf(ti int32) *tenantAudit {
	if a := ix.audit[ti]; a != nil {
		return a
	}
	return &tenantAudit{seqs: roaring64.New()}
}

// auditFor returns tenant ti's audit rows to add to, made on first use.
func (ix *index) auditFor(ti int32) *tenantAudit {
	a := ix.audit[ti]
	if a == nil {
		a = &tenantAudit{seqs: roaring64.New()}
		ix.audit[ti] = a
	}
	return a
}

func (a *tenantAudit) sort() {
	if a.sorted {
		return
	}
	a.rows.sort()
	a.sorted = true
}

// owner finds the mutation of another tenant with the same path as the mut-less entry id: an event
// that matches no mutation of its consumer's tenant but one of another tenant is a leak.
func (ix *index) owner(id int32) (*mutation, bool) {
	m := ix.muts.at(id)
	path := ix.path(m)
	for ti, name := range ix.tenantNames {
		if int32(ti) == ix.muts.tenantOf(m) {
			continue
		}
		if oid := ix.lookup(name, path); oid >= 0 && ix.muts.at(oid).flags&fHasMut != 0 {
			return ix.muts.at(oid), true
		}
	}
	return nil, false
}

// unmatched calls fn for every delivery whose (tenant, path) never got a mut record, with the
// mutation of another tenant it belongs to (a leak) or nil (unexpected).
func (ix *index) unmatched(fn func(o orphan, owner *mutation)) {
	for _, o := range ix.orphans {
		if ix.muts.at(o.id).flags&fHasMut != 0 {
			continue // delivered before its ack: the mut record came later
		}
		own, ok := ix.owner(o.id)
		if !ok {
			own = nil
		}
		fn(o, own)
	}
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
