package retention

import (
	"math"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// sweepInline is the unbounded-sweep defect: design 000 item 2 done half-way. The retention delete
// moved onto the write path but kept the pre-design's single unbounded DELETE, and runs in the
// writer's own request instead of a detached background sweep. Its throttle is the naive
// check-then-act: the tenant is marked swept only when the DELETE returns, so every write that
// arrives meanwhile finds the sweep due and issues its own DELETE of the same rows, which waits on
// the first one's row locks. A large backlog of old rows then stalls every write of the tenant for
// as long as the statement runs (the design: "the cost of one unbounded statement is driven by table
// size, not rows matched").
func (s *Sweeper) sweepInline(st *store.TenantStore) {
	key, every := "tenant:"+st.TenantID, s.Interval
	if st.Shared {
		key, every = "pool:"+st.PoolID, s.SharedInterval
	}
	s.mu.Lock()
	s.active[st.TenantID] = st
	due := time.Since(s.last[key]) >= every
	s.mu.Unlock()
	if !due {
		return
	}
	cutoff := time.Now().Add(-s.Retention)
	// One statement: no batch size (the largest LIMIT the driver takes) and one batch.
	var res store.SweepResult
	var err error
	who := st.TenantID
	if st.Shared {
		who = "shared_pool:" + st.PoolID
		res, err = store.SweepShared(s.ctx, st.DB, cutoff, math.MaxInt32, 1)
	} else {
		res, err = st.Sweep(s.ctx, cutoff, math.MaxInt32, 1)
	}
	s.record("lazy", res, err, who)
	s.mu.Lock()
	s.last[key] = time.Now()
	s.mu.Unlock()
}
