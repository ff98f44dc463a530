package ledger

import (
	"io"
	"testing"
)

func TestWriterObserveSeesEveryRecordInOrder(t *testing.T) {
	w := NewWriter(io.Discard)
	if err := w.Write(&Record{K: KindEnd, T: 1}); err != nil { // before Observe: not seen
		t.Fatal(err)
	}
	var seen []int64
	w.Observe(func(r *Record) { seen = append(seen, r.T) })
	for _, tt := range []int64{2, 3} {
		if err := w.Write(&Record{K: KindEnd, T: tt}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(&Record{K: "nope"}); err == nil { // a bad record is not written, so not seen
		t.Fatal("an unknown kind was written")
	}
	if len(seen) != 2 || seen[0] != 2 || seen[1] != 3 {
		t.Errorf("observed %v, want [2 3]", seen)
	}
}
