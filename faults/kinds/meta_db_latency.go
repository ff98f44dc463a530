package kinds

import (
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// MetaDBLatencyName is the name of the meta-DB latency fault.
const MetaDBLatencyName = "meta_db_latency"

// MetaDBLatency declares meta_db_latency: tenant_db_latency's mechanism on the meta DB's proxy.
func MetaDBLatency() fault.Def[LatencyParams] {
	return fault.Def[LatencyParams]{
		Name:      MetaDBLatencyName,
		Simulates: "a slow meta DB: outbox inserts and polls take longer, so cross-pod delivery lags",
		Mechanism: "as tenant_db_latency, on the meta DB's proxy",
		Targets:   fault.TargetMeta,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourceDB,
		Defaults:  latencyDefaults,
		Build: func(env fault.Env, _ string, _ time.Duration, p LatencyParams) (fault.Fault, error) {
			px, err := env.MetaProxy()
			if err != nil {
				return nil, err
			}
			return newDBLatency(px, MetaDBLatencyName, p), nil
		},
	}
}
