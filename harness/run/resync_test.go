package run

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/verifier"
)

// resyncScenario: one tenant written at 20/s; one consumer from the start and one that subscribes
// 3 s into the load, so its initial_sync is at a head of some 60 rows, all of which its listing
// must show (it never receives them on the stream).
const resyncScenario = `name: e2e-resync
seed: 7
duration: 6s
drain_timeout: 20s
tenants:
  - {group: hot, count: 1}
pods: {count: 1}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 20, mix: {write: 1}}
consumers:
  - {count: 1}
  - {count: 1, start: 3s}
`

// dropFirstListed is a transport that removes the first file entry from the first listing that
// has one: what a listing that lags behind the events looks like to the consumer.
type dropFirstListed struct {
	next    http.RoundTripper
	mu      sync.Mutex
	dropped string
}

func (d *dropFirstListed) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := d.next.RoundTrip(req)
	if err != nil || req.URL.Query().Get("list") != "1" || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var page map[string]any
	if err := json.Unmarshal(b, &page); err != nil {
		return nil, err
	}
	d.mu.Lock()
	if entries, _ := page["entries"].([]any); d.dropped == "" {
		for i, e := range entries {
			if m, _ := e.(map[string]any); m["isDir"] == false {
				d.dropped = strings.TrimPrefix(req.URL.Path, "/v1/fs") + m["name"].(string)
				page["entries"] = append(entries[:i:i], entries[i+1:]...)
				break
			}
		}
	}
	d.mu.Unlock()
	b, _ = json.Marshal(page)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// TestE2EResync: against real eventlogd pods, the late consumer's listing after its initial_sync
// proves every row it passed (the run passes, with the cost in result.json); when its listing
// lacks one file, the run fails on resync_missed with a witness naming the reset, the listing and
// the row.
func TestE2EResync(t *testing.T) {
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name string
		lie  bool
	}{{"listing shows every row", false}, {"listing lacks a row", true}} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.Parse("e2e-resync.yaml", []byte(resyncScenario))
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Scenario: sc, Dir: t.TempDir(), Eventlogd: eventlogdBin, Log: testWriter{t}, Progress: testWriter{t}}
			var tap *dropFirstListed
			if tc.lie {
				o.consumerTransport = func(rt http.RoundTripper) http.RoundTripper {
					tap = &dropFirstListed{next: rt}
					return tap
				}
			}
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			s := verify(t, res.Ledger)
			noChildren(t)
			t.Logf("figures: resyncs %+v, resync_proven %d, resync_missed %d, listing %s", s.Resyncs, s.ResyncProven, s.ResyncMissed, res.Listing)
			if !s.Run.Ended || s.Resyncs.Listings < 2 || s.Resyncs.Failed != 0 || res.Resyncs != s.Resyncs.Listings || res.Listed != s.Resyncs.Entries {
				t.Fatalf("resyncs %+v, result resyncs %d listed %d: want a listing per consumer, all ok, the same in result.json", s.Resyncs, res.Resyncs, res.Listed)
			}
			if s.ResyncProven < 20 {
				t.Fatalf("resync_proven %d: the late consumer's initial_sync should have passed some 60 rows", s.ResyncProven)
			}
			if !tc.lie {
				if s.Verdict != verifier.VerdictPass || s.ResyncMissed != 0 || s.ResyncUnproven != 0 || s.ResetCovered != s.ResyncProven {
					t.Fatalf("verdict %s (failed %v, inconclusive %v), proven %d missed %d unproven %d covered %d",
						s.Verdict, s.FailedChecks, s.InconclusiveBecause, s.ResyncProven, s.ResyncMissed, s.ResyncUnproven, s.ResetCovered)
				}
				return
			}
			if s.Verdict != verifier.VerdictFail || s.ResyncMissed != 1 || strings.Join(s.FailedChecks, ",") != verifier.CheckResyncMissed {
				t.Fatalf("verdict %s failed %v, resync_missed %d: want fail on resync_missed alone", s.Verdict, s.FailedChecks, s.ResyncMissed)
			}
			b, _ := json.Marshal(s.Witnesses["resync_missed"][0])
			var w map[string]any
			_ = json.Unmarshal(b, &w)
			if w["path"] != tap.dropped || w["reset_reason"] != "initial_sync" || w["listing_entries"].(float64) < 20 || w["reset_seq"].(float64) < w["seq"].(float64) ||
				w["listing_ms"].(float64) < w["listing_start_ms"].(float64) || w["ack_ms"] == nil {
				t.Errorf("witness %s, want the dropped row %s under the initial_sync and its listing", b, tap.dropped)
			}
		})
	}
}
