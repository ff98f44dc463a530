package verifier

import (
	"fmt"
	"strings"
	"testing"
)

// TestNameRecords round-trips paths and mids through the arena's name records: paths that end in a
// canonical number (kept as the number) and ones that only look numeric (kept as bytes), with each
// mid form; a path is found again under its own key only.
func TestNameRecords(t *testing.T) {
	paths := []string{
		"/p/run/t0/m1679580", // the load driver's form
		"/p/run/t0/m007",     // leading zeros: not canonical
		"/p/run/t0/m0",
		"/p/run/t0/m20",
		"/p/run/t0/m00",
		"/p/run/t0/m",
		"/p/run/t0/m18446744073709551615", // the largest uint64
		"/p/run/t0/m18446744073709551616", // one more: kept as bytes
		"/p/run/t0/m99999999999999999999999",
		"/p/run/t0/7",
		"/p/run/t0/",
		"/p/run/t0/a1/b", // digits inside, not at the end
		"/p/12/x12",
		"1679580",
		"0",
		"m5",
		"",
		"/",
		"/p/run/t0/m-1",
		"/p/run/t0/m+1",
		"/p/run/t0/m１２", // non-ASCII digits are bytes
	}
	mids := []struct {
		name string
		mid  func(path string) string
	}{
		{"none", func(string) string { return "" }},
		{"last element", func(p string) string { return p[lastSlash(p)+1:] }},
		{"other", func(p string) string { return "other-" + p }},
		{"numeric other", func(string) string { return "m42" }},
	}
	for _, mc := range mids {
		t.Run(mc.name, func(t *testing.T) {
			tenants := []string{"t", "u"}
			tb := newMutTable(&tenants)
			ids := map[string]int32{}
			for _, p := range paths {
				_, h := tb.find("t", p)
				id := tb.add("t", 0, p, h, mutation{})
				tb.setMid(tb.at(id), mc.mid(p))
				ids[p] = id
			}
			for _, p := range paths {
				id, _ := tb.find("t", p)
				if id != ids[p] {
					t.Fatalf("%q found as %d, want %d", p, id, ids[p])
				}
				m := tb.at(id)
				if got := tb.path(m); got != p {
					t.Errorf("path %q read back as %q", p, got)
				}
				if got, want := tb.mid(m), mc.mid(p); got != want {
					t.Errorf("path %q: mid %q, want %q", p, got, want)
				}
				if id, _ := tb.find("u", p); id != -1 {
					t.Errorf("%q found under another tenant", p)
				}
			}
			// "m1:" would read as 20 if a non-digit were taken for a digit; "m0/" is m0 with more.
			for _, p := range []string{"/p/run/t0/m1:", "/p/run/t0/m0/", "/p/run/t0/m1679581", "/p/run/t0/m01679580", "/p/run/t0/m07", "/p/run/t0/m18446744073709551614"} {
				if id, _ := tb.find("t", p); id != -1 {
					t.Errorf("%q, never added, found as %d (%q)", p, id, tb.path(tb.at(id)))
				}
			}
		})
	}
}

// TestNameRecordsBeyondMaxDirs keeps paths of more stems than maxDirs whole, and still exact.
func TestNameRecordsBeyondMaxDirs(t *testing.T) {
	tenants := []string{"t"}
	tb := newMutTable(&tenants)
	path := func(i int) string { return fmt.Sprintf("/d%d/m%d", i, i) }
	const n = maxDirs + 100
	for i := range n {
		_, h := tb.find("t", path(i))
		tb.setMid(tb.at(tb.add("t", 0, path(i), h, mutation{})), fmt.Sprintf("m%d", i))
	}
	for _, i := range []int{0, 1, maxDirs - 2, maxDirs - 1, maxDirs, n - 1} {
		id, _ := tb.find("t", path(i))
		if id != int32(i) || tb.path(tb.at(id)) != path(i) || tb.mid(tb.at(id)) != fmt.Sprintf("m%d", i) {
			t.Errorf("%d: found %d, path %q mid %q", i, id, tb.path(tb.at(id)), tb.mid(tb.at(id)))
		}
	}
	if len(tb.dirs) != maxDirs {
		t.Errorf("%d stems interned, want the bound %d", len(tb.dirs), maxDirs)
	}
}

func TestParseCanonical(t *testing.T) {
	cases := []struct {
		in   string
		n    uint64
		want bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"1679580", 1679580, true},
		{"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false}, {"99999999999999999999", 0, false},
		{"000000000000000000001", 0, false}, {"00", 0, false}, {"007", 0, false}, {"", 0, false},
		{"1:", 0, false}, {"2a", 0, false}, {"/5", 0, false}, {"1 ", 0, false}, {"-1", 0, false},
	}
	for _, c := range cases {
		n, ok := parseCanonical(c.in)
		if ok != c.want || ok && n != c.n {
			t.Errorf("parseCanonical(%q) = %d, %v; want %d, %v", c.in, n, ok, c.n, c.want)
		}
	}
}

// TestNameNumberBases round-trips numbered paths whose numbers jump about (far from their region's
// base either way, at the ends of uint64) over many arena chunks, with records too big for a chunk
// (a mid of over a MiB) among them: every number is kept exactly, whatever its base.
func TestNameNumberBases(t *testing.T) {
	tenants := []string{"t"}
	tb := newMutTable(&tenants)
	big := strings.Repeat("x", 1<<arenaChunkBits+1)
	num := func(i int) uint64 {
		switch i % 10 {
		case 3:
			return 1<<64 - 1 - uint64(i)
		case 7:
			return uint64(i) * 1_000_000_007
		}
		return uint64(i)
	}
	path := func(i int) string { return fmt.Sprintf("/run/t%d/m%d", i%3, num(i)) }
	const n = 300_000 // several 1 MiB chunks
	for i := range n {
		_, h := tb.find("t", path(i))
		m := tb.at(tb.add("t", 0, path(i), h, blankEntry))
		if i%50_000 == 1 {
			tb.setMid(m, big)
		}
	}
	if len(tb.names.chunks) < 2 || len(tb.names.big) == 0 {
		t.Fatalf("%d chunks, %d big records: the test should cross chunks and make big records", len(tb.names.chunks), len(tb.names.big))
	}
	for i := range n {
		id, _ := tb.find("t", path(i))
		if id != int32(i) || tb.path(tb.at(id)) != path(i) {
			t.Fatalf("%d: %q found as %d, path %q", i, path(i), id, tb.path(tb.at(id)))
		}
		if i%50_000 == 1 && tb.mid(tb.at(id)) != big {
			t.Fatalf("%d: its big mid was not kept", i)
		}
	}
}
