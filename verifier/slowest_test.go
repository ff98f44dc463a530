package verifier

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSlowestDeliveries: the summary names the slowest first deliveries, slowest first, with the
// acking and the delivering pod, both times and the faults active in between; a delivery that came
// before its mut record (pending) is judged too; N bounds the list and 0 < N means none.
func TestSlowestDeliveries(t *testing.T) {
	e := edit{
		replace: map[string]string{
			"run": runLine(namedTenants, ""),
			// m3 is delivered by p2, 7 ms after its ack, while f1 is active.
			"evB3": `{"k":"ev","consumer":"cB","tenant":"B","conn":"c2","t":9000000,"seq":1,"op":"write","path":"/x/B/m3","pod":"p2"}`,
		},
		after: map[string][]string{"mutA1": {
			`{"k":"fault","id":"f1","kind":"pod_crash","target":"p1","phase":"start","t":2500000}`,
			`{"k":"fault","id":"f1","kind":"pod_crash","target":"p1","phase":"stop","t":3500000}`}},
	}
	s := verifyText(t, e.build(), Options{SlowestDeliveries: 2})
	want := []SlowDelivery{
		{MID: "m3", Tenant: "tenant_2", Path: "/x/B/m3", Consumer: "cB", AckPod: "p2", DeliveryPod: "p2", AckMs: 2, DeliveredMs: 9, LatencyMs: 7,
			Faults: []string{"f1 pod_crash(p1)"}},
		{MID: "m1", Tenant: "tenant_1", Path: "/x/A/m1", Consumer: "cA", AckPod: "p1", DeliveryPod: "p1", AckMs: 2, DeliveredMs: 3, LatencyMs: 1,
			Faults: []string{"f1 pod_crash(p1)"}},
	}
	if !slices.EqualFunc(s.SlowestDeliveries, want, func(a, b SlowDelivery) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Errorf("slowest\n got %+v\nwant %+v", s.SlowestDeliveries, want)
	}
	var b strings.Builder
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "slowest deliveries (2 of 3; times since the run started):\n  7.0 ms  m3  tenant_2 -> cB  acked by p2 at 0.002s  delivered by p2 at 0.009s  during f1 pod_crash(p1)  /x/B/m3\n") {
		t.Errorf("text:\n%s", b.String())
	}
	if s := verifyText(t, e.build(), Options{SlowestDeliveries: -1}); len(s.SlowestDeliveries) != 0 {
		t.Errorf("none asked, got %v", s.SlowestDeliveries)
	}
	// A delivery before its mut record (the ack came later) is judged when the mut comes.
	early := edit{drop: []string{"mutA2"}, after: map[string][]string{"evA2": {
		`{"k":"mut","mid":"m2","tenant":"A","op":"write","path":"/x/A/m2","intended_t":4000000,"t":4000000,"done_t":5000000,"res":"ok","pod":"p2"}`}}}
	s = verifyText(t, early.build(), Options{})
	if i := slices.IndexFunc(s.SlowestDeliveries, func(d SlowDelivery) bool { return d.MID == "m2" }); i < 0 || s.SlowestDeliveries[i].DeliveryPod != "p1" || s.SlowestDeliveries[i].AckPod != "p2" {
		t.Errorf("pending delivery: %+v", s.SlowestDeliveries)
	}
}

// TestSlowestKeepsTopN: over many deliveries with random latencies the heap keeps exactly the N
// largest (the brute-force sort agrees), in order, and never holds more than N.
func TestSlowestKeepsTopN(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 3, 10, 50} {
		s := newSlowest(n)
		var all []int64
		for i := range 500 {
			d := rng.Int64N(1000) // ties happen
			all = append(all, d)
			s.offer(d, int64(i), int32(i), 0, "p")
			if len(s.h) > n {
				t.Fatalf("n=%d: heap holds %d", n, len(s.h))
			}
		}
		slices.Sort(all)
		slices.Reverse(all)
		var got []int64
		for _, e := range s.h {
			got = append(got, e.d)
		}
		slices.Sort(got)
		slices.Reverse(got)
		if !slices.Equal(got, all[:n]) {
			t.Errorf("n=%d: kept %v, want %v", n, got, all[:n])
		}
	}
}

// TestSlowestOnALedger: end to end on a generated ledger, the summary's list is the N slowest of the
// latencies the ledger implies, slowest first.
func TestSlowestOnALedger(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString(runLine(`[{"id":"A","mode":"dedicated","name":"tenant_1"}]`, "") + "\n")
	b.WriteString(`{"k":"conn","consumer":"c","tenant":"A","conn":"c1","t":0,"phase":"open","pod":"p1","since":0}` + "\n")
	var lat []float64
	for i := range 300 {
		done := int64(i+1) * 1_000_000
		d := rng.Int64N(5000) * 1000 // µs resolution
		lat = append(lat, float64(d)/1e6)
		fmt.Fprintf(&b, `{"k":"mut","mid":"m%d","tenant":"A","op":"write","path":"/p/%d","intended_t":%d,"t":%d,"done_t":%d,"res":"ok","pod":"p1"}`+"\n", i, i, done, done, done)
		fmt.Fprintf(&b, `{"k":"ev","consumer":"c","tenant":"A","conn":"c1","t":%d,"seq":%d,"op":"write","path":"/p/%d","pod":"p2"}`+"\n", done+d, i+1, i)
	}
	b.WriteString(`{"k":"end","t":400000000000,"drained":true}` + "\n")
	s := verifyText(t, b.String(), Options{SlowestDeliveries: 10})
	slices.Sort(lat)
	slices.Reverse(lat)
	var got []float64
	for _, d := range s.SlowestDeliveries {
		got = append(got, d.LatencyMs)
	}
	if !slices.Equal(got, lat[:10]) {
		t.Errorf("slowest %v, want %v", got, lat[:10])
	}
}
