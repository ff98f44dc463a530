package load

import (
	"math/rand/v2"
	"sort"
)

// Mix draws ops by weight from a seeded source: the same seed gives the same op sequence.
type Mix struct {
	ops   []string
	cum   []int
	total int
	rng   *rand.Rand
}

// NewMix returns a Mix over weights (op -> weight), seeded by seed and stream.
func NewMix(weights map[string]int, seed, stream uint64) *Mix {
	m := &Mix{rng: rand.New(rand.NewPCG(seed, stream))}
	for op := range weights {
		m.ops = append(m.ops, op)
	}
	sort.Strings(m.ops) // map order is random; the draw must not be
	for _, op := range m.ops {
		m.total += weights[op]
		m.cum = append(m.cum, m.total)
	}
	return m
}

// Next returns the next op.
func (m *Mix) Next() string {
	x := m.rng.IntN(m.total)
	i := sort.SearchInts(m.cum, x+1)
	return m.ops[i]
}

// Pick returns a seeded index in [0, n).
func (m *Mix) Pick(n int) int { return m.rng.IntN(n) }
