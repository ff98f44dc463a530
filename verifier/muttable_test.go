package verifier

import (
	"fmt"
	"hash/maphash"
	"testing"
	"unsafe"
)

func TestMutTable(t *testing.T) {
	tb := newMutTable()
	const n = 1<<chunkBits + 10 // crosses a chunk boundary
	for i := range n {
		k := []byte(fmt.Sprintf("t\x00/p/%d", i))
		if tb.find(k) != -1 {
			t.Fatalf("%d found before add", i)
		}
		if id := tb.add(k, mutation{mid: fmt.Sprint(i)}); id != int32(i) {
			t.Fatalf("add %d = %d", i, id)
		}
	}
	for _, i := range []int{0, 1 << chunkBits, n - 1} {
		id := tb.find([]byte(fmt.Sprintf("t\x00/p/%d", i)))
		if id != int32(i) || tb.at(id).mid != fmt.Sprint(i) || tb.at(id).path() != fmt.Sprintf("/p/%d", i) {
			t.Errorf("find %d = %d (%+v)", i, id, tb.at(id))
		}
	}
	// A hash collision: pretend key b hashes where a already is; b must go to the exact overflow map.
	a, b := []byte("A\x00/a"), []byte("A\x00/b")
	ida := tb.add(a, mutation{})
	tb.byHash[maphash.Bytes(tb.seed, b)] = ida
	if tb.find(b) != -1 {
		t.Fatal("colliding key found before add")
	}
	idb := tb.add(b, mutation{})
	if tb.find(b) != idb || tb.find(a) != ida || idb == ida {
		t.Errorf("collision: find(a)=%d find(b)=%d, want %d %d", tb.find(a), tb.find(b), ida, idb)
	}
}

// TestMutationEntrySize keeps the mutation entry at 80 bytes: it is what the verifier keeps per
// mutation, ten million times in a long run.
func TestMutationEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(mutation{}); n > 80 {
		t.Errorf("mutation entry is %d bytes, want <= 80", n)
	}
}
