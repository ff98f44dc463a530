package verifier

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"
)

func TestMutTable(t *testing.T) {
	tenants := []string{"t", "A", "B"}
	tb := newMutTable(&tenants)
	const n = 1<<chunkBits + 10 // crosses a chunk boundary and grows the index several times
	// mids: equal to the path's last element, other than it, set twice, or never set
	mid := func(i int) string {
		switch i % 4 {
		case 0:
			return fmt.Sprint(i)
		case 1:
			return fmt.Sprintf("m%d", i)
		}
		return ""
	}
	path := func(i int) string {
		if i%5 == 0 {
			return fmt.Sprint(i) // no directory
		}
		return fmt.Sprintf("/p/%d/%d", i%3, i)
	}
	for i := range n {
		id, h := tb.find("t", path(i))
		if id != -1 {
			t.Fatalf("%d found before add", i)
		}
		if id := tb.add("t", 0, path(i), h, mutation{}); id != int32(i) {
			t.Fatalf("add %d = %d", i, id)
		}
		if i%4 == 2 {
			tb.setMid(tb.at(int32(i)), "other")
		}
		tb.setMid(tb.at(int32(i)), mid(i))
	}
	for i := range n {
		id, _ := tb.find("t", path(i))
		if id != int32(i) || tb.mid(tb.at(id)) != mid(i) || tb.path(tb.at(id)) != path(i) {
			t.Fatalf("find %d = %d (%+v, mid %q, path %q)", i, id, tb.at(id), tb.mid(tb.at(id)), tb.path(tb.at(id)))
		}
		if id, _ := tb.find("A", path(i)); id != -1 {
			t.Fatalf("path %d found under another tenant", i)
		}
	}
	// Hash collisions: keys added under one made-up hash (one tag, one home slot) are all found
	// exactly, by the key kept in their entry; a key with that hash that was never added is not.
	const h = 0xdeadbeef_00000007
	keys := [][2]string{{"A", "/a"}, {"A", "/b"}, {"B", "/a"}}
	ids := map[[2]string]int32{}
	for _, k := range keys {
		ti := int32(1)
		if k[0] == "B" {
			ti = 2
		}
		ids[k] = tb.add(k[0], ti, k[1], h, mutation{})
	}
	for _, k := range keys {
		if id := tb.findHashed(k[0], k[1], h); id != ids[k] {
			t.Errorf("colliding key %q found as %d, want %d", k, id, ids[k])
		}
	}
	if id := tb.findHashed("A", "/c", h); id != -1 {
		t.Errorf("a key never added was found as %d", id)
	}
}

// maxEntryBytes is the size the mutation entry is held to.
const maxEntryBytes = 24

// TestMutationEntrySize keeps the mutation entry small: it is what the verifier keeps per mutation,
// ten million times in a long run (docs/verify.md, "Memory and speed").
func TestMutationEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(mutation{}); n > maxEntryBytes {
		t.Errorf("mutation entry is %d bytes, want <= %d", n, maxEntryBytes)
	}
}

// TestCompactFields round-trips the entry's compact times and seqs, including the values that only
// the side table holds (and a negative control: a value changed after it was set is read back
// changed), with intended_t kept for every entry (windows) and only for W's unpersisted ones.
func TestCompactFields(t *testing.T) {
	for _, all := range []bool{true, false} {
		t.Run(fmt.Sprint("keepAll=", all), func(t *testing.T) { testCompactFields(t, all) })
	}
}

func testCompactFields(t *testing.T, all bool) {
	tenants := []string{"t"}
	tb := newMutTable(&tenants)
	tb.keepAllIntended(all)
	const big = int64(1) << 40
	cases := []struct{ sent, intended, done, evSeq int64 }{
		{noTime, noTime, noTime, noTime},
		{10, 5, 20, 0},
		{0, 0, 0, 1},
		{1_000_000_000, 999_000_000, 1_002_000_000, 4_294_967_293},
		{big, big - 5, big + 3_000_000_000, 4_294_967_294}, // an ack 3 s after its send
		{5, -big, 7, 4_294_967_295},                        // intended long before the send
		{noTime, 3, 9, -1},                                 // a mut record without t
		{-5, 2, noTime, 1 << 62},
		{math.MaxInt64, math.MinInt64 + 1, math.MinInt64 + 2, math.MaxInt64},
		{7, 7 - math.MinInt32, 7 + math.MaxInt32, math.MinInt64 + 1}, // differences at the int32 edges
		{1, 0, doneMax, 5},                                           // done_t at the edges of its 48 bits
		{1, 0, doneMax + 1, 5},                                       // 39 hours after the start: the side table
		{-1 << 46, 0, doneEsc + 1, 5},                                // the lowest done_t the entry holds itself
		{0, 0, doneEsc, 5},                                           // the escape marker's own value
		{0, 0, doneNone, 5},                                          // the none marker's own value
		{0, math.MaxInt64, math.MinInt64, 5},                         // t minus intended_t wraps: kept modulo 2^64
	}
	for i, c := range cases {
		id, h := tb.find("t", fmt.Sprint(i))
		m := tb.at(tb.add("t", 0, fmt.Sprint(i), h, blankEntry))
		if id != -1 || tb.sent(m) != noTime || tb.done(m) != noTime || tb.evSeq(m) != noTime {
			t.Fatalf("case %d: a new entry has times %d %d seq %d, want none", i, tb.sent(m), tb.done(m), tb.evSeq(m))
		}
		m.flags |= fHasMut
		tb.setKind(m, opEvent, resOK, 200)
		tb.setTimes(int32(i), c.sent, c.intended, c.done)
		tb.setEvSeq(m, c.evSeq)
	}
	for i, c := range cases {
		id, _ := tb.find("t", fmt.Sprint(i))
		m := tb.at(id)
		if tb.sent(m) != c.sent || tb.intended(id) != c.intended || tb.done(m) != c.done || tb.evSeq(m) != c.evSeq || tb.tenantOf(m) != 0 {
			t.Errorf("case %d: got sent %d intended %d done %d seq %d tenant %d, want %+v", i, tb.sent(m), tb.intended(id), tb.done(m), tb.evSeq(m), tb.tenantOf(m), c)
		}
	}
	if all {
		m := tb.at(0)
		tb.setTimes(0, 1, 2, big)
		if tb.sent(m) != 1 || tb.intended(0) != 2 || tb.done(m) != big {
			t.Errorf("times set again: got %d %d %d, want 1 2 %d", tb.sent(m), tb.intended(0), tb.done(m), big)
		}
	}
}

// TestIntendedLog keeps intended_t exactly for W's mutations that are not persisted while the log
// is compacted many times over, and drops the others: a persisted mutation's intended_t is no
// longer asked for (the loss check names only lost ones).
func TestIntendedLog(t *testing.T) {
	tenants := []string{"t", "u"}
	tb := newMutTable(&tenants)
	const n = 300_000 // several compactions of a 64 KiB log
	want := map[int32]int64{}
	for i := range n {
		_, h := tb.find("t", fmt.Sprint(i))
		id := tb.add("t", 0, fmt.Sprint(i), h, blankEntry)
		m := tb.at(id)
		m.flags |= fHasMut
		res := resOK
		if i%7 == 3 {
			res = resErr // not in W: not kept
		}
		tb.setKind(m, opEvent, res, 200)
		sent := int64(i) * 1_000_000
		intended := sent - int64(i%1000)*int64(i%13)*1_000_003 // differences up to about 12 s
		if i%101 == 0 {
			intended = math.MinInt64 + int64(i) // any difference, exactly
		}
		tb.setTimes(id, sent, intended, sent+5)
		if i%3 == 0 && res == resOK {
			want[id] = intended // stays unpersisted: kept
		} else {
			m.flags |= fDelivered // delivered: dropped at the next compaction
		}
	}
	for id, v := range want {
		if got := tb.intended(id); got != v {
			t.Fatalf("intended_t of %d: got %d, want %d", id, got, v)
		}
	}
	if got := len(tb.intendeds.log); got > 8*len(want) {
		t.Errorf("the log holds %d bytes for %d kept mutations", got, len(want))
	}
	defer func() {
		if recover() == nil {
			t.Errorf("intended_t of a persisted mutation was answered, not refused")
		}
	}()
	tb.intended(1) // delivered
}

// TestJumpLogRoundTrip reads back every move as it was added, across chunks, with and without the
// before, connection and kind the header can say, and with differences at the int64 edges.
func TestJumpLogRoundTrip(t *testing.T) {
	var l jumpLog
	var want []jump
	kinds := []byte{frameEv, frameReset, frameResume}
	after, tt := int64(0), int64(0)
	for i := range 50_000 {
		j := jump{kind: kinds[i%3], before: after, t: tt + int64(i%7)*1_000_003, conn: int32(i / 1000)}
		if i%5 == 0 {
			j.before = after - int64(i) // a resume below the cursor
		}
		j.after = j.before + int64(i%11) + 2
		switch i {
		case 100:
			j.before, j.after, j.t = math.MinInt64, math.MaxInt64, math.MinInt64
		case 101:
			j.before, j.after, j.t, j.conn = math.MaxInt64, math.MinInt64, math.MaxInt64, math.MaxInt32
		}
		l.add(j)
		want = append(want, j)
		after, tt = j.after, j.t
	}
	var got []jump
	l.each(func(j jump) bool { got = append(got, j); return true })
	if len(got) != len(want) {
		t.Fatalf("%d moves read back, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("move %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if len(l.chunks) < 3 {
		t.Errorf("%d chunks: the test should cross chunks", len(l.chunks))
	}
}

// TestHistWiden: a histogram made small gives the quantiles, count and max of a full-range one,
// after a value beyond its small range widens it, and when merged either way.
func TestHistWiden(t *testing.T) {
	full := func() *hist { x := newHist(); x.widen(); return x }
	vals := []int64{0, 1, 999, 5_000_000, histSmallUs - 1, histSmallUs, 3 * histSmallUs, maxLatencyUs * 1000}
	for cut := range vals {
		small, ref := newHist(), full()
		for _, v := range vals[:cut+1] {
			record(small, v*1000)
			record(ref, v*1000)
		}
		if quantiles(small) != quantiles(ref) {
			t.Errorf("%d values: small %+v, full %+v", cut+1, quantiles(small), quantiles(ref))
		}
		for _, into := range []*hist{newHist(), full()} {
			into.merge(small)
			if quantiles(into) != quantiles(ref) {
				t.Errorf("%d values merged: %+v, want %+v", cut+1, quantiles(into), quantiles(ref))
			}
		}
	}
}

// TestIDCache answers only for the very string it was given (same bytes, same length), never for
// another string with other bytes at another address, nor for a prefix of it.
func TestIDCache(t *testing.T) {
	var c idCache
	a := strings.Clone("tenant-a")
	c.put(a, 7)
	if i, ok := c.get(a); !ok || i != 7 {
		t.Errorf("get(a) = %d, %v; want 7, true", i, ok)
	}
	if _, ok := c.get(strings.Clone(a)); ok {
		t.Errorf("a copy at another address was answered from the cache")
	}
	if _, ok := c.get(a[:3]); ok {
		t.Errorf("a prefix was answered from the cache")
	}
	if _, ok := c.get(""); ok {
		t.Errorf("the empty string was answered from the cache")
	}
}

// TestNear finds an entry beside a known one only by its exact key (never another tenant's entry
// of the same path), and answers -1 beyond its window, where the index must be asked.
func TestNear(t *testing.T) {
	tenants := []string{"A", "B"}
	tb := newMutTable(&tenants)
	for i := range 200 {
		ti := int32(i % 2)
		p := fmt.Sprintf("/p/m%d", i/2) // both tenants have each path
		_, h := tb.find(tenants[ti], p)
		tb.add(tenants[ti], ti, p, h, blankEntry)
	}
	cases := []struct {
		from   int32
		tenant int32
		path   string
		want   int32
	}{
		{100, 1, "/p/m50", 101}, {100, 0, "/p/m51", 102}, {100, 0, "/p/m50", 100},
		{100, 1, "/p/m45", 91},                           // a few before
		{10, 0, "/p/m80", -1},                            // beyond the window
		{199, 1, "/p/m99", 199}, {199, 0, "/p/m100", -1}, // never added
	}
	for _, c := range cases {
		if got := tb.near(c.from, c.tenant, tenants[c.tenant], c.path); got != c.want {
			t.Errorf("near(%d, %s, %q) = %d, want %d", c.from, tenants[c.tenant], c.path, got, c.want)
		}
	}
}
