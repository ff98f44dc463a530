package load

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/ledger"
)

// TestDriverSendsBatches: a batch op is one POST /v1/fs:batch-write of batch_size files; the
// ledger has one mut per file, all sharing the batch id and the request's answer; a refused batch
// is refused for every file.
func TestDriverSendsBatches(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(map[bool]string{false: "acked", true: "refused"}[refuse], func(t *testing.T) {
			var mu sync.Mutex
			got := map[string][]string{} // batch -> paths the server received
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/fs:batch-write" || r.Method != "POST" || r.Header.Get("Authorization") != "Bearer k1" {
					w.WriteHeader(404)
					return
				}
				var b struct {
					Batch string `json:"batch"`
					Files []struct{ Path, Content string }
				}
				if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
					w.WriteHeader(400)
					return
				}
				mu.Lock()
				for _, f := range b.Files {
					got[b.Batch] = append(got[b.Batch], f.Path)
				}
				mu.Unlock()
				if refuse {
					w.WriteHeader(503)
					return
				}
				_, _ = w.Write([]byte(`{"status":"ok"}`))
			}))
			defer srv.Close()
			s := &ledger.Memory{}
			d := NewDriver(Config{RunID: "r1", Seed: 3, Start: time.Now(), Sink: s,
				Endpoints: func() []Endpoint { return []Endpoint{{Name: "pod-1", URL: srv.URL}} }})
			l := scenario.Load{Executor: "constant-arrival-rate", Rate: 100, TimeUnit: dur(time.Second), Duration: dur(100 * time.Millisecond),
				MaxInFlight: 64, Timeout: dur(5 * time.Second), Mix: map[string]int{"batch": 1}, BatchSize: 3}
			d.Run(context.Background(), time.Now(), []Block{{Index: 0, Load: l, Tenants: []Tenant{{ID: "ten1", Key: "k1", Index: 1}}}})
			byBatch := map[string][]ledger.Record{}
			for _, r := range s.Records() {
				if r.K == ledger.KindMut {
					byBatch[r.Batch] = append(byBatch[r.Batch], r)
				}
			}
			if len(byBatch) != 10 || len(got) != 10 {
				t.Fatalf("%d batches in the ledger, %d at the server; want 10", len(byBatch), len(got))
			}
			wantRes := map[bool]string{false: ledger.ResOK, true: ledger.ResErr}[refuse]
			for id, recs := range byBatch {
				if id == "" || len(recs) != 3 || len(got[id]) != 3 {
					t.Fatalf("batch %q: %d records, %d paths at the server; want 3 and 3", id, len(recs), len(got[id]))
				}
				for i, r := range recs {
					if r.Op != "write" || r.Res != wantRes || r.Path != got[id][i] || r.Path != "/seqgate/r1/ten1/"+r.MID ||
						r.MID != id+"."+string(rune('0'+i)) || r.T != recs[0].T || r.DoneT != recs[0].DoneT {
						t.Fatalf("batch %s file %d: %+v (server paths %v)", id, i, r, got[id])
					}
				}
			}
			if n := d.Stats.Sent.Load(); n != 10 {
				t.Fatalf("sent %d requests, want 10 (one per batch)", n)
			}
		})
	}
}
