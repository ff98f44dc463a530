package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/internal/eventlogdtest"
)

// TestStreamReadsFairAcrossTenants: one tenant opens 150 event streams on a pod and writes, so every
// write wakes 150 reads on the pool's stream handle (8 connections); a second tenant with one
// stream writes and reads beside it. With the per-tenant read gate (the default, 2 reads per
// tenant) the noisy tenant's reads queue on its own gate: not one read of any tenant waits for a
// connection of the handle, and the quiet tenant's reads never queue at all. The control runs the
// same with the gate off (--db-stream-tenant-max -1): the noisy tenant's reads take every connection
// and reads queue on the handle, so the assertion can fail. Counts, not times, are asserted; the
// quiet tenant's delivery latency under the noise beside its own no-noise baseline is logged, per row.
func TestStreamReadsFairAcrossTenants(t *testing.T) {
	if testing.Short() {
		t.Skip("builds eventlogd and runs it against a private MariaDB")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "eventlogd")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		name           string
		flags          []string
		wantPoolWaits  bool // reads waited for a connection of the stream handle
		wantNoisyQueue bool // the noisy tenant's reads queued on its own gate
	}{
		{name: "per-tenant gate (default)", wantNoisyQueue: true},
		{name: "no per-tenant bound (control)", flags: []string{"--db-stream-tenant-max", "-1"}, wantPoolWaits: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const pool = "shared_pool"
			svc := eventlogdtest.StartService(t, bin, []eventlogdtest.Pool{{ID: pool, Role: "shared"}},
				append([]string{"--pod", "fair", "--db-max-open", "32", "--db-stream-max-open", "8"}, tc.flags...)...)
			url := svc.URL
			f := &fairness{url: url, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}}
			defer f.client.CloseIdleConnections()
			noisy, quiet := f.provision(t), f.provision(t)
			streamCtx, stopStreams := context.WithCancel(ctx)
			var wg sync.WaitGroup
			defer func() { stopStreams(); wg.Wait() }()
			quietEvents := f.stream(t, streamCtx, &wg, quiet)
			baseline := f.latencies(t, quiet, quietEvents, "base", 10)

			const streams = 150
			for range streams {
				f.stream(t, streamCtx, &wg, noisy)
			}
			// The noise: writes of the noisy tenant, each waking its 150 streams, while the quiet
			// tenant writes and reads.
			noiseDone := make(chan struct{})
			go func() {
				defer close(noiseDone)
				for i := 0; i < 60 && ctx.Err() == nil; i++ {
					f.write(t, noisy, fmt.Sprintf("/n/%d", i))
					time.Sleep(10 * time.Millisecond) // paces the noisy load
				}
			}()
			noisyLat := f.latencies(t, quiet, quietEvents, "noise", 10)
			<-noiseDone

			m := f.metrics(t)
			poolWaits := m[`eventlogd_db_stream_waits_total{pool="`+pool+`"}`]
			noisyQueued := m[`eventlogd_stream_reads_queued_total{tenant_id="`+noisy.id+`"}`]
			quietQueued := m[`eventlogd_stream_reads_queued_total{tenant_id="`+quiet.id+`"}`]
			t.Logf("%s: stream-handle waits %v, noisy tenant's reads queued on its gate %v, quiet tenant's %v; quiet tenant's delivery p50 %v under noise vs %v without (ratio %.1f), max %v vs %v",
				tc.name, poolWaits, noisyQueued, quietQueued, median(noisyLat), median(baseline),
				float64(median(noisyLat))/float64(max(median(baseline), time.Microsecond)), slices.Max(noisyLat), slices.Max(baseline))
			if got := poolWaits > 0; got != tc.wantPoolWaits {
				t.Errorf("reads that waited for a connection of the stream handle: %v, want > 0: %v", poolWaits, tc.wantPoolWaits)
			}
			if got := noisyQueued > 0; got != tc.wantNoisyQueue {
				t.Errorf("noisy tenant's reads queued on its own gate: %v, want > 0: %v", noisyQueued, tc.wantNoisyQueue)
			}
			if quietQueued != 0 {
				t.Errorf("the quiet tenant's reads queued %v times, want never (it reads one stream at a time)", quietQueued)
			}
		})
	}
}

type fairTenant struct{ id, key string }

type fairness struct {
	url    string
	client *http.Client
}

func (f *fairness) provision(t *testing.T) fairTenant {
	t.Helper()
	req, _ := http.NewRequest("POST", f.url+"/v1/provision", strings.NewReader("{}"))
	req.Header.Set("X-Provision-Token", eventlogdtest.ProvisionToken)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		TenantID string `json:"tenant_id"`
		APIKey   string `json:"api_key"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || p.APIKey == "" {
		t.Fatalf("provision: HTTP %d %v", resp.StatusCode, err)
	}
	return fairTenant{id: p.TenantID, key: p.APIKey}
}

func (f *fairness) write(t *testing.T, tn fairTenant, path string) {
	req, _ := http.NewRequest(http.MethodPut, f.url+"/v1/fs"+path, strings.NewReader("x"))
	req.Header.Set("Authorization", "Bearer "+tn.key)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("PUT %s: HTTP %d", path, resp.StatusCode)
	}
}

// stream subscribes tn from the start and sends the path of every file_changed it delivers; it
// returns once the stream sent its first heartbeat: its initial_sync is behind it, so a write made
// after it is delivered as a frame (one committed before the stream read the tenant's head would
// fall below initial_sync, where a client resyncs instead). Like a real client it resumes with its
// cursor (the highest seq of any frame) when the server ends the stream (a read that failed under
// load ends it by design), so a delivery is never waited for on a dead connection.
func (f *fairness) stream(t *testing.T, ctx context.Context, wg *sync.WaitGroup, tn fairTenant) <-chan string {
	t.Helper()
	resp, err := f.subscribe(ctx, tn, 0)
	if err != nil {
		t.Fatal(err)
	}
	paths := make(chan string, 1024)
	current := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		cursor := int64(0)
		for {
			cursor = readFrames(resp.Body, cursor, paths, current)
			resp.Body.Close()
			for {
				if ctx.Err() != nil {
					return
				}
				time.Sleep(50 * time.Millisecond) // paces the reconnects (a subscriber's backoff)
				if resp, err = f.subscribe(ctx, tn, cursor); err == nil {
					break
				}
			}
		}
	}()
	select {
	case <-current:
	case <-time.After(time.Minute):
		t.Fatal("the stream sent no heartbeat within a minute")
	}
	return paths
}

// subscribe opens tn's event stream after since.
func (f *fairness) subscribe(ctx context.Context, tn fairTenant, since int64) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/v1/events?since=%d", f.url, since), nil)
	req.Header.Set("Authorization", "Bearer "+tn.key)
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("stream: HTTP %d", resp.StatusCode)
	}
	return resp, nil
}

// readFrames reads one stream until it ends, sends each file_changed path to paths (dropping it
// when nobody reads), closes current at the first heartbeat of the stream's life (when still open),
// and returns the cursor: the highest seq of any frame, from cursor on.
func readFrames(body io.Reader, cursor int64, paths chan<- string, current chan struct{}) int64 {
	sc := bufio.NewScanner(body)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		v, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var d struct {
			Seq  int64
			Path string
		}
		if json.Unmarshal([]byte(v), &d) != nil {
			continue
		}
		cursor = max(cursor, d.Seq)
		if event == "heartbeat" {
			select {
			case <-current:
			default:
				close(current)
			}
		}
		if event == "file_changed" {
			select {
			case paths <- d.Path:
			default: // nobody reads the noisy streams' paths
			}
		}
	}
	return cursor
}

// latencies writes n files of tn one after the other and returns, for each, the time from the write
// until tn's stream delivered it.
func (f *fairness) latencies(t *testing.T, tn fairTenant, events <-chan string, prefix string, n int) []time.Duration {
	t.Helper()
	var out []time.Duration
	for i := range n {
		path := fmt.Sprintf("/q/%s/%d", prefix, i)
		start := time.Now()
		f.write(t, tn, path)
		deadline := time.After(time.Minute)
		for got := ""; got != path; {
			select {
			case got = <-events:
			case <-deadline:
				t.Fatalf("%s not delivered to its tenant's stream within a minute", path)
			}
		}
		out = append(out, time.Since(start))
		time.Sleep(20 * time.Millisecond) // paces the quiet tenant's writes
	}
	return out
}

var sample = regexp.MustCompile(`(?m)^(eventlogd_(?:db_stream_waits_total|stream_reads_queued_total)\{[^}]*\}) (\S+)$`)

// metrics reads the pod's stream-read counters: series -> value.
func (f *fairness) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	resp, err := f.client.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for _, m := range sample.FindAllStringSubmatch(string(b), -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		out[m[1]] = v
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
