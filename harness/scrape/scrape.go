// Package scrape samples each pod's Prometheus /metrics on a fixed period and writes the families the
// verifier needs (plus any the scenario names) as ledger `metric` records.
package scrape

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/ledger"
)

// Families are the metric families the verifier reads (drop counters explain losses; the others are
// context for a report).
var Families = []string{
	"drive9_sse_event_retry_dropped_total",
	"drive9_sse_resets_sent_total",
	"drive9_sse_event_retry_buffer_depth",
	"drive9_tenant_outbox_backlog_oldest_age_seconds",
}

// Target is one pod to scrape.
type Target struct {
	Pod string
	URL string // base URL; Path is appended
	// Path is where the pod serves its metrics (default /metrics; a pod profile's metrics field).
	Path string
}

// Scraper samples targets every Period.
type Scraper struct {
	Targets  func() []Target
	Names    []string // families to keep (Families plus the scenario's)
	Period   time.Duration
	Start    time.Time
	Sink     ledger.Sink
	Client   *http.Client
	Failures atomic.Int64 // scrapes that failed (a pod down is an ordinary cause)
	Samples  atomic.Int64

	mu     sync.Mutex
	latest map[string]map[string]float64 // pod -> family -> sum over its series, from the last good scrape
	when   map[string]time.Time          // pod -> time of its last good scrape
}

// Latest returns the sum of family over every series of pod's most recent successful scrape and when
// that scrape happened; ok is false when the pod has not been scraped or lacks the family.
func (s *Scraper) Latest(pod, family string) (v float64, at time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok = s.latest[pod][family]
	return v, s.when[pod], ok
}

// Run scrapes until ctx is done, once immediately and then every Period.
func (s *Scraper) Run(ctx context.Context) {
	if s.Period <= 0 {
		s.Period = time.Second
	}
	if s.Client == nil {
		s.Client = &http.Client{Timeout: s.Period}
	}
	keep := map[string]bool{}
	for _, n := range s.Names {
		keep[n] = true
	}
	s.Once(ctx, keep)
	sleep.Every(ctx, s.Period, func() { s.Once(ctx, keep) })
}

// Once scrapes every target one time.
func (s *Scraper) Once(ctx context.Context, keep map[string]bool) {
	for _, t := range s.Targets() {
		if err := s.one(ctx, t, keep); err != nil {
			s.Failures.Add(1)
		}
	}
}

func (s *Scraper) one(ctx context.Context, t Target, keep map[string]bool) error {
	path := t.Path
	if path == "" {
		path = "/metrics"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", t.Pod, resp.StatusCode)
	}
	at := time.Since(s.Start).Nanoseconds()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Pod, err)
	}
	sums := map[string]float64{}
	defer func() {
		s.mu.Lock()
		if s.latest == nil {
			s.latest, s.when = map[string]map[string]float64{}, map[string]time.Time{}
		}
		s.latest[t.Pod], s.when[t.Pod] = sums, time.Now()
		s.mu.Unlock()
	}()
	names := make([]string, 0, len(fams))
	for n := range fams {
		if keep[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		typ := typeName(fams[n].GetType())
		for _, m := range fams[n].GetMetric() {
			v, ok := value(fams[n].GetType(), m)
			if !ok {
				continue
			}
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			sums[n] += v
			s.Samples.Add(1)
			_ = s.Sink.Write(&ledger.Record{K: ledger.KindMetric, Pod: t.Pod, T: at, Name: n, Labels: labels, Value: v, MetricType: typ})
		}
	}
	return nil
}

// typeName is the family's TYPE as the ledger records it, so that the verifier summarises a gauge
// by its max and last value and a counter by its increase.
func typeName(t dto.MetricType) string {
	switch t {
	case dto.MetricType_COUNTER:
		return "counter"
	case dto.MetricType_GAUGE:
		return "gauge"
	}
	return "untyped"
}

// value reads a counter, gauge or untyped sample; histograms and summaries are not recorded.
func value(t dto.MetricType, m *dto.Metric) (float64, bool) {
	switch t {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue(), true
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), true
	case dto.MetricType_UNTYPED:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}
