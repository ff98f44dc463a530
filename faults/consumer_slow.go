package faults

import (
	"context"
	"fmt"
	"time"
)

// KindConsumerSlow is the name of the slow consumer fault.
const KindConsumerSlow = "consumer_slow"

// ConsumerSlowParams are the parameters of consumer_slow.
type ConsumerSlowParams struct {
	ReadDelay time.Duration `yaml:"read_delay" help:"pause before the consumer reads each SSE frame; slower than the event rate makes the server's per-connection queue fill"`
	Count     int           `yaml:"count" help:"how many of the tenant's consumers slow down (the first N in order); 0 = all of them"`
}

func consumerSlowKind() Kind {
	return defineKind(Kind{
		Name:      KindConsumerSlow,
		Simulates: "a subscriber that reads slower than events arrive (a slow network or a busy client): the server must signal the overflow (reset slow_consumer), never drop silently, never mass-close",
		Mechanism: "the harness's consumer waits read_delay before reading each frame (TCP backpressure reaches the server); Heal sets the delay back to 0",
		Targets:   TargetTenant,
		Timing:    TimingSpan,
		resource:  "consumers",
	}, ConsumerSlowParams{ReadDelay: 200 * time.Millisecond}, func(env Env, target string, _ time.Duration, p ConsumerSlowParams) (Fault, error) {
		cs, err := pickConsumers(env, target, p.Count)
		if err != nil {
			return nil, err
		}
		return &consumerSlow{consumers: cs, delay: p.ReadDelay}, nil
	})
}

// pickConsumers returns the first count consumers of a tenant (all with count 0).
func pickConsumers(env Env, tenant string, count int) ([]Consumer, error) {
	cs := env.ConsumersOf(tenant)
	if len(cs) == 0 {
		return nil, fmt.Errorf("tenant %s has no consumers", tenant)
	}
	if count > 0 && count < len(cs) {
		cs = cs[:count]
	}
	return cs, nil
}

// consumerSlow slows some consumers for the span.
type consumerSlow struct {
	consumers []Consumer
	delay     time.Duration
}

func (s *consumerSlow) Inject(context.Context) error {
	for _, c := range s.consumers {
		c.SetReadDelay(s.delay)
	}
	return nil
}

func (s *consumerSlow) Heal(context.Context) error {
	for _, c := range s.consumers {
		c.SetReadDelay(0)
	}
	return nil
}
