package defaults

import (
	"testing"
	"time"
)

func TestPositive(t *testing.T) {
	for _, c := range []struct{ in, def, want time.Duration }{
		{0, time.Second, time.Second},
		{-5, time.Second, time.Second},
		{2 * time.Second, time.Second, 2 * time.Second},
	} {
		got := c.in
		Positive(&got, c.def)
		if got != c.want {
			t.Errorf("Positive(%v, %v) = %v, want %v", c.in, c.def, got, c.want)
		}
	}
	n := 0
	Positive(&n, 8)
	if n != 8 {
		t.Errorf("int: %d", n)
	}
}
