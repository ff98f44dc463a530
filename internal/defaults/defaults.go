// Package defaults fills unset configuration fields: one helper instead of a closure per config type.
package defaults

// Positive sets *p to v when *p is zero or negative (a duration, count or size left unset).
func Positive[T ~int | ~int64 | ~float64](p *T, v T) {
	if *p <= 0 {
		*p = v
	}
}
