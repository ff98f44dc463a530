package verifier

import (
	"slices"
	"testing"

	"github.com/seqgate/seqgate/ledger"
)

type fakeChecker struct {
	name string
	log  *[]string
}

func (f *fakeChecker) Observe(r *ledger.Record) { *f.log = append(*f.log, f.name+":"+r.K) }
func (f *fakeChecker) Finish(*Summary)          {}

type fakeKindChecker struct {
	fakeChecker
	kinds []string
}

func (f *fakeKindChecker) observedKinds() []string { return f.kinds }

// TestDispatch: a record reaches the checkers that read its kind, and those that do not say, in
// the checkers' order; a checker that reads no kind gets nothing.
func TestDispatch(t *testing.T) {
	var log []string
	cs := []checker{
		&fakeKindChecker{fakeChecker{"ev-only", &log}, []string{ledger.KindEv}},
		&fakeChecker{"all", &log},
		&fakeKindChecker{fakeChecker{"none", &log}, nil},
		&fakeKindChecker{fakeChecker{"mut-ev", &log}, []string{ledger.KindMut, ledger.KindEv}},
	}
	d := newDispatch(cs)
	for _, k := range []string{ledger.KindMut, ledger.KindEv, "unknown", ledger.KindEv, ledger.KindMut} {
		for _, c := range d.of(k) {
			c.Observe(&ledger.Record{K: k})
		}
	}
	want := []string{"all:mut", "mut-ev:mut", "ev-only:ev", "all:ev", "mut-ev:ev", "all:unknown",
		"ev-only:ev", "all:ev", "mut-ev:ev", "all:mut", "mut-ev:mut"}
	if !slices.Equal(log, want) {
		t.Errorf("got %q\nwant %q", log, want)
	}
}
