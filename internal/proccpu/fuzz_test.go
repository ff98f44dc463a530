package proccpu

import (
	"testing"
)

// FuzzParseStat: any input gives times or an error, never a panic, and accepted times are never
// negative.
func FuzzParseStat(f *testing.F) {
	for _, s := range []string{statMariadb, statOdd, "", "1 (a) S", "1 (a)) ) 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tm, err := ParseStat(b)
		if err != nil {
			return
		}
		if tm.User < 0 || tm.System < 0 || tm.ChildUser < 0 || tm.ChildSystem < 0 {
			t.Fatalf("negative times %+v from %q", tm, b)
		}
	})
}
