package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/seqgate/seqgate/ledger"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestScrapeKeepsNamedFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	drops := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drive9_sse_event_retry_dropped_total", Help: "h"}, []string{"tenant_id", "reason"})
	depth := prometheus.NewGauge(prometheus.GaugeOpts{Name: "drive9_sse_event_retry_buffer_depth", Help: "h"})
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "unrelated_total", Help: "h"})
	hist := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "wanted_seconds", Help: "h"})
	reg.MustRegister(drops, depth, other, hist)
	drops.WithLabelValues("t1", "tenant_cap").Add(3)
	depth.Set(7)
	other.Inc()
	hist.Observe(1)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()

	s := &ledger.Memory{}
	sc := &Scraper{Targets: func() []Target { return []Target{{Pod: "pod-1", URL: srv.URL}, {Pod: "pod-2", URL: dead.URL}} },
		Start: time.Now(), Sink: s, Client: &http.Client{Timeout: time.Second}}
	keep := map[string]bool{}
	for _, n := range append(Families, "wanted_seconds") {
		keep[n] = true
	}
	sc.Once(context.Background(), keep)
	got := map[string]ledger.Record{}
	for _, r := range s.Records() {
		got[r.Name] = r
	}
	tests := []struct {
		name  string
		want  float64
		label string
		typ   string // the family's TYPE, recorded so the verifier can tell gauges from counters
	}{
		{"drive9_sse_event_retry_dropped_total", 3, "tenant_cap", "counter"},
		{"drive9_sse_event_retry_buffer_depth", 7, "", "gauge"},
	}
	for _, tc := range tests {
		r, ok := got[tc.name]
		if !ok || r.Value != tc.want || r.Pod != "pod-1" || r.Labels["reason"] != tc.label || r.MetricType != tc.typ {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
	if _, ok := got["unrelated_total"]; ok {
		t.Error("an unnamed family was recorded")
	}
	if _, ok := got["wanted_seconds"]; ok {
		t.Error("a histogram was recorded as a sample")
	}
	if v, _, ok := sc.Latest("pod-1", "drive9_sse_event_retry_dropped_total"); !ok || v != 3 {
		t.Errorf("Latest = %v, %v; want 3", v, ok)
	}
	if _, _, ok := sc.Latest("pod-2", "drive9_sse_event_retry_buffer_depth"); ok {
		t.Error("Latest reports a value for a pod that was never scraped")
	}
	if len(s.Records()) != 2 || sc.Failures.Load() != 1 {
		t.Errorf("%d records, %d failures; want 2 and 1 (the dead pod)", len(s.Records()), sc.Failures.Load())
	}
}

// A pod profile's metrics path is where the scraper asks; the default path on the same pod finds nothing.
func TestScrapePath(t *testing.T) {
	reg := prometheus.NewRegistry()
	depth := prometheus.NewGauge(prometheus.GaugeOpts{Name: "drive9_sse_event_retry_buffer_depth", Help: "h"})
	reg.MustRegister(depth)
	depth.Set(2)
	mux := http.NewServeMux()
	mux.Handle("/custom/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, c := range []struct {
		path     string
		records  int
		failures int64
	}{{"/custom/metrics", 1, 0}, {"", 0, 1}} {
		s := &ledger.Memory{}
		sc := &Scraper{Targets: func() []Target { return []Target{{Pod: "pod-1", URL: srv.URL, Path: c.path}} },
			Start: time.Now(), Sink: s, Client: &http.Client{Timeout: time.Second}}
		sc.Once(context.Background(), map[string]bool{"drive9_sse_event_retry_buffer_depth": true})
		if len(s.Records()) != c.records || sc.Failures.Load() != c.failures {
			t.Errorf("path %q: %d records, %d failures; want %d and %d", c.path, len(s.Records()), sc.Failures.Load(), c.records, c.failures)
		}
	}
}
