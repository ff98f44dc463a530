package ledger

// interner returns one shared copy of each low-cardinality string (tenant, consumer, pod, op, kind,
// ...), so that ten million records do not allocate ten million copies of "write". It stops adding
// once it holds max entries, so hostile input cannot grow it without bound.
type interner struct {
	m     map[string]string
	max   int
	cache [4096]string // direct-mapped by hash: most lookups end here without the map
}

func newInterner(max int) *interner { return &interner{m: make(map[string]string, 256), max: max} }

// get returns the interned copy of b; the map lookup with string(b) does not allocate.
func (in *interner) get(b []byte) string {
	h := uint32(2166136261) // FNV-1a
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &in.cache[h&4095]
	if *slot == string(b) {
		return *slot
	}
	if s, ok := in.m[string(b)]; ok {
		*slot = s
		return s
	}
	s := string(b)
	if len(in.m) < in.max {
		in.m[s] = s
		*slot = s
	}
	return s
}
