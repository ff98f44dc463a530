package consumer

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// table serves the pull endpoint from fixed rows, the way eventlogd pages them, with two ways to
// go wrong on purpose: hidden rows are not visible to the first poll that would return them (a
// late commit: the page passes them, and they never come back since the checkpoint is past them),
// and rows at or below swept were deleted by retention (410 for a since below the mark).
type table struct {
	mu     sync.Mutex
	rows   []int64 // seqs, ascending; the path of seq s is /r/<s>
	hidden map[int64]bool
	swept  int64
}

func (tb *table) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if since < tb.swept {
		w.WriteHeader(http.StatusGone)
		_ = json.NewEncoder(w).Encode(map[string]any{"oldest_seq": tb.swept + 1, "next_since": tb.swept})
		return
	}
	type ev struct {
		Seq  int64  `json:"seq"`
		Path string `json:"path"`
		Op   string `json:"op"`
	}
	evs := []ev{}
	more := false
	for _, s := range tb.rows {
		if s <= since {
			continue
		}
		if len(evs) == limit {
			more = true
			break
		}
		if tb.hidden[s] {
			delete(tb.hidden, s) // visible from now on, to a reader that is already past it
			continue
		}
		evs = append(evs, ev{s, "/r/" + strconv.FormatInt(s, 10), "write"})
	}
	next := since
	if len(evs) > 0 {
		next = evs[len(evs)-1].Seq
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"events": evs, "next_since": next, "has_more": more})
}

// TestVerifierJudgesPullConsumers runs the real pull consumer against a table, writes the ledger
// of that run (mutations, the consumer's own records, the audit) and verifies it: a clean run
// passes, a late commit the checkpoint passed is a skip with its witness, and a 410 after a sweep
// is a seq_too_old reset that is neither spurious nor a failure.
func TestVerifierJudgesPullConsumers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		hidden      []int64
		swept       int64
		verdict     string
		skipped     int64
		covered     int64
		skippedSeq  float64
		resetReason string
	}{
		{name: "clean", verdict: verifier.VerdictPass},
		{name: "late commit skipped", hidden: []int64{3}, verdict: verifier.VerdictFail, skipped: 1, skippedSeq: 3},
		// The audit no longer holds swept rows, but the fast peer received them: by the peers'
		// evidence they persisted and are expected of c1, whose 410 (a seq_too_old that is not
		// spurious: rows below its seq were swept) covers them.
		{name: "swept rows", swept: 2, verdict: verifier.VerdictPass, covered: 2, resetReason: "seq_too_old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := &table{rows: []int64{1, 2, 3, 4, 5}, hidden: map[int64]bool{}, swept: tc.swept}
			for _, h := range tc.hidden {
				tb.hidden[h] = true
			}
			srv := httptest.NewServer(tb)
			defer srv.Close()
			cfg := pullCfg()
			c, mem := run(t, []Endpoint{{"p1", srv.URL}}, cfg, func(c *Consumer) bool { return c.Cursor() == 5 })

			var buf bytes.Buffer
			w := ledger.NewWriter(&buf)
			write := func(r *ledger.Record) {
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			write(&ledger.Record{K: ledger.KindRun, V: 1, RunID: "r", Scenario: "pull", Seed: 1, StartUnixNs: 1,
				Tenants: []ledger.Tenant{{ID: "ten", Mode: "dedicated"}}, Pods: []string{"p1"}, Target: "eventlogd"})
			for _, s := range tb.rows {
				write(&ledger.Record{K: ledger.KindMut, MID: "m" + strconv.FormatInt(s, 10), Tenant: "ten", Op: "write",
					Path: "/r/" + strconv.FormatInt(s, 10), IntendedT: 1, T: 1, DoneT: 2, Res: ledger.ResOK, Pod: "p1"})
			}
			// A second consumer that read every row before any sweep: what makes swept rows
			// persisted (delivered once) rather than lost, as a fast reader does in a real run.
			write(&ledger.Record{K: ledger.KindConn, Consumer: "fast", Tenant: "ten", Conn: "f.1", T: 1, Phase: "open", Pod: "p1"})
			for _, s := range tb.rows {
				write(&ledger.Record{K: ledger.KindEv, Consumer: "fast", Tenant: "ten", Conn: "f.1", T: 3, Seq: s, Op: "write",
					Path: "/r/" + strconv.FormatInt(s, 10), Pod: "p1"})
			}
			for _, r := range mem.Records() {
				write(&r)
			}
			for _, s := range tb.rows {
				if s > tc.swept {
					write(&ledger.Record{K: ledger.KindPersisted, Tenant: "ten", Seq: s, Op: "write", Path: "/r/" + strconv.FormatInt(s, 10)})
				}
			}
			write(c.Summary())
			write(&ledger.Record{K: ledger.KindConsumer, Consumer: "fast", Tenant: "ten", FromT: 1, ToT: 4, FinalCursor: 5, Durable: true})
			write(&ledger.Record{K: ledger.KindEnd, T: c.Summary().ToT + 1, Drained: true})
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := ledger.NewReader("pull.jsonl", bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			s, err := verifier.Verify(r, verifier.Options{})
			if err != nil {
				t.Fatalf("verify: %v\n%s", err, buf.String())
			}
			if s.Verdict != tc.verdict || s.Skipped != tc.skipped || s.ResetCovered != tc.covered || s.Undelivered != 0 || s.SpuriousResets != 0 {
				t.Fatalf("verdict %s skipped %d reset_covered %d undelivered %d failed %v; want %s, %d, %d\n%s",
					s.Verdict, s.Skipped, s.ResetCovered, s.Undelivered, s.FailedChecks, tc.verdict, tc.skipped, tc.covered, buf.String())
			}
			if tc.skipped > 0 {
				wit, _ := json.Marshal(s.Witnesses["skipped"][0])
				var got map[string]any
				_ = json.Unmarshal(wit, &got)
				if got["seq"] != tc.skippedSeq || got["frame_kind"] != "ev" || got["consumer"] != "c1" {
					t.Fatalf("skipped witness %s, want seq %v passed by an ev of c1", wit, tc.skippedSeq)
				}
			}
			if tc.resetReason != "" && s.ResetsByReason[tc.resetReason] != 1 {
				t.Fatalf("resets by reason %v, want one %s", s.ResetsByReason, tc.resetReason)
			}
		})
	}
}
