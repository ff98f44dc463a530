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

// Structural-event modes (--structural-events): how rename, delete, mkdir and copy reach clients.
// The design's dual-emit window sends both forms, so a client that knows only drive9's
// reset(structural_change) keeps working while new clients move to the detailed file_changed.
const (
	StructuralReset       = "reset"        // drive9's form only: reset(structural_change)
	StructuralDual        = "dual"         // file_changed with its payload, then the reset (the default)
	StructuralFileChanged = "file_changed" // the window is over: file_changed with its payload only
)

// StructuralModes lists the allowed --structural-events values.
var StructuralModes = []string{StructuralReset, StructuralDual, StructuralFileChanged}

// Payload is the machine-readable detail of a structural file_changed (additive: a client that
// ignores unknown fields sees drive9's file_changed). OldPath is what the op took away or copied
// from (rename and copy: the source; delete: the deleted path), NewPath what it made (rename and
// copy: the destination; mkdir: the directory).
type Payload struct {
	OldPath string `json:"old_path,omitempty"`
	NewPath string `json:"new_path,omitempty"`
}

func payloadOf(e store.Event) *Payload {
	switch e.Op {
	case store.OpRename, store.OpCopy:
		return &Payload{OldPath: e.Src, NewPath: e.Path}
	case store.OpDelete:
		return &Payload{OldPath: e.Path}
	case store.OpMkdir:
		return &Payload{NewPath: e.Path}
	}
	return nil
}

// eventFrames turns one row into its frames under mode: one file_changed for an ordinary op; for a
// structural op the reset, the detailed file_changed, or both (file_changed first; both carry the
// row's seq). It reports how many of each it made.
func eventFrames(e store.Event, mode string) (out []frame, changed, resets int) {
	if !store.IsStructural(e.Op) {
		return []frame{changedFrame(e, nil)}, 1, 0
	}
	if mode != StructuralReset {
		out = append(out, changedFrame(e, payloadOf(e)))
		changed++
	}
	if mode != StructuralFileChanged {
		b, _ := json.Marshal(struct {
			Seq    int64  `json:"seq"`
			Reason string `json:"reason"`
			Path   string `json:"path"`
			Op     string `json:"op"`
		}{e.Seq, ReasonStructuralChange, e.Path, e.Op})
		out = append(out, frame{seq: e.Seq, data: wrap("reset", b)})
		resets++
	}
	return out, changed, resets
}

func changedFrame(e store.Event, p *Payload) frame {
	if p == nil {
		if f, ok := plainChangedFrame(e); ok {
			return f
		}
	}
	c := ChangeOf(e)
	c.Payload = p
	b, _ := json.Marshal(c)
	return frame{seq: e.Seq, data: wrap("file_changed", b)}
}

// plainChangedFrame is changedFrame without a payload for an event whose strings need no JSON
// escaping (printable ASCII other than '"', '\\', '<', '>' and '&': what encoding/json writes as
// is), appended in one allocation without reflection: the frame every ordinary write sends. It
// reports false for any other event, which json.Marshal renders.
func plainChangedFrame(e store.Event) (frame, bool) {
	if !plainJSON(e.Path) || !plainJSON(e.Op) || !plainJSON(e.Actor) || !plainJSON(e.Batch) {
		return frame{}, false
	}
	b := make([]byte, 0, 80+len(e.Path)+len(e.Op)+len(e.Actor)+len(e.Batch))
	b = append(b, "event: file_changed\ndata: {\"seq\":"...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"path":"`...)
	b = append(b, e.Path...)
	b = append(b, `","op":"`...)
	b = append(b, e.Op...)
	b = append(b, '"')
	if e.Actor != "" {
		b = append(b, `,"actor":"`...)
		b = append(b, e.Actor...)
		b = append(b, '"')
	}
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, e.CreatedAt.UnixMilli(), 10)
	if e.Batch != "" {
		b = append(b, `,"batch":"`...)
		b = append(b, e.Batch...)
		b = append(b, '"')
	}
	b = append(b, "}\n\n"...)
	return frame{seq: e.Seq, data: b}, true
}

// plainJSON reports whether encoding/json writes s as is between its quotes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// Change is the JSON of one event: the data of a file_changed frame, and one element of a pull
// page's events (where structural ops appear in this form too, with their op and payload).
type Change struct {
	Seq     int64    `json:"seq"`
	Path    string   `json:"path"`
	Op      string   `json:"op"`
	Actor   string   `json:"actor,omitempty"`
	Ts      int64    `json:"ts"`
	Payload *Payload `json:"payload,omitempty"`
	// Batch is the id shared by every event of one batch write (additive: absent otherwise, and
	// a client that ignores unknown fields reads the frame as before).
	Batch string `json:"batch,omitempty"`
}

// ChangeOf renders e as its JSON form, without a payload (changedFrame adds one by mode; a pull
// page gives every structural op its payload, see ChangeWithPayload).
func ChangeOf(e store.Event) Change {
	return Change{Seq: e.Seq, Path: e.Path, Op: e.Op, Actor: e.Actor, Ts: e.CreatedAt.UnixMilli(), Batch: e.Batch}
}

// ChangeWithPayload is ChangeOf with a structural op's payload (old and new path).
func ChangeWithPayload(e store.Event) Change {
	c := ChangeOf(e)
	c.Payload = payloadOf(e)
	return c
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
