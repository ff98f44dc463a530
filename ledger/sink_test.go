package ledger

import (
	"sync"
	"testing"
)

func TestMemoryKeepsCopiesInOrder(t *testing.T) {
	var m Memory
	rec := &Record{K: KindEv, Seq: 1}
	_ = m.Write(rec)
	rec.Seq = 2 // the caller reuses its record: Memory must have copied the first
	_ = m.Write(rec)
	got := m.Records()
	if len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 2 {
		t.Fatalf("records %+v, want seq 1 then 2", got)
	}
	got[0].Seq = 99
	if m.Records()[0].Seq != 1 {
		t.Fatal("Records must return a copy")
	}

	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				_ = m.Write(&Record{K: KindEv})
			}
		}()
	}
	wg.Wait()
	if n := len(m.Records()); n != 802 {
		t.Fatalf("%d records after concurrent writes, want 802", n)
	}
}
