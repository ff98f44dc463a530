// Package sse serves GET /v1/events: Phase 1 replays the backlog after the client's cursor page by
// page until a short page (with interleaved heartbeats), Phase 2 drains on bus wakes (at most a few
// full pages per wake, then a short re-arm; error backoff), and a bounded per-connection send queue
// turns a consumer that cannot keep up into an explicit reset(slow_consumer) for that connection
// alone. Frames are drive9's: no id line, the cursor is the max seq over every frame.
package sse

import (
	"encoding/json"
	"strconv"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// Reset reasons.
const (
	ReasonInitialSync      = "initial_sync"
	ReasonSeqTooOld        = "seq_too_old"
	ReasonServerRestart    = "server_restart"
	ReasonStructuralChange = "structural_change"
	ReasonSlowConsumer     = "slow_consumer"
)

// frame is one SSE event ready to write; seq is what it moves the client's cursor to.
type frame struct {
	seq  int64
	data []byte
}

// structural ops surface as reset(structural_change), as in drive9.
func isStructural(op string) bool {
	switch op {
	case "rename", "delete", "mkdir", "copy":
		return true
	}
	return false
}

func eventFrame(e store.Event) (frame, bool) {
	if isStructural(e.Op) {
		b, _ := json.Marshal(struct {
			Seq    int64  `json:"seq"`
			Reason string `json:"reason"`
			Path   string `json:"path"`
			Op     string `json:"op"`
		}{e.Seq, ReasonStructuralChange, e.Path, e.Op})
		return frame{seq: e.Seq, data: wrap("reset", b)}, true
	}
	b, _ := json.Marshal(struct {
		Seq   int64  `json:"seq"`
		Path  string `json:"path"`
		Op    string `json:"op"`
		Actor string `json:"actor,omitempty"`
		Ts    int64  `json:"ts"`
	}{e.Seq, e.Path, e.Op, e.Actor, e.CreatedAt.UnixMilli()})
	return frame{seq: e.Seq, data: wrap("file_changed", b)}, false
}

func resetFrame(seq int64, reason string) frame {
	b, _ := json.Marshal(struct {
		Seq    int64  `json:"seq"`
		Reason string `json:"reason"`
	}{seq, reason})
	return frame{seq: seq, data: wrap("reset", b)}
}

func heartbeatFrame(seq int64) frame {
	return frame{seq: seq, data: wrap("heartbeat", []byte(`{"seq":`+strconv.FormatInt(seq, 10)+`}`))}
}

func wrap(event string, data []byte) []byte {
	out := make([]byte, 0, len(event)+len(data)+16)
	out = append(out, "event: "...)
	out = append(out, event...)
	out = append(out, "\ndata: "...)
	out = append(out, data...)
	out = append(out, "\n\n"...)
	return out
}
