package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestTenantEventsAfterCountsThePoolsGaps: tenant a's page holds only a's events, and its counts
// say whether any seq of the pool is missing up to a's last event and up to the span's end. An
// insert in flight (a's own, or another tenant's) below a's event makes the page not visible, so
// the horizon pull waits instead of passing it; the plain page (the control) passes it.
func TestTenantEventsAfterCountsThePoolsGaps(t *testing.T) {
	type step struct {
		tenant, path string
		held         bool // inserted in a transaction left open: an insert in flight
	}
	cases := []struct {
		name           string
		steps          []step
		span           int64
		events         []string
		eventsVisible  bool
		endVisible     bool
		endIsTop, more bool
		plainPasses    bool // the control: a plain page of a shows its event past the missing seq
	}{
		{"clean", []step{{"b", "/b1", false}, {"a", "/next", false}, {"b", "/b2", false}}, 100, []string{"/next"}, true, true, true, false, false},
		{"own insert in flight below", []step{{"b", "/b1", false}, {"a", "/late", true}, {"a", "/next", false}}, 100, []string{"/next"}, false, false, true, false, true},
		{"other's insert in flight below", []step{{"b", "/b1", false}, {"b", "/late", true}, {"a", "/next", false}}, 100, []string{"/next"}, false, false, true, false, false},
		{"insert in flight above", []step{{"b", "/b1", false}, {"a", "/next", false}, {"b", "/late", true}, {"b", "/b2", false}}, 100, []string{"/next"}, true, false, true, false, false},
		{"span ends before the event", []step{{"b", "/b1", false}, {"a", "/next", false}}, 1, nil, false, true, false, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t)
			db := tenantDB(t)
			var top int64
			for _, s := range c.steps {
				ev := store.Event{Path: s.path, Op: "write", CreatedAt: time.Now()}
				var seq int64
				var err error
				if s.held {
					tx, terr := db.BeginTx(ctx, nil)
					if terr != nil {
						t.Fatal(terr)
					}
					defer tx.Rollback() //nolint:errcheck
					seq, err = store.InsertEventTx(ctx, tx, s.tenant, ev, false)
				} else {
					seq, err = (&store.TenantStore{DB: db, TenantID: s.tenant}).InsertEvent(ctx, ev, store.GuardHorizon)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !s.held {
					top = max(top, seq)
				}
			}
			a := &store.TenantStore{DB: db, TenantID: "a"}
			p, err := a.TenantEventsAfter(ctx, 0, 10, c.span)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range p.Events {
				got = append(got, e.Path)
			}
			if !slices.Equal(got, c.events) || p.EventsVisible != c.eventsVisible || p.EndVisible != c.endVisible ||
				(p.End == top) != c.endIsTop || p.More != c.more {
				t.Fatalf("page %+v (events %v), want events %v, events visible %v, end visible %v, end is the top %d: %v, more %v",
					p, got, c.events, c.eventsVisible, c.endVisible, top, c.endIsTop, c.more)
			}
			plain, _ := a.EventsSince(ctx, 0, 10)
			if c.plainPasses && (len(plain) != 1 || plain[0].Path != "/next") {
				t.Fatalf("control: plain page %+v, want it to pass the in-flight insert", plain)
			}
		})
	}
}
