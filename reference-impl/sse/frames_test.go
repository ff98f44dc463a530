package sse

import (
	"encoding/json"
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

// reflectChangedFrame is changedFrame's json.Marshal rendering, the reference for the appended one.
func reflectChangedFrame(e store.Event) frame {
	b, _ := json.Marshal(ChangeOf(e))
	return frame{seq: e.Seq, data: wrap("file_changed", b)}
}

// TestPlainChangedFrameMatchesJSON: the appended file_changed frame is byte for byte the
// json.Marshal one, for every field present or omitted; strings that need escaping are not
// appended (control: they take the json.Marshal path, whose output differs from the raw bytes).
func TestPlainChangedFrameMatchesJSON(t *testing.T) {
	at := time.UnixMilli(1796217269391)
	for _, e := range []store.Event{
		{Seq: 1, Path: "/a", Op: store.OpWrite, CreatedAt: at},
		{Seq: 1 << 62, Path: "/w255/123456", Op: store.OpWrite, Actor: "alice", CreatedAt: at},
		{Seq: 7, Path: "/b", Op: store.OpWrite, Batch: "b-1", CreatedAt: at},
		{Seq: 0, Path: "/ ~!#$%'()*+,-./:;=?@[]^_`{|}", Op: store.OpWrite, Actor: "x", Batch: "y", CreatedAt: time.UnixMilli(-5)},
	} {
		got, ok := plainChangedFrame(e)
		if !ok {
			t.Fatalf("%+v: not appended", e)
		}
		if want := reflectChangedFrame(e); string(got.data) != string(want.data) || got.seq != want.seq {
			t.Fatalf("%+v:\n got %q\nwant %q", e, got.data, want.data)
		}
		if f := changedFrame(e, nil); string(f.data) != string(got.data) {
			t.Fatalf("changedFrame does not take the appended frame: %q", f.data)
		}
	}
	for _, path := range []string{`/q"uote`, `/back\slash`, "/<tag>", "/a&b", "/tab\there", "/é", "/\u2028", "/\x7f", "/\xff"} {
		e := store.Event{Seq: 3, Path: path, Op: store.OpWrite, CreatedAt: at}
		if _, ok := plainChangedFrame(e); ok {
			t.Fatalf("%q appended without escaping", path)
		}
		if f, want := changedFrame(e, nil), reflectChangedFrame(e); string(f.data) != string(want.data) {
			t.Fatalf("%q: %q, want %q", path, f.data, want.data)
		}
	}
}

// FuzzPlainChangedFrame: whatever the strings, changedFrame's frame is json.Marshal's.
func FuzzPlainChangedFrame(f *testing.F) {
	f.Add(int64(1), "/a", "write", "", "", int64(1796217269391))
	f.Add(int64(-1), "/<&>", "rename", "a\"b", "\x00", int64(0))
	f.Fuzz(func(t *testing.T, seq int64, path, op, actor, batch string, ms int64) {
		e := store.Event{Seq: seq, Path: path, Op: op, Actor: actor, Batch: batch, CreatedAt: time.UnixMilli(ms)}
		if got, want := changedFrame(e, nil), reflectChangedFrame(e); string(got.data) != string(want.data) || got.seq != want.seq {
			t.Fatalf("%+v:\n got %q\nwant %q", e, got.data, want.data)
		}
	})
}
