package verifier

import (
	"fmt"
	"testing"
	"unsafe"
)

func TestMutTable(t *testing.T) {
	tb := newMutTable()
	const n = 1<<chunkBits + 10 // crosses a chunk boundary and grows the index several times
	for i := range n {
		k := []byte(fmt.Sprintf("t\x00/p/%d", i))
		id, h := tb.find(k)
		if id != -1 {
			t.Fatalf("%d found before add", i)
		}
		if id := tb.add(k, h, mutation{mid: fmt.Sprint(i)}); id != int32(i) {
			t.Fatalf("add %d = %d", i, id)
		}
	}
	for i := range n {
		id, _ := tb.find([]byte(fmt.Sprintf("t\x00/p/%d", i)))
		if id != int32(i) || tb.at(id).mid != fmt.Sprint(i) || tb.at(id).path() != fmt.Sprintf("/p/%d", i) {
			t.Fatalf("find %d = %d (%+v)", i, id, tb.at(id))
		}
	}
	// Hash collisions: keys added under one made-up hash (one tag, one home slot) are all found
	// exactly, by the key kept in their entry; a key with that hash that was never added is not.
	const h = 0xdeadbeef_00000007
	keys := [][]byte{[]byte("A\x00/a"), []byte("A\x00/b"), []byte("B\x00/a")}
	ids := map[string]int32{}
	for _, k := range keys {
		ids[string(k)] = tb.add(k, h, mutation{})
	}
	for _, k := range keys {
		if id := tb.findHashed(k, h); id != ids[string(k)] {
			t.Errorf("colliding key %q found as %d, want %d", k, id, ids[string(k)])
		}
	}
	if id := tb.findHashed([]byte("A\x00/c"), h); id != -1 {
		t.Errorf("a key never added was found as %d", id)
	}
}

// TestMutationEntrySize keeps the mutation entry at 80 bytes: it is what the verifier keeps per
// mutation, ten million times in a long run.
func TestMutationEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(mutation{}); n > 80 {
		t.Errorf("mutation entry is %d bytes, want <= 80", n)
	}
}
