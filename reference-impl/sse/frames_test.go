package sse

import (
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// The frames must be byte-compatible with drive9's stream (shared/design/facts.md).
func TestFramesMatchDrive9(t *testing.T) {
	ts := time.UnixMilli(1795961339230)
	cases := []struct {
		name string
		f    frame
		want string
	}{
		{"initial_sync", resetFrame(0, ReasonInitialSync), "event: reset\ndata: {\"seq\":0,\"reason\":\"initial_sync\"}\n\n"},
		{"heartbeat", heartbeatFrame(0), "event: heartbeat\ndata: {\"seq\":0}\n\n"},
		{"write", mustEvent(store.Event{Seq: 2, Path: "/a/c.txt", Op: "write", CreatedAt: ts}),
			"event: file_changed\ndata: {\"seq\":2,\"path\":\"/a/c.txt\",\"op\":\"write\",\"ts\":1795961339230}\n\n"},
		{"mkdir", mustEvent(store.Event{Seq: 4, Path: "/d1", Op: "mkdir", CreatedAt: ts}),
			"event: reset\ndata: {\"seq\":4,\"reason\":\"structural_change\",\"path\":\"/d1\",\"op\":\"mkdir\"}\n\n"},
		{"rename", mustEvent(store.Event{Seq: 5, Path: "/d1/c2.txt", Op: "rename", CreatedAt: ts}),
			"event: reset\ndata: {\"seq\":5,\"reason\":\"structural_change\",\"path\":\"/d1/c2.txt\",\"op\":\"rename\"}\n\n"},
		{"delete", mustEvent(store.Event{Seq: 6, Path: "/a/b.txt", Op: "delete", CreatedAt: ts}),
			"event: reset\ndata: {\"seq\":6,\"reason\":\"structural_change\",\"path\":\"/a/b.txt\",\"op\":\"delete\"}\n\n"},
		{"actor", mustEvent(store.Event{Seq: 7, Path: "/x", Op: "create", Actor: "u1", CreatedAt: ts}),
			"event: file_changed\ndata: {\"seq\":7,\"path\":\"/x\",\"op\":\"create\",\"actor\":\"u1\",\"ts\":1795961339230}\n\n"},
		{"slow_consumer", resetFrame(9, ReasonSlowConsumer), "event: reset\ndata: {\"seq\":9,\"reason\":\"slow_consumer\"}\n\n"},
	}
	for _, c := range cases {
		if got := string(c.f.data); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// mustEvent is the one frame of e in drive9's own form (--structural-events=reset).
func mustEvent(e store.Event) frame {
	fs, _, _ := eventFrames(e, StructuralReset)
	if len(fs) != 1 {
		panic("one frame expected")
	}
	return fs[0]
}

// TestStructuralModes: per --structural-events mode, the exact frames of each structural op (the
// payload's old and new path), in order, and the counts the stream's metrics take.
func TestStructuralModes(t *testing.T) {
	ts := time.UnixMilli(1795961339230)
	rename := store.Event{Seq: 5, Path: "/d1/c2.txt", Op: "rename", Src: "/a/c.txt", CreatedAt: ts}
	resetRename := "event: reset\ndata: {\"seq\":5,\"reason\":\"structural_change\",\"path\":\"/d1/c2.txt\",\"op\":\"rename\"}\n\n"
	changedRename := "event: file_changed\ndata: {\"seq\":5,\"path\":\"/d1/c2.txt\",\"op\":\"rename\",\"ts\":1795961339230,\"payload\":{\"old_path\":\"/a/c.txt\",\"new_path\":\"/d1/c2.txt\"}}\n\n"
	cases := []struct {
		name, mode      string
		ev              store.Event
		want            []string
		changed, resets int
	}{
		{"rename reset", StructuralReset, rename, []string{resetRename}, 0, 1},
		{"rename dual", StructuralDual, rename, []string{changedRename, resetRename}, 1, 1},
		{"rename file_changed", StructuralFileChanged, rename, []string{changedRename}, 1, 0},
		{"copy", StructuralFileChanged, store.Event{Seq: 6, Path: "/b", Op: "copy", Src: "/a", CreatedAt: ts},
			[]string{"event: file_changed\ndata: {\"seq\":6,\"path\":\"/b\",\"op\":\"copy\",\"ts\":1795961339230,\"payload\":{\"old_path\":\"/a\",\"new_path\":\"/b\"}}\n\n"}, 1, 0},
		{"delete", StructuralFileChanged, store.Event{Seq: 7, Path: "/a", Op: "delete", CreatedAt: ts},
			[]string{"event: file_changed\ndata: {\"seq\":7,\"path\":\"/a\",\"op\":\"delete\",\"ts\":1795961339230,\"payload\":{\"old_path\":\"/a\"}}\n\n"}, 1, 0},
		{"mkdir", StructuralFileChanged, store.Event{Seq: 8, Path: "/d", Op: "mkdir", CreatedAt: ts},
			[]string{"event: file_changed\ndata: {\"seq\":8,\"path\":\"/d\",\"op\":\"mkdir\",\"ts\":1795961339230,\"payload\":{\"new_path\":\"/d\"}}\n\n"}, 1, 0},
		{"write is never structural", StructuralFileChanged, store.Event{Seq: 9, Path: "/w", Op: "write", CreatedAt: ts},
			[]string{"event: file_changed\ndata: {\"seq\":9,\"path\":\"/w\",\"op\":\"write\",\"ts\":1795961339230}\n\n"}, 1, 0},
	}
	for _, c := range cases {
		fs, changed, resets := eventFrames(c.ev, c.mode)
		var got []string
		for _, f := range fs {
			got = append(got, string(f.data))
			if f.seq != c.ev.Seq {
				t.Errorf("%s: frame seq %d, want the row's %d", c.name, f.seq, c.ev.Seq)
			}
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") || changed != c.changed || resets != c.resets {
			t.Errorf("%s:\n got %q (%d changed, %d resets)\nwant %q (%d, %d)", c.name, got, changed, resets, c.want, c.changed, c.resets)
		}
	}
}
