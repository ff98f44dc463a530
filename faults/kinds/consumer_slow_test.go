package kinds_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// TestConsumerSlow proves consumer_slow sets the read delay on the first N consumers and Heal clears it.
func TestConsumerSlow(t *testing.T) {
	env := faultstest.NewEnv(t)
	cs := []*faultstest.Consumer{faultstest.NewConsumer("c1", nil), faultstest.NewConsumer("c2", nil), faultstest.NewConsumer("c3", nil)}
	for _, c := range cs {
		env.Consumers["t1"] = append(env.Consumers["t1"], c)
	}
	f := build(t, kinds.ConsumerSlow(), env, "t1", time.Second, kinds.ConsumerSlowParams{ReadDelay: 250 * time.Millisecond, Count: 2})
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		want := time.Duration(0)
		if i < 2 {
			want = 250 * time.Millisecond
		}
		if got := c.ReadDelay(); got != want {
			t.Errorf("%s read delay %s, want %s", c.Name(), got, want)
		}
	}
	if err := f.Heal(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.ReadDelay() != 0 {
			t.Errorf("%s still slow after Heal", c.Name())
		}
	}
	if _, err := kinds.ConsumerSlow().Build(env, "t2", time.Second, kinds.ConsumerSlowParams{}); err == nil || !strings.Contains(err.Error(), "tenant t2 has no consumers") {
		t.Errorf("a tenant without consumers must be a build error naming it, got %v", err)
	}
}
