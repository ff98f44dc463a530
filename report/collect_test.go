package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"testing"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

func TestTimelineStaysBoundedAndKeepsCounts(t *testing.T) {
	for _, span := range []int64{1e9, 60e9, 3600e9, 86400e9} {
		tl := newTimeline(40)
		var want int64
		for x := int64(0); x < span; x += span / 5000 {
			tl.at(x).n[cDelivered]++
			want++
		}
		if len(tl.b) > 40 {
			t.Errorf("span %d s: %d buckets, bound 40", span/1e9, len(tl.b))
		}
		var got int64
		for i := range tl.b {
			got += tl.b[i].n[cDelivered]
		}
		if got != want {
			t.Errorf("span %d s: counted %d after coarsening, added %d", span/1e9, got, want)
		}
		if last := int64(len(tl.b)) * tl.width; last < span-span/5000 {
			t.Errorf("span %d s: the buckets end at %d ns", span/1e9, last)
		}
	}
}

func TestTimelineMergesMetricsByKind(t *testing.T) {
	tl := newTimeline(2)
	tl.sumFam = []bool{false, true}
	tl.at(0).metric(0, 5, false)
	tl.at(0).metric(1, 2, true)
	tl.at(initialWidth).metric(0, 3, false)
	tl.at(initialWidth).metric(1, 4, true)
	tl.at(2 * initialWidth) // forces one coarsening: the first two buckets merge
	if g, c := tl.b[0].metrics[0], tl.b[0].metrics[1]; g != 5 || c != 6 {
		t.Errorf("merged gauge %g (want max 5), counter %g (want sum 6)", g, c)
	}
}

func TestLatHistQuantiles(t *testing.T) {
	var h latHist
	for i := 1; i <= 1000; i++ {
		h.add(float64(i) * 1000) // 1..1000 ms in µs
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 500e3}, {0.99, 990e3}, {1, 1000e3}} {
		got := h.quantile(c.q)
		if got < c.want || got > c.want*1.1 {
			t.Errorf("q%g = %g µs, want within one bin above %g", c.q, got, c.want)
		}
	}
	var empty latHist
	if empty.quantile(0.5) != 0 {
		t.Error("empty histogram has a quantile")
	}
}

// rec is a terse record builder for collector tests.
func recs(rs ...ledger.Record) []*ledger.Record {
	out := make([]*ledger.Record, len(rs))
	for i := range rs {
		out[i] = &rs[i]
	}
	return out
}

func collect(rs []*ledger.Record) *Data {
	c := NewCollector()
	for _, r := range rs {
		c.Observe(r)
	}
	return c.Finish()
}

// sliceSource hands records to the verifier and to a collector, as BuildFrom's tee does.
type sliceSource struct {
	rs []*ledger.Record
	c  *Collector
}

func (s *sliceSource) Next() (*ledger.Record, error) {
	if len(s.rs) == 0 {
		return nil, io.EOF
	}
	r := s.rs[0]
	s.rs = s.rs[1:]
	s.c.Observe(r)
	return r, nil
}

// collectVerified collects rs and puts the verifier's anomaly timeline of rs on its axis.
func collectVerified(t *testing.T, rs []*ledger.Record) *Data {
	t.Helper()
	src := &sliceSource{rs: rs, c: NewCollector()}
	s, err := verifier.VerifySource(src, verifier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := src.c.Finish()
	d.AddTimeline(s.Timeline)
	return d
}

// counts are the plotted anomalies.
type counts struct{ Lost, Skipped, Undelivered int64 }

func plotted(d *Data) counts {
	return counts{total(d, cLost), total(d, cSkipped), total(d, cUndelivered)}
}

func TestCollectorCountsAndControls(t *testing.T) {
	run := ledger.Record{K: ledger.KindRun, RunID: "r", StartUnixNs: 1e18, Tenants: []ledger.Tenant{{ID: "a"}}}
	conn := func(c string) ledger.Record {
		return ledger.Record{K: ledger.KindConn, Consumer: c, Tenant: "a", Conn: c + "#1", Phase: "open", T: 1}
	}
	mut := func(p string, res string, done int64) ledger.Record {
		return ledger.Record{K: ledger.KindMut, MID: p, Tenant: "a", Op: "write", Path: p, IntendedT: done - 2e6, T: done - 1e6, DoneT: done, Res: res}
	}
	ev := func(c, p string, seq, t int64) ledger.Record {
		return ledger.Record{K: ledger.KindEv, Consumer: c, Tenant: "a", Conn: c + "#1", Path: p, Seq: seq, T: t, Op: "write"}
	}
	pers := func(p string, seq int64) ledger.Record {
		return ledger.Record{K: ledger.KindPersisted, Tenant: "a", Path: p, Seq: seq, Op: "write"}
	}
	cons := func(c string, final int64) ledger.Record {
		return ledger.Record{K: ledger.KindConsumer, Consumer: c, Tenant: "a", FinalCursor: final, Durable: true}
	}
	end := ledger.Record{K: ledger.KindEnd, T: 5e9, Drained: true}
	cases := []struct {
		name  string
		rs    []*ledger.Record
		want  counts
		lat   int64
		check func(t *testing.T, d *Data)
	}{
		{name: "clean", rs: recs(run, conn("c1"), conn("c2"), mut("/1", "ok", 1e9), ev("c1", "/1", 1, 1.01e9), ev("c2", "/1", 1, 1.02e9),
			pers("/1", 1), cons("c1", 1), cons("c2", 1), end), lat: 2},
		{name: "lost", rs: recs(run, conn("c1"), mut("/1", "ok", 1e9), cons("c1", 0), end), want: counts{Lost: 1},
			check: func(t *testing.T, d *Data) {
				if s, e := total(d, cReqStart), total(d, cReqEnd); s != 1 || e != 1 {
					t.Errorf("requests started %d ended %d, want 1 and 1", s, e)
				}
				if d.tl.at(999e6).n[cReqStart] != 1 || d.tl.at(1e9).n[cReqEnd] != 1 {
					t.Error("the request is not in flight from its send to its answer")
				}
			}},
		{name: "timeout is not lost", rs: recs(run, conn("c1"), mut("/1", "timeout", 1e9), cons("c1", 0), end)},
		{name: "lost needs an end record", rs: recs(run, conn("c1"), mut("/1", "ok", 1e9), cons("c1", 0))},
		{name: "skipped and undelivered", rs: recs(run, conn("c1"), conn("c2"),
			mut("/1", "ok", 1e9), mut("/2", "ok", 2e9), ev("c1", "/1", 1, 1.1e9), ev("c1", "/2", 2, 2.1e9), ev("c2", "/2", 2, 2.2e9),
			pers("/1", 1), pers("/2", 2), mut("/3", "ok", 3e9), ev("c1", "/3", 3, 3.1e9), pers("/3", 3), cons("c1", 3), cons("c2", 2), end),
			want: counts{Skipped: 1, Undelivered: 1}, lat: 4},
		{name: "reset-covered is not skipped", rs: recs(run, conn("c1"), conn("c2"), mut("/1", "ok", 1e9), ev("c1", "/1", 1, 1.1e9),
			ledger.Record{K: ledger.KindReset, Consumer: "c2", Tenant: "a", Reason: "seq_too_old", Seq: 1, T: 2e9},
			pers("/1", 1), cons("c1", 1), cons("c2", 1), end), lat: 1},
		{name: "delivered before the ack has latency 0", rs: recs(run, conn("c1"), ev("c1", "/1", 1, 0.9e9), mut("/1", "ok", 1e9), pers("/1", 1), cons("c1", 1), end),
			lat: 1, check: func(t *testing.T, d *Data) {
				if d.Lat.maxUs != 0 {
					t.Errorf("latency max %g µs, want 0", d.Lat.maxUs)
				}
			}},
		{name: "duplicate after full delivery is no skip", rs: recs(run, conn("c1"), conn("c2"), mut("/1", "ok", 1e9), ev("c1", "/1", 1, 1.1e9), ev("c2", "/1", 1, 1.2e9),
			ev("c2", "/1", 1, 1.3e9), pers("/1", 1), cons("c1", 1), cons("c2", 1), end), lat: 2},
		{name: "unknown kinds are skipped, drop is counted", rs: recs(run, ledger.Record{K: "audit", T: 4e9}, ledger.Record{K: "drop", Tenant: "a", IntendedT: 2e9},
			ledger.Record{K: "zzz", T: 3e9}, end), check: func(t *testing.T, d *Data) {
			if total(d, cDropped) != 1 || total(d, cOffered) != 1 {
				t.Errorf("dropped %d offered %d, want 1 and 1", total(d, cDropped), total(d, cOffered))
			}
		}},
		{name: "faults and reconnects", rs: recs(run, conn("c1"),
			ledger.Record{K: ledger.KindFault, ID: "f1", Kind: "pod_crash", Target: "pod-1", Phase: "start", T: 1e9},
			ledger.Record{K: ledger.KindConn, Consumer: "c1", Tenant: "a", Conn: "c1#1", Phase: "close", T: 1.5e9},
			ledger.Record{K: ledger.KindConn, Consumer: "c1", Tenant: "a", Conn: "c1#2", Phase: "open", T: 1.6e9},
			ledger.Record{K: ledger.KindFault, ID: "f1", Phase: "stop", T: 2e9},
			ledger.Record{K: ledger.KindFault, ID: "f2", Kind: "meta_db_down", Target: "meta", Phase: "start", T: 3e9}, end),
			check: func(t *testing.T, d *Data) {
				if len(d.Faults) != 2 || d.Faults[0].StartNs != 1e9 || d.Faults[0].StopNs != 2e9 || !d.Faults[0].Stopped {
					t.Errorf("faults %+v", d.Faults)
				}
				if f := d.Faults[1]; f.Stopped || f.StopNs != 5e9 {
					t.Errorf("an unhealed fault should run to the end: %+v", f)
				}
				if total(d, cReconnects) != 1 {
					t.Errorf("reconnects %d, want 1", total(d, cReconnects))
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := collectVerified(t, tc.rs)
			if got := plotted(d); got != tc.want {
				t.Errorf("plotted %+v, want %+v", got, tc.want)
			}
			if d.Lat.count != tc.lat {
				t.Errorf("latency samples %d, want %d", d.Lat.count, tc.lat)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

func TestCollectorMetrics(t *testing.T) {
	m := func(name, pod string, v float64, at int64) ledger.Record {
		return ledger.Record{K: ledger.KindMetric, Name: name, Pod: pod, Value: v, T: at, Labels: map[string]string{"tenant_id": "a"}}
	}
	d := collect(recs(ledger.Record{K: ledger.KindRun},
		m("depth", "p1", 3, 0), m("depth", "p2", 7, 10e6), m("x_total", "p1", 10, 0), m("x_total", "p1", 15, 50e6), m("x_total", "p1", 2, 60e6),
		ledger.Record{K: ledger.KindEnd, T: 1e9}))
	if len(d.Families) != 2 || d.Counters[0] || !d.Counters[1] {
		t.Fatalf("families %v counters %v", d.Families, d.Counters)
	}
	b := d.tl.b[0]
	if b.metrics[0] != 7 {
		t.Errorf("gauge max %g, want 7", b.metrics[0])
	}
	if b.metrics[1] != 7 { // +5, then a restart to 2 counts 2
		t.Errorf("counter increase %g, want 7", b.metrics[1])
	}
	if !math.IsNaN(d.tl.b[len(d.tl.b)-1].metricOr(0)) {
		t.Error("a bucket without samples should have none")
	}
}

// TestCollectorMetricKindByType: a family's recorded TYPE decides how it is plotted, the _total suffix
// only when there is none (one rule with the verifier's summary).
func TestCollectorMetricKindByType(t *testing.T) {
	m := func(name, typ string) ledger.Record {
		return ledger.Record{K: ledger.KindMetric, Name: name, Pod: "p1", Value: 1, MetricType: typ, Labels: map[string]string{}}
	}
	d := collect(recs(ledger.Record{K: ledger.KindRun}, m("odd_total", "gauge"), m("hits", "counter"), m("depth", "untyped"),
		m("flush_total", ""), ledger.Record{K: ledger.KindEnd, T: 1e9}))
	want := []bool{false, true, false, true}
	if !slices.Equal(d.Counters, want) {
		t.Errorf("families %v: counters %v, want %v", d.Families, d.Counters, want)
	}
}

// TestAddTimelineWidens: the verifier's buckets land in the report's, widened to match when the
// verifier's are wider, with every count kept; no timeline adds nothing.
func TestAddTimelineWidens(t *testing.T) {
	run := ledger.Record{K: ledger.KindRun, RunID: "r", Tenants: []ledger.Tenant{{ID: "a"}}}
	rs := recs(run, ledger.Record{K: ledger.KindConn, Consumer: "c1", Tenant: "a", Conn: "c1#1", Phase: "open", T: 1})
	for i := range 40 {
		at := int64(i) * 1e9
		rs = append(rs, &ledger.Record{K: ledger.KindMut, MID: fmt.Sprint(i), Tenant: "a", Op: "write", Path: fmt.Sprint("/", i),
			IntendedT: at, T: at, DoneT: at + 1e6, Res: ledger.ResOK})
	}
	rs = append(rs, &ledger.Record{K: ledger.KindEnd, T: 40e9, Drained: true})
	d := collectVerified(t, rs)
	if got := total(d, cLost); got != 40 {
		t.Fatalf("plotted %d losses, want 40", got)
	}
	// A report axis narrower than the verifier's (a short ledger beside a long timeline).
	d2 := collect(recs(run))
	tl := d2.tl
	src := &sliceSource{rs: rs, c: NewCollector()}
	s, err := verifier.VerifySource(src, verifier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tl.width >= s.Timeline.WidthNs {
		t.Fatalf("control: the report's width %d is not narrower than the verifier's %d", tl.width, s.Timeline.WidthNs)
	}
	d2.AddTimeline(s.Timeline)
	if d2.tl.width != s.Timeline.WidthNs || total(d2, cLost) != 40 {
		t.Errorf("after AddTimeline: width %d (verifier %d), losses %d", d2.tl.width, s.Timeline.WidthNs, total(d2, cLost))
	}
	d3 := collect(recs(run))
	d3.AddTimeline(nil)
	if total(d3, cLost) != 0 {
		t.Error("a nil timeline added losses")
	}
}
