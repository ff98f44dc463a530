package load

import (
	"context"
	"sync"
	"time"
)

// arrival is one scheduled mutation, taken by the request slot that sends it.
type arrival struct {
	i    int // index in the block's schedule: the mutation id's last part
	op   string
	pick int // seeded choice of an existing file, for ops that need one
	due  time.Time
}

// queue is the schedule of one tenant of one block, from which the tenant's request slots take
// their arrivals. A free slot takes the next arrival, sleeps until it is due and sends it itself,
// so an arrival wakes the one goroutine that sends it and is handed to none (a schedule goroutine
// that handed each arrival to a waiting slot woke a second thread per arrival: ~11% of the
// driver's CPU in a profile at 2,000/s).
//
// The open model is kept: a slot that wakes with no other slot coming for the next arrival wakes
// a parked slot, or starts a new one (up to MaxInFlight), to take it; so an arrival always finds
// a free slot while one exists or can be started. With every slot started and busy, the queue's
// watcher sleeps until the next arrival instead and drops it when it is due (it is never queued).
//
// Slots are goroutines that live until the schedule ends (a goroutine per request would grow a
// fresh stack through net/http on every send). At most maxAhead of them hold an arrival ahead;
// a slot that finishes while that many do parks instead, and the most recently parked one is
// woken first: after a burst, the few slots the rate needs take turns and the others sleep,
// rather than every slot sending in turn (each with a stack the collector shrank since its last
// send, to be grown again through net/http).
type queue struct {
	d        *Driver
	b        Block
	t        Tenant
	pace     Pacer
	mix      *Mix
	begin    time.Time
	inflight *sync.WaitGroup // a slot is counted from its start to its end

	mu       sync.Mutex
	next     int             // the first arrival not taken
	due      time.Time       // next's intended time
	over     bool            // nothing is left to take: the schedule ended or the run was cancelled
	ended    chan struct{}   // closed when over becomes true
	waiting  int             // slots asleep until the arrival they took is due
	coming   int             // slots started or woken to take next that have not taken it yet
	parked   []chan struct{} // slots with nothing to take, most recently parked last
	slots    int             // slots started
	watching bool            // watch is armed for next (every slot is started and none waits)
	watch    *time.Timer
	alarm    *alarm
}

// maxAhead is how many slots may hold an arrival ahead of its time. One is not enough: a slot that
// finished would then park while another waits, and be woken for the arrival after it, a hand-off
// per arrival again.
const maxAhead = 4

func newQueue(d *Driver, loadStart time.Time, b Block, t Tenant, inflight *sync.WaitGroup) *queue {
	q := &queue{d: d, b: b, t: t, pace: NewPacer(b.Load, t.Phase),
		mix:   NewMix(b.Load.Mix, uint64(d.cfg.Seed), uint64(t.Index)<<16|uint64(b.Index)),
		begin: loadStart.Add(b.Load.Start.D()), inflight: inflight,
		ended: make(chan struct{}), watch: time.NewTimer(time.Hour), alarm: newAlarm()}
	q.watch.Stop()
	q.moveTo(0)
	return q
}

// run drives the queue until its schedule ends or ctx is done: it starts the first slot and
// watches for arrivals no slot is free for. It returns while slots may still be sending.
func (q *queue) run(ctx context.Context) {
	defer func() {
		q.mu.Lock() // slots still sending may set the alarm, under the lock, until they see over
		q.alarm.close()
		q.mu.Unlock()
	}()
	defer q.watch.Stop()
	q.mu.Lock()
	start := q.coverLocked()
	q.mu.Unlock()
	if start {
		go q.slot(ctx)
	}
	var drops []arrival
	for {
		select {
		case <-ctx.Done():
			q.mu.Lock()
			q.endLocked()
			q.mu.Unlock()
			return
		case <-q.ended:
			return
		case <-q.watch.C:
		}
		// A slot may have taken next since the timer fired (then watching is false), and armed
		// the watch again for a later arrival (then next is not due yet).
		now := time.Now()
		q.mu.Lock()
		for q.watching && !q.over && !q.due.After(now) {
			drops = append(drops, q.takeLocked())
		}
		if q.watching && !q.over {
			q.armWatchLocked(now)
		}
		q.mu.Unlock()
		for _, a := range drops {
			q.d.Stats.Offered.Add(1)
			q.d.drop(q.t.ID, q.b.Index, a.due)
		}
		drops = drops[:0]
	}
}

// slot is one request slot: it takes an arrival, sends it when due and takes the next, until
// the schedule is over.
func (q *queue) slot(ctx context.Context) {
	defer q.inflight.Done()
	s := q.d.newSlot(q.t, q.b)
	w := waiter{timer: time.NewTimer(time.Hour), wake: make(chan struct{}, 1), coming: true}
	defer w.timer.Stop()
	for {
		a, ok := q.take(ctx, &w)
		if !ok {
			return
		}
		s.send(a)
	}
}

// waiter is what a slot waits with.
type waiter struct {
	timer  *time.Timer   // until the arrival it took is due
	wake   chan struct{} // parked: a token when it is needed
	coming bool          // counted in the queue's coming
}

// take gives a slot the next arrival once it is due (sleeping on w until then, and parked until
// it is needed while maxAhead slots hold one), or false when the schedule is over or ctx is done.
func (q *queue) take(ctx context.Context, w *waiter) (arrival, bool) {
	q.mu.Lock()
	for !q.over && !w.coming && q.waiting >= maxAhead {
		q.parked = append(q.parked, w.wake)
		q.mu.Unlock()
		select {
		case <-w.wake: // whoever woke it counted it as coming
			w.coming = true
		case <-q.ended:
			return arrival{}, false
		case <-ctx.Done():
			return arrival{}, false
		}
		q.mu.Lock()
	}
	if w.coming {
		w.coming = false
		q.coming--
	}
	if q.over {
		q.mu.Unlock()
		return arrival{}, false
	}
	timer := w.timer
	a := q.takeLocked()
	q.waiting++
	if q.watching { // this slot is free for next: the watcher need not wake
		q.watching = false
		q.watch.Stop()
	}
	wait := time.Until(a.due)
	if wait > 0 {
		timer.Reset(wait)
		if q.waiting == 1 { // the queue's earliest wait
			q.alarm.set(a.due, wait)
		}
	}
	q.mu.Unlock()
	if wait > 0 {
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return arrival{}, false
		}
	} else if ctx.Err() != nil {
		return arrival{}, false
	}
	q.mu.Lock()
	q.waiting--
	start := false
	switch {
	case q.waiting == 0 && q.coming == 0:
		start = q.coverLocked()
	case q.alarm.precise(): // the earliest remaining wait, if slots wake in the order they took
		if off, ok := q.pace(q.next - q.waiting); ok {
			t := q.begin.Add(off)
			q.alarm.set(t, time.Until(t))
		}
	}
	q.mu.Unlock()
	if start {
		go q.slot(ctx)
	}
	q.d.Stats.Offered.Add(1)
	return a, true
}

// coverLocked sees that someone takes next when no slot waits or comes for it: the most recently
// parked slot, else a new slot while fewer than MaxInFlight are started (it reports true: the
// caller starts it), else the watcher.
func (q *queue) coverLocked() bool {
	if q.over {
		return false
	}
	if n := len(q.parked); n > 0 {
		q.coming++
		q.parked[n-1] <- struct{}{} // room for one: a slot is parked once per token
		q.parked = q.parked[:n-1]
		return false
	}
	if q.slots < q.b.Load.MaxInFlight {
		q.slots++
		q.coming++
		q.inflight.Add(1)
		return true
	}
	q.watching = true
	q.armWatchLocked(time.Now())
	return false
}

func (q *queue) armWatchLocked(now time.Time) {
	wait := q.due.Sub(now)
	q.watch.Reset(wait)
	q.alarm.set(q.due, wait)
}

// takeLocked takes arrival next; its op and file choice are drawn in schedule order, so an
// arrival's draw is the same whichever slot takes it, or whether it is dropped.
func (q *queue) takeLocked() arrival {
	a := arrival{i: q.next, op: q.mix.Next(), pick: q.mix.Pick(1 << 30), due: q.due}
	q.moveTo(q.next + 1)
	return a
}

// moveTo makes arrival i next, or ends the queue when the schedule has no arrival i.
func (q *queue) moveTo(i int) {
	q.next = i
	off, ok := q.pace(i)
	if !ok {
		q.endLocked()
		return
	}
	q.due = q.begin.Add(off)
}

func (q *queue) endLocked() {
	if !q.over {
		q.over = true
		q.watching = false
		close(q.ended)
	}
}
