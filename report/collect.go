package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// Limits that keep one pass bounded whatever the ledger holds.
const (
	maxFaults       = 1000
	maxPodEvents    = 500
	maxFamilies     = 8
	maxReasons      = 12
	maxSeries       = 20000
	defaultPending  = 1 << 20
	noTime          = math.MinInt64
	otherReason     = "other"
	maxBitConsumers = 64 // consumers per tenant tracked event by event
)

// Fault is one fault of the schedule as the ledger recorded it (fault start and stop records).
type Fault struct {
	ID      string
	Kind    string
	Target  string
	Params  string // compact JSON, "" when none
	StartNs int64
	StopNs  int64 // the end of the run when no stop record came
	Stopped bool
}

// PodEvent is one pod lifecycle record.
type PodEvent struct {
	Pod    string
	Phase  string
	T      int64
	Signal string
}

// Data is what one pass over a ledger yields: bounded time series and the run's schedule.
type Data struct {
	RunID, Scenario string
	Seed            int64
	StartUnixNs     int64
	EndNs           int64 // the end record's t, else the last time seen
	Ended           bool
	Records         int64
	Faults          []Fault
	Pods            []PodEvent
	ResetReasons    []string
	Families        []string // scraped metric families, in first-seen order
	Counters        []bool   // Counters[i]: family i is a counter (plotted as increase per second)
	Lat             latHist  // every first delivery of an acked event to a consumer
	// Partial, when not empty, says why the per-event series are incomplete (a bound was reached).
	Partial []string
	// OutboxRetention is the pods' outbox retention (eventlogd --outbox-retention) and
	// OutboxRetentionFrom where it was read; both set by the caller, which knows the run's flags.
	// Zero: eventlogd's default, 1h. The outbox age plot draws its alert threshold at twice it.
	OutboxRetention     time.Duration
	OutboxRetentionFrom string
	// UntrackedTenants counts the tenants beyond maxTrackedTenants, which have no series over time.
	UntrackedTenants int
	tracked          []trackedTenant
	tl               *timeline
}

// BucketSeconds is the width of one time bucket of the series.
func (d *Data) BucketSeconds() float64 { return float64(d.tl.width) / 1e9 }

type consumerInfo struct {
	tenant   int32
	bit      uint64 // 0 when the tenant has more than maxBitConsumers consumers
	seenOpen bool
	slot     int // its per-consumer series (-1: not followed over time)
}

type tenantInfo struct {
	id    string
	mask  uint64
	nbits int
	cons  []*consumerInfo
	// series is where its per-tenant series are (nil: not followed; untracked says it was refused).
	series    *tenantSeries
	untracked bool
}

const (
	fMut = 1 << iota
	fOK
)

// pending is an event not yet delivered to every consumer of its tenant: what the latency of its
// first deliveries needs.
type pending struct {
	doneT  int64
	mask   uint64
	tenant int32
	flags  uint8
}

// Collector builds Data from ledger records seen one at a time, in ledger order.
type Collector struct {
	d          *Data
	seed       maphash.Seed
	h          maphash.Hash
	pend       map[uint64]pending
	maxPending int
	tenants    []*tenantInfo
	tenantIx   map[string]int32
	cons       map[string]*consumerInfo
	open       map[string]bool // open connections by conn id
	faultIx    map[string]int
	famIx      map[string]int
	reasonIx   map[string]int
	series     map[string]float64 // last value of each counter series
	lastT      int64
	nTracked   int // tenants followed over time
	nConsSlots int // consumers followed over time
}

// NewCollector returns a Collector with the default bounds.
func NewCollector() *Collector {
	c := &Collector{
		d:          &Data{tl: newTimeline(defaultMaxBuckets)},
		seed:       maphash.MakeSeed(),
		pend:       map[uint64]pending{},
		maxPending: defaultPending,
		tenantIx:   map[string]int32{},
		cons:       map[string]*consumerInfo{},
		open:       map[string]bool{},
		faultIx:    map[string]int{},
		famIx:      map[string]int{},
		reasonIx:   map[string]int{},
		series:     map[string]float64{},
	}
	c.h.SetSeed(c.seed)
	return c
}

// Collect reads src to the end in one pass and returns its Data.
func Collect(src interface {
	Next() (*ledger.Record, error)
}) (*Data, error) {
	c := NewCollector()
	for {
		r, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		c.Observe(r)
	}
	return c.Finish(), nil
}

// Observe folds one record in. Records of kinds it does not know are skipped.
func (c *Collector) Observe(r *ledger.Record) {
	c.d.Records++
	if r.K != ledger.KindRun && r.K != ledger.KindPersisted && r.K != ledger.KindConsumer && r.T > c.lastT {
		c.lastT = r.T
	}
	tl := c.d.tl
	switch r.K {
	case ledger.KindRun:
		c.d.RunID, c.d.Scenario, c.d.Seed, c.d.StartUnixNs = strings.Clone(r.RunID), strings.Clone(r.Scenario), r.Seed, r.StartUnixNs
		for _, t := range r.Tenants {
			c.tenant(t.ID)
		}
	case ledger.KindMut:
		c.mut(r)
	case ledger.KindDrop:
		tl.at(r.IntendedT).n[cOffered]++
		tl.at(r.IntendedT).n[cDropped]++
	case ledger.KindEv:
		c.ev(r)
	case ledger.KindReset:
		b := tl.at(r.T)
		b.addReset(c.reason(r.Reason), 1)
		if ci := c.consumer(r.Consumer, r.Tenant); ci.slot >= 0 && r.Seq > 0 {
			b.cur = setMax(b.cur, ci.slot, r.Seq, 0) // a reset moves the cursor too
		}
	case ledger.KindPersisted:
		c.persisted(r)
	case ledger.KindConn:
		c.conn(r)
	case ledger.KindFault:
		c.fault(r)
	case ledger.KindPod:
		if len(c.d.Pods) < maxPodEvents {
			c.d.Pods = append(c.d.Pods, PodEvent{Pod: strings.Clone(r.Pod), Phase: strings.Clone(r.Phase), T: r.T, Signal: strings.Clone(r.Signal)})
		}
	case ledger.KindMetric:
		c.metric(r)
	case ledger.KindEnd:
		c.d.Ended = r.Reason != "interrupted"
		c.d.EndNs = r.T
	}
}

func eventOp(op string) bool {
	switch op {
	case "write", "create", "symlink", "hardlink", "upload_complete":
		return true
	}
	return false
}

func (c *Collector) key(tenant, path string) uint64 {
	c.h.Reset()
	c.h.WriteString(tenant)
	c.h.WriteByte(0)
	c.h.WriteString(path)
	return c.h.Sum64()
}

func (c *Collector) tenant(id string) int32 {
	if i, ok := c.tenantIx[id]; ok {
		return i
	}
	i := int32(len(c.tenants))
	id = strings.Clone(id)
	c.tenants = append(c.tenants, &tenantInfo{id: id})
	c.tenantIx[id] = i
	c.trackTenant(i)
	return i
}

func (c *Collector) consumer(id, tenant string) *consumerInfo {
	if ci, ok := c.cons[id]; ok {
		return ci
	}
	ti := c.tenant(tenant)
	t := c.tenants[ti]
	ci := &consumerInfo{tenant: ti, slot: -1}
	if t.nbits < maxBitConsumers {
		ci.bit = 1 << t.nbits
		t.mask |= ci.bit
		t.nbits++
	} else if t.nbits == maxBitConsumers {
		t.nbits++
		c.partial(fmt.Sprintf("tenant %s has more than %d consumers: the later ones' deliveries are not in the latency plot", t.id, maxBitConsumers))
	}
	t.cons = append(t.cons, ci)
	id = strings.Clone(id)
	c.cons[id] = ci
	c.trackConsumer(ci, id)
	return ci
}

func (c *Collector) partial(msg string) {
	if !slices.Contains(c.d.Partial, msg) {
		c.d.Partial = append(c.d.Partial, msg)
	}
}

// insert adds p unless the pending set is full.
func (c *Collector) insert(k uint64, p pending) {
	if len(c.pend) >= c.maxPending {
		c.partial(fmt.Sprintf("more than %d events were in flight or undelivered at once: later ones are not followed event by event (the latency series is partial)", c.maxPending))
		return
	}
	c.pend[k] = p
}

func (c *Collector) mut(r *ledger.Record) {
	tl := c.d.tl
	it := r.IntendedT
	if it == 0 {
		it = r.T
	}
	tl.at(it).n[cOffered]++
	tl.at(r.T).n[cReqStart]++
	tl.at(r.DoneT).n[cReqEnd]++
	ok := r.Res == ledger.ResOK
	if ok {
		tl.at(r.DoneT).n[cAcked]++
	} else {
		tl.at(r.DoneT).n[cFailed]++
	}
	if !eventOp(r.Op) {
		return
	}
	ti := c.tenant(r.Tenant)
	k := c.key(r.Tenant, r.Path)
	var fl uint8 = fMut
	if ok {
		fl |= fOK
	}
	p, exists := c.pend[k]
	if !exists {
		c.insert(k, pending{doneT: r.DoneT, tenant: ti, flags: fl})
		return
	}
	// Delivered before its ack was recorded: latency 0 for each consumer that already has it.
	p.doneT, p.flags = r.DoneT, p.flags|fl
	if ok {
		b := tl.at(r.DoneT)
		for range bits.OnesCount64(p.mask) {
			b.lat.add(0)
			c.d.Lat.add(0)
		}
	}
	c.settle(k, p)
}

// settle stores p, or forgets it once every consumer of its tenant has it.
func (c *Collector) settle(k uint64, p pending) {
	t := c.tenants[p.tenant]
	if p.flags&fMut != 0 && p.mask&t.mask == t.mask && t.nbits <= maxBitConsumers {
		delete(c.pend, k)
		return
	}
	c.pend[k] = p
}

func (c *Collector) ev(r *ledger.Record) {
	b := c.d.tl.at(r.T)
	b.n[cDelivered]++
	ci := c.consumer(r.Consumer, r.Tenant)
	if ci.slot >= 0 && r.Seq > 0 {
		b.cur = setMax(b.cur, ci.slot, r.Seq, 0)
	}
	k := c.key(r.Tenant, r.Path)
	p, exists := c.pend[k]
	if !exists {
		c.insert(k, pending{doneT: noTime, mask: ci.bit, tenant: ci.tenant})
		return
	}
	if ci.bit != 0 && p.mask&ci.bit != 0 {
		return // a duplicate: latency counts first deliveries
	}
	p.mask |= ci.bit
	if p.flags&fOK != 0 {
		us := float64(r.T-p.doneT) / 1e3
		ab := c.d.tl.at(p.doneT)
		ab.lat.add(us)
		c.d.Lat.add(us)
		if ci.slot >= 0 {
			ab.consumerLag(ci.slot, us)
		}
	}
	c.settle(k, p)
}

// persisted places an audit row's seq on its tenant's head line at the time the service created
// it (rows without a creation time, or in a ledger without a start time, are not placed).
func (c *Collector) persisted(r *ledger.Record) {
	if r.CreatedUnixNs <= 0 || c.d.StartUnixNs <= 0 || r.Seq <= 0 {
		return
	}
	ti, ok := c.tenantIx[r.Tenant]
	if !ok || c.tenants[ti].series == nil {
		return
	}
	t := min(max(r.CreatedUnixNs-c.d.StartUnixNs, 0), c.lastT)
	b := c.d.tl.at(t)
	b.head = setMax(b.head, c.tenants[ti].series.slot, r.Seq, 0)
}

func (c *Collector) reason(s string) int {
	if i, ok := c.reasonIx[s]; ok {
		return i
	}
	if len(c.d.ResetReasons) >= maxReasons-1 {
		s = otherReason
		if i, ok := c.reasonIx[s]; ok {
			return i
		}
	}
	s = strings.Clone(s)
	c.reasonIx[s] = len(c.d.ResetReasons)
	c.d.ResetReasons = append(c.d.ResetReasons, s)
	return c.reasonIx[s]
}

func (c *Collector) conn(r *ledger.Record) {
	ci := c.consumer(r.Consumer, r.Tenant)
	b := c.d.tl.at(r.T)
	switch r.Phase {
	case "open":
		if ci.seenOpen {
			b.n[cReconnects]++
		}
		ci.seenOpen = true
		if !c.open[r.Conn] {
			c.open[strings.Clone(r.Conn)] = true
		}
	case "fail", "close":
		if r.Phase == "fail" {
			b.n[cConnFails]++
		}
		delete(c.open, r.Conn)
	}
	b.conns = int64(len(c.open))
}

func (c *Collector) fault(r *ledger.Record) {
	i, ok := c.faultIx[r.ID]
	if !ok {
		if r.Phase != "start" || len(c.d.Faults) >= maxFaults {
			if len(c.d.Faults) >= maxFaults {
				c.partial(fmt.Sprintf("more than %d faults: only the first are drawn", maxFaults))
			}
			return
		}
		f := Fault{ID: strings.Clone(r.ID), Kind: strings.Clone(r.Kind), Target: strings.Clone(r.Target), StartNs: r.T, StopNs: noTime}
		if len(r.Params) > 0 {
			if b, err := json.Marshal(r.Params); err == nil {
				f.Params = string(b)
			}
		}
		c.faultIx[f.ID] = len(c.d.Faults)
		c.d.Faults = append(c.d.Faults, f)
		return
	}
	if r.Phase == "stop" {
		c.d.Faults[i].StopNs, c.d.Faults[i].Stopped = r.T, true
	}
}

func (c *Collector) metric(r *ledger.Record) {
	i, ok := c.famIx[r.Name]
	if !ok {
		if len(c.d.Families) >= maxFamilies {
			return
		}
		name := strings.Clone(r.Name)
		i = len(c.d.Families)
		c.famIx[name] = i
		c.d.Families = append(c.d.Families, name)
		c.d.Counters = append(c.d.Counters, verifier.MetricKind(name, r.MetricType) == verifier.MetricCounter)
		c.d.tl.sumFam = c.d.Counters
	}
	b := c.d.tl.at(r.T)
	if !c.d.Counters[i] {
		b.metric(i, r.Value, false)
		return
	}
	key := seriesKey(r)
	last, seen := c.series[key]
	if !seen && len(c.series) >= maxSeries {
		return
	}
	c.series[key] = r.Value
	inc := r.Value - last
	if r.Value < last {
		inc = r.Value // the counter restarted (a pod restart)
	}
	if !seen {
		inc = 0 // the first sample is the baseline
	}
	b.metric(i, inc, true)
}

func seriesKey(r *ledger.Record) string {
	var sb strings.Builder
	sb.WriteString(r.Pod)
	sb.WriteByte(0)
	sb.WriteString(r.Name)
	ks := make([]string, 0, len(r.Labels))
	for k := range r.Labels {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		sb.WriteByte(0)
		sb.WriteString(k)
		sb.WriteByte('=')
		sb.WriteString(r.Labels[k])
	}
	return sb.String()
}

// Finish closes the series and returns the Data; the anomalies over time come from the verifier
// (AddTimeline). The Collector must not be used afterwards.
func (c *Collector) Finish() *Data {
	d := c.d
	if !d.Ended && d.EndNs == 0 {
		d.EndNs = c.lastT
	}
	d.EndNs = max(d.EndNs, c.lastT)
	for i := range d.Faults {
		if !d.Faults[i].Stopped {
			d.Faults[i].StopNs = d.EndNs
		}
	}
	if d.EndNs > 0 {
		d.tl.at(d.EndNs) // the axis reaches the end of the run
	}
	c.pend = nil
	return d
}

// anomalySeries are the verifier's anomaly kinds the report plots over time, and their counters.
var anomalySeries = []struct {
	kind verifier.WitnessKey
	c    int
}{{verifier.WitnessLost, cLost}, {verifier.WitnessSkipped, cSkipped}, {verifier.WitnessUndelivered, cUndelivered}}

// AddTimeline puts the verifier's anomaly timeline on the report's time axis. Both axes start at
// 100 ms buckets and double, so the report's buckets are widened to the verifier's when they are
// narrower and each verifier bucket then falls in one of them.
func (d *Data) AddTimeline(tl *verifier.Timeline) {
	if tl == nil {
		return
	}
	for d.tl.width < tl.WidthNs {
		d.tl.coarsen()
	}
	for _, a := range anomalySeries {
		tl.Each(a.kind, func(start, n int64) { d.tl.at(start).n[a.c] += n })
	}
}
