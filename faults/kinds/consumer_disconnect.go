package kinds

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// ConsumerDisconnectName is the name of the consumer disconnect fault.
const ConsumerDisconnectName = "consumer_disconnect"

// ConsumerDisconnectParams are the parameters of consumer_disconnect.
type ConsumerDisconnectParams struct {
	// Count is how many of each target tenant's consumers lose their connection, the first ones in
	// order; 0 = all.
	Count int `yaml:"count" help:"how many of each target tenant's consumers lose their connection at once (the first N in order); 0 = all of them"`
}

// ConsumerDisconnect declares consumer_disconnect.
func ConsumerDisconnect() fault.Def[ConsumerDisconnectParams] {
	return fault.Def[ConsumerDisconnectParams]{
		Name:      ConsumerDisconnectName,
		Simulates: "many subscribers lose their connections at the same moment (a load balancer restart, a client-side network blip) and all reconnect with ?since=: a reconnect storm from the client side",
		Mechanism: "the harness closes each chosen consumer's current connection concurrently; the consumers reconnect by their own policy; instant (no `for`)",
		Targets:   fault.TargetTenant,
		Timing:    fault.TimingInstant,
		Resource:  fault.ResourceConsumers,
		Build: func(env fault.Env, target string, _ time.Duration, p ConsumerDisconnectParams) (fault.Fault, error) {
			cs, err := pickConsumers(env, target, p.Count)
			if err != nil {
				return nil, err
			}
			return &consumerDisconnect{consumers: cs}, nil
		},
	}
}

// consumerDisconnect drops connections once; there is nothing to heal (the clients reconnect).
type consumerDisconnect struct {
	consumers []fault.Consumer
}

func (d *consumerDisconnect) Inject(context.Context) error {
	errs := make([]error, len(d.consumers))
	var wg sync.WaitGroup
	for i, c := range d.consumers {
		wg.Go(func() {
			if err := c.Disconnect(); err != nil {
				errs[i] = fmt.Errorf("consumer %s: disconnect: %w", c.Name(), err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (d *consumerDisconnect) Heal(context.Context) error { return nil }
