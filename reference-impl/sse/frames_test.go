package sse

import (
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

func mustEvent(e store.Event) frame {
	f, _ := eventFrame(e)
	return f
}
