package api_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/sse"
)

// legacyFrame is what a client written for drive9's stream knows: no payload. encoding/json ignores
// the fields it does not know, as the consumer contract asks of every client.
type legacyFrame struct {
	Seq    int64  `json:"seq"`
	Path   string `json:"path"`
	Op     string `json:"op"`
	Reason string `json:"reason"`
}

// TestStructuralEventModes runs mkdir, rename, copy and delete under each --structural-events mode
// through a real pod and reads the raw stream. In dual mode a client that knows only the old form
// still gets reset(structural_change) for every op, and decodes the new file_changed frames without
// error at the same seq (its cursor moves exactly as before); the payload names the old and new
// paths. In reset mode no detailed frame is sent; in file_changed mode no structural reset.
func TestStructuralEventModes(t *testing.T) {
	type want struct{ op, oldPath, newPath string }
	ops := []want{{"mkdir", "", "/d"}, {"rename", "/a", "/d/b"}, {"copy", "/d/b", "/c"}, {"delete", "/c", ""}}
	for _, mode := range sse.StructuralModes {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			p := e.pod("p1", func(c *api.Config) { c.Stream.StructuralEvents = mode })
			_, k := p.provision(t, "")
			sub := p.subscribe(t, k, 0).start()
			if _, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok {
				t.Fatal("no heartbeat")
			}
			p.write(t, k, "/a", "x")
			for _, step := range []struct{ method, path, hdr, src string }{
				{"POST", "/v1/fs/d?mkdir", "", ""},
				{"POST", "/v1/fs/d/b?rename", "X-Dat9-Rename-Source", "/a"},
				{"POST", "/v1/fs/c?copy", "X-Dat9-Copy-Source", "/d/b"},
				{"DELETE", "/v1/fs/c", "", ""},
			} {
				var hdr map[string]string
				if step.hdr != "" {
					hdr = map[string]string{step.hdr: step.src}
				}
				if code, m := p.do(t, step.method, step.path, k, nil, hdr); code != 200 {
					t.Fatalf("%s %s: %d %v", step.method, step.path, code, m)
				}
			}
			p.write(t, k, "/last", "x")
			got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/last" })
			if !ok {
				t.Fatalf("stream did not reach /last: %+v", got)
			}
			var resets, changed []legacyFrame
			var payloads []want
			for _, r := range sub.seen {
				var lf legacyFrame
				if err := json.Unmarshal([]byte(r.Data), &lf); err != nil {
					t.Fatalf("a client knowing only the old fields cannot decode %q: %v", r.Data, err)
				}
				var full struct {
					Payload *struct {
						OldPath string `json:"old_path"`
						NewPath string `json:"new_path"`
					} `json:"payload"`
				}
				_ = json.Unmarshal([]byte(r.Data), &full)
				switch {
				case r.Type == "reset" && lf.Reason == "structural_change":
					resets = append(resets, lf)
				case r.Type == "file_changed" && lf.Op != "write":
					changed = append(changed, lf)
					if full.Payload == nil {
						t.Fatalf("structural file_changed without payload: %s", r.Data)
					}
					payloads = append(payloads, want{lf.Op, full.Payload.OldPath, full.Payload.NewPath})
				}
			}
			wantResets, wantChanged := len(ops), len(ops)
			switch mode {
			case sse.StructuralReset:
				wantChanged = 0
			case sse.StructuralFileChanged:
				wantResets = 0
			}
			if len(resets) != wantResets || len(changed) != wantChanged {
				t.Fatalf("%d structural resets, %d detailed file_changed; want %d and %d", len(resets), len(changed), wantResets, wantChanged)
			}
			for i, r := range resets {
				if r.Op != ops[i].op {
					t.Errorf("reset %d: op %s, want %s", i, r.Op, ops[i].op)
				}
				if mode == sse.StructuralDual && changed[i].Seq != r.Seq {
					t.Errorf("op %s: file_changed at seq %d, reset at %d: one row, one seq", r.Op, changed[i].Seq, r.Seq)
				}
			}
			for i, pl := range payloads {
				if pl != ops[i] {
					t.Errorf("payload %d: %+v, want %+v", i, pl, ops[i])
				}
			}
		})
	}
}
