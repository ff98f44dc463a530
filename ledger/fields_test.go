package ledger

import (
	"encoding/binary"
	"testing"
	"unsafe"
)

// TestFieldSet: membership, union, difference and the lowest field, across both words of the set
// (fields 0-63 and 64 and above).
func TestFieldSet(t *testing.T) {
	tests := []struct {
		name  string
		in    []field
		out   []field // not in the set
		first field
	}{
		{"low word", []field{0, 5, 63}, []field{1, 64, 127}, 0},
		{"high word only", []field{64, 65, 127}, []field{0, 63, 66}, 64},
		{"both words", []field{63, 64}, []field{62, 65}, 63},
		{"65th field", []field{64}, []field{0, 63, 65}, 64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := setOf(tc.in...)
			for _, f := range tc.in {
				if !s.has(f) {
					t.Errorf("has(%d) = false, want true", f)
				}
			}
			for _, f := range tc.out {
				if s.has(f) {
					t.Errorf("has(%d) = true, want false", f)
				}
			}
			if f, ok := s.first(); !ok || f != tc.first {
				t.Errorf("first() = %d, %v; want %d, true", f, ok, tc.first)
			}
			if s.empty() {
				t.Error("empty() = true for a non-empty set")
			}
			if !s.intersects(setOf(tc.in[len(tc.in)-1])) {
				t.Error("intersects its own last field = false")
			}
			if s.intersects(setOf(tc.out...)) {
				t.Error("intersects the fields it lacks = true")
			}
			if rest := s.andNot(setOf(tc.in...)); !rest.empty() {
				t.Errorf("s andNot s = %v, want empty", rest)
			}
			if u := s.or(setOf(tc.out...)); !u.has(tc.out[0]) || !u.has(tc.in[0]) {
				t.Errorf("or lost a field: %v", u)
			}
		})
	}
	if _, ok := (fieldSet{}).first(); ok {
		t.Error("first() of the empty set: ok = true")
	}
}

// TestFieldNames: every field has a distinct JSON name, except "tenants", which is both the run's
// list and the audit's count.
func TestFieldNames(t *testing.T) {
	seen := map[string]field{}
	for f := field(0); f < fCount; f++ {
		n := fieldNames[f]
		if n == "" {
			t.Errorf("field %d has no name", f)
		}
		if g, dup := seen[n]; dup && n != "tenants" {
			t.Errorf("fields %d and %d are both %q", g, f, n)
		}
		seen[n] = f
	}
}

// special8 agrees with the byte-by-byte test rawString makes, for words built around each boundary.
func TestSpecial8MatchesBytes(t *testing.T) {
	interesting := []byte{0, 0x01, 0x1f, 0x20, 0x21, '"', 0x23, '\\', 0x5b, 0x5d, 'a', 0x7f, 0x80, 0xc3, 0xff}
	for pos := range 8 {
		for _, c := range interesting {
			for _, fill := range []byte{'a', ' ', '0', 0x7e} {
				var b [8]byte
				for i := range b {
					b[i] = fill
				}
				b[pos] = c
				want := false
				for _, x := range b {
					if x == '"' || x == '\\' || x < 0x20 || x >= 0x80 {
						want = true
					}
				}
				if got := special8(binary.LittleEndian.Uint64(b[:])); got != want {
					t.Errorf("special8(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

// keyField finds every field by its name and nothing else: neither a prefix, an extension nor a
// name of the right length with one byte changed.
func TestKeyFieldFindsEveryName(t *testing.T) {
	for f, name := range fieldNames {
		got, ok := keyField([]byte(name))
		if !ok || fieldNames[got] != name {
			t.Errorf("keyField(%q) = %v %v, want field %d", name, got, ok, f)
		}
		for _, other := range []string{name[:len(name)-1], name + "x", "x" + name[1:], name[:len(name)-1] + "\x00"} {
			if g, ok := keyField([]byte(other)); ok && fieldNames[g] != other {
				t.Errorf("keyField(%q) found %q", other, fieldNames[g])
			}
		}
	}
	if _, ok := keyField(nil); ok {
		t.Error("keyField of an empty key found a field")
	}
}

// The interner gives one copy per distinct string, short (one packed word) or long (maphash), tells
// strings apart that share their first eight bytes or differ only in length, keeps "" apart from
// an empty slot, and stops adding at its bound without giving a wrong answer.
func TestInterner(t *testing.T) {
	in := newInterner(1000)
	words := []string{"", "a", "a\x00", "ev", "write", "t5.c1#1", "exactly8", "exactly8+", "exactly8-",
		"/sg/synth-1/t5/m1679580", "/sg/synth-1/t5/m1679581"}
	for i := range 600 {
		words = append(words, "tenant-"+itoa(int64(i)))
	}
	first := map[string]string{}
	for round := range 2 {
		for _, w := range words {
			got := in.get([]byte(w))
			if got != w {
				t.Fatalf("get(%q) = %q", w, got)
			}
			if round == 0 {
				first[w] = got
			} else if unsafe.StringData(first[w]) != unsafe.StringData(got) {
				t.Errorf("get(%q) gave a second copy", w)
			}
		}
	}
	small := newInterner(2)
	for _, w := range []string{"x", "y", "z", "x", "z"} {
		if got := small.get([]byte(w)); got != w {
			t.Errorf("bounded get(%q) = %q", w, got)
		}
	}
	if small.n != 2 {
		t.Errorf("bounded interner holds %d entries, want 2", small.n)
	}
}
