package verifier

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRowStore: rows come back exactly as added, in order, across chunks and for seqs and persisted
// times that only the side table holds or that are unknown; an unordered store sorts like sortRows,
// and an ordered one is left as it came.
func TestRowStore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var want []auditRow
	var s rowStore
	pt := int64(1_000_000)
	for i := range 3<<rowChunkBits + 7 {
		row := auditRow{seq: int64(i), id: int32(rng.IntN(maxRowID + 1)), op: opClass(rng.IntN(4))}
		switch i % 5 { // seqs: in order, with gaps past an int32 difference, at the extremes
		case 1:
			row.seq = int64(i) << 33
		case 2:
			row.seq = math.MaxInt64 - int64(i)
		case 3:
			row.seq = math.MinInt64 + int64(i)
		}
		switch i % 7 {
		case 0:
			row.persistedT = noTime
		case 1:
			row.persistedT = pt + 5_000_000_000 // past an int32 difference
		case 2:
			row.persistedT = pt - math.MaxInt32 + 1 // the edge of ptNone
		case 3:
			row.persistedT = math.MaxInt64
		default:
			pt += rng.Int64N(1_000_000)
			row.persistedT = pt
		}
		if i == 5 {
			row.id = maxRowID
		}
		want = append(want, row)
		s.add(row)
	}
	got := func() []auditRow {
		var out []auditRow
		s.each(func(r auditRow) bool { out = append(out, r); return true })
		return out
	}
	if g := got(); !slices.Equal(g, want) {
		t.Fatalf("rows differ (%d got, %d want)", len(g), len(want))
	}
	s.sort()
	sorted := slices.Clone(want)
	sortRows(sorted)
	if g := got(); !slices.Equal(g, sorted) {
		t.Fatal("rows sorted differently from sortRows")
	}
	var o rowStore // rows in increasing seq order are left as they came
	for i, row := range want {
		row.seq = int64(i) * 3
		o.add(row)
	}
	o.sort()
	n := 0
	o.each(func(r auditRow) bool {
		if r.seq != int64(n)*3 || r.id != want[n].id || r.persistedT != want[n].persistedT {
			t.Fatalf("ordered row %d changed: %+v", n, r)
		}
		n++
		return true
	})
	// out of order, with repeated seqs: sorts exactly like sortRows on the rows as they came
	var u rowStore
	perm := rng.Perm(len(want))
	shuffled := make([]auditRow, len(want))
	for i, j := range perm {
		shuffled[i] = want[j]
		shuffled[i].seq = int64(j / 3)
		u.add(shuffled[i])
	}
	sortRows(shuffled)
	u.sort()
	var g []auditRow
	u.each(func(r auditRow) bool { g = append(g, r); return true })
	if !slices.Equal(g, shuffled) {
		t.Fatal("unordered rows sorted differently from sortRows")
	}
	if slices.Equal(g, want) {
		t.Fatal("control: the shuffled rows must differ from the ordered ones")
	}
}
