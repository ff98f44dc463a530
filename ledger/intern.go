package ledger

// interner returns one shared copy of each low-cardinality string (tenant, consumer, pod, op, kind,
// ...), so that ten million records do not allocate ten million copies of "write". It stops adding
// once it holds max entries, so hostile input cannot grow it without bound.
type interner struct {
	m   map[string]string
	max int
}

func newInterner(max int) *interner { return &interner{m: make(map[string]string, 256), max: max} }

// get returns the interned copy of b; the map lookup with string(b) does not allocate.
func (in *interner) get(b []byte) string {
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < in.max {
		in.m[s] = s
	}
	return s
}
