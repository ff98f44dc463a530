package verifier

// kindObserver is a checker whose Observe reads records of the listed kinds only and does nothing
// with any other (an empty list: it reads none; its work is in Finish). A checker that does not say
// is handed every record.
type kindObserver interface {
	observedKinds() []string
}

// dispatch hands each record only to the checkers that read its kind, in the checkers' order: a
// record of the few kinds of a run's bulk (mut, ev, persisted) then costs a few calls, not one per
// checker.
type dispatch struct {
	cs    []checker
	kinds []kindCheckers // the lists made so far, one per kind seen (a ledger has a dozen kinds)
}

type kindCheckers struct {
	kind string
	cs   []checker
}

func newDispatch(cs []checker) *dispatch { return &dispatch{cs: cs} }

// of returns the checkers that read records of kind k.
func (d *dispatch) of(k string) []checker {
	for i := range d.kinds {
		if d.kinds[i].kind == k {
			return d.kinds[i].cs
		}
	}
	var cs []checker
	for _, c := range d.cs {
		if reads(c, k) {
			cs = append(cs, c)
		}
	}
	d.kinds = append(d.kinds, kindCheckers{kind: k, cs: cs})
	return cs
}

func reads(c checker, k string) bool {
	ko, ok := c.(kindObserver)
	if !ok {
		return true
	}
	for _, x := range ko.observedKinds() {
		if x == k {
			return true
		}
	}
	return false
}
