package sse

import (
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

func rowsOf(seqs ...int64) []store.Row {
	out := make([]store.Row, len(seqs))
	for i, s := range seqs {
		out[i] = store.Row{Event: store.Event{Seq: s}, Mine: true}
	}
	return out
}

// TestHorizonAdvance: a stream delivers up to the first missing seq, waits for it, and gives it up
// only after the wait; gaps at or below a sweep mark are deleted rows, passed at once.
func TestHorizonAdvance(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const wait = 5 * time.Second
	type step struct {
		rows     []int64
		gone     int64
		at       time.Duration // since t0
		wantN    int
		wantHeld bool
		settled  int64
		gaveUp   bool
	}
	cases := []struct {
		name  string
		start int64
		steps []step
	}{
		{"contiguous", 10, []step{{rows: []int64{11, 12, 13}, wantN: 3, settled: 13}}},
		{"empty page", 10, []step{{rows: nil, wantN: 0, settled: 10}}},
		{"gap held then filled", 10, []step{
			{rows: []int64{11, 13, 14}, wantN: 1, wantHeld: true, settled: 11},
			{rows: []int64{13, 14}, at: time.Second, wantN: 0, wantHeld: true, settled: 11},
			{rows: []int64{12, 13, 14}, at: 2 * time.Second, wantN: 3, settled: 14},
		}},
		{"gap at the start", 10, []step{{rows: []int64{12}, wantN: 0, wantHeld: true, settled: 10}}},
		{"hole given up after the wait, once for every gap seen with it", 10, []step{
			{rows: []int64{12, 14, 15}, wantN: 0, wantHeld: true, settled: 10},
			{rows: []int64{12, 14, 15}, at: wait - time.Millisecond, wantN: 0, wantHeld: true, settled: 10},
			{rows: []int64{12, 14, 15}, at: wait, wantN: 3, settled: 15, gaveUp: true},
		}},
		{"a gap above the ones waited for starts a new wait", 10, []step{
			{rows: []int64{12}, wantN: 0, wantHeld: true, settled: 10},
			{rows: []int64{12, 14}, at: wait, wantN: 1, wantHeld: true, settled: 12, gaveUp: true},
			{rows: []int64{12, 14}, at: 2*wait - time.Millisecond, wantN: 0, wantHeld: true, settled: 12},
			{rows: []int64{14}, at: 2 * wait, wantN: 1, settled: 14, gaveUp: true},
		}},
		{"gaps at or below a sweep mark are deleted rows", 10, []step{
			{rows: []int64{15, 16, 20}, gone: 14, wantN: 2, wantHeld: true, settled: 16},
			{rows: []int64{20}, gone: 19, at: time.Millisecond, wantN: 1, settled: 20},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := horizon{settled: c.start}
			for i, s := range c.steps {
				// a page is what a read after h.settled returns
				var rows []int64
				for _, r := range s.rows {
					if r > h.settled {
						rows = append(rows, r)
					}
				}
				n, held, gaveUp := h.advance(rowsOf(rows...), s.gone, t0.Add(s.at), wait)
				if n != s.wantN || held != s.wantHeld || h.settled != s.settled || gaveUp != s.gaveUp {
					t.Fatalf("step %d (%v): n %d held %v settled %d gave up %v, want %d %v %d %v", i, rows, n, held, h.settled, gaveUp, s.wantN, s.wantHeld, s.settled, s.gaveUp)
				}
			}
		})
	}
}

// TestHorizonReadersNeverPassAnInsertInFlight: 64 writers of one tenant insert without any lock
// (GuardHorizon: one autocommit INSERT each, so seqs commit out of order all the time) while readers
// follow the tenant. Readers that read through the horizon (store.EventsAfter, horizon.advance)
// see every seq; plain readers at seq > cursor, the control, pass late commits (hundreds of the
// 6,400 here; how many depends on the machine's scheduling, at least one is required).
func TestHorizonReadersNeverPassAnInsertInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("64 writers for a few seconds")
	}
	ctx := testCtx(t)
	st := tenantStore(t)
	st.DB.SetMaxOpenConns(72)
	const writers, each = 64, 100
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := st.InsertEvent(ctx, store.Event{Path: "/p", Op: "write", CreatedAt: time.Now()}, store.GuardHorizon); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	read := func(horizonRead bool, seen map[int64]bool) {
		var h horizon
		var cursor int64
		for last := false; ; {
			select {
			case <-done:
				last = true
			default:
			}
			var n int
			if horizonRead {
				p, err := st.EventsAfter(ctx, h.settled, 1000)
				if err != nil {
					t.Error(err)
					return
				}
				k, held, _ := h.advance(p.Rows, p.SweptAny, time.Now(), time.Hour)
				for _, r := range p.Rows[:k] {
					seen[r.Seq] = true
				}
				if n = k; held {
					n = -1                       // not done while held
					time.Sleep(time.Millisecond) // paces the reader's retry while the horizon holds
				}
			} else {
				evs, err := st.EventsSince(ctx, cursor, 1000)
				if err != nil {
					t.Error(err)
					return
				}
				for _, e := range evs {
					seen[e.Seq] = true
					cursor = e.Seq
				}
				n = len(evs)
			}
			if last && n == 0 {
				return
			}
		}
	}
	seen := make([]map[int64]bool, 6)
	var rwg sync.WaitGroup
	for r := range seen {
		seen[r] = map[int64]bool{}
		rwg.Add(1)
		go func() { defer rwg.Done(); read(r >= 3, seen[r]) }()
	}
	rwg.Wait()
	var all []int64
	rows, err := st.DB.QueryContext(ctx, `SELECT seq FROM fs_events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s int64
		_ = rows.Scan(&s)
		all = append(all, s)
	}
	rows.Close()
	if len(all) != writers*each {
		t.Fatalf("table holds %d events, %d written", len(all), writers*each)
	}
	control := 0
	for r := range seen {
		var missed []int64
		for _, s := range all {
			if !seen[r][s] {
				missed = append(missed, s)
			}
		}
		if r < 3 {
			t.Logf("control: plain reader %d skipped %d seqs", r, len(missed))
			control += len(missed)
		} else if len(missed) > 0 {
			t.Errorf("horizon reader %d skipped %d seqs: %v", r, len(missed), missed)
		}
	}
	if control == 0 {
		// Hundreds per reader on this machine; none means the writers never overlapped and the
		// test proved nothing.
		t.Error("control: the plain readers skipped nothing: no insert committed out of order")
	}
}
