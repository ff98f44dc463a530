package store_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestEventsInsertArgs: the multi-row insert carries each event's own fields in column order
// (shared boxes for values equal to the previous row's must not leak one row's value into another).
func TestEventsInsertArgs(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 7, 0, 0, 1500, time.UTC) // 1.5 µs: stored truncated to 1 µs
	t1 := t0.Add(time.Second)
	for _, c := range []struct {
		name string
		evs  []store.Event
	}{
		{"one", []store.Event{{Path: "/a", Op: store.OpWrite, CreatedAt: t0}}},
		{"a group: op and time shared", []store.Event{{Path: "/a", Op: store.OpWrite, CreatedAt: t0}, {Path: "/b", Op: store.OpWrite, CreatedAt: t0}, {Path: "/c", Op: store.OpWrite, CreatedAt: t0}}},
		{"every field changes", []store.Event{
			{Path: "/a", Op: store.OpWrite, CreatedAt: t0, Batch: "b1"},
			{Path: "/b", Op: store.OpRename, Src: "/a", Actor: "x", CreatedAt: t1, Batch: "b1"},
			{Path: "/c", Op: store.OpWrite, CreatedAt: t0, Batch: "b2"},
			{Path: "/c", Op: store.OpWrite, CreatedAt: t0, Batch: "b2"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, got := store.EventsInsert("ten", c.evs)
			var want []any
			for _, ev := range c.evs {
				want = append(want, "ten", ev.Path, ev.Op, ev.Actor, ev.CreatedAt.UTC().Truncate(time.Microsecond), ev.Src, ev.Batch)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("args\n got %v\nwant %v", got, want)
			}
		})
	}
}
