package kinds

import (
	"context"
	"fmt"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// ConsumerSlowName is the name of the slow consumer fault.
const ConsumerSlowName = "consumer_slow"

// ConsumerSlowParams are the parameters of consumer_slow.
type ConsumerSlowParams struct {
	// ReadDelay is the pause before each SSE frame is read (0 = full speed).
	ReadDelay time.Duration `yaml:"read_delay" help:"pause before the consumer reads each SSE frame; slower than the event rate makes the server's per-connection queue fill"`
	// Count is how many of the tenant's consumers slow down, the first ones in order; 0 = all.
	Count int `yaml:"count" help:"how many of the tenant's consumers slow down (the first N in order); 0 = all of them"`
}

// ConsumerSlow declares consumer_slow.
func ConsumerSlow() fault.Def[ConsumerSlowParams] {
	return fault.Def[ConsumerSlowParams]{
		Name:      ConsumerSlowName,
		Simulates: "a subscriber that reads slower than events arrive (a slow network or a busy client): the server must signal the overflow (reset slow_consumer), never drop silently, never mass-close",
		Mechanism: "the harness's consumer waits read_delay before reading each frame (TCP backpressure reaches the server); Heal sets the delay back to 0",
		Targets:   fault.TargetTenant,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourceConsumers,
		Defaults:  ConsumerSlowParams{ReadDelay: 200 * time.Millisecond},
		Build: func(env fault.Env, target string, _ time.Duration, p ConsumerSlowParams) (fault.Fault, error) {
			cs, err := pickConsumers(env, target, p.Count)
			if err != nil {
				return nil, err
			}
			return &consumerSlow{consumers: cs, delay: p.ReadDelay}, nil
		},
	}
}

// pickConsumers returns the first count consumers of a tenant (all with count 0).
func pickConsumers(env fault.Env, tenant string, count int) ([]fault.Consumer, error) {
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
	consumers []fault.Consumer
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
