package faults

import "time"

// KindMetaDBLatency is the name of the meta-DB latency fault.
const KindMetaDBLatency = "meta_db_latency"

func metaDBLatencyKind() Kind {
	return defineKind(Kind{
		Name:      KindMetaDBLatency,
		Simulates: "a slow meta DB: outbox inserts and polls take longer, so cross-pod delivery lags",
		Mechanism: "as tenant_db_latency, on the meta DB's proxy",
		Targets:   TargetMeta,
		Timing:    TimingSpan,
		resource:  "db",
	}, LatencyParams{Latency: 100 * time.Millisecond, Direction: "both"}, func(env Env, _ string, _ time.Duration, p LatencyParams) (Fault, error) {
		px, err := env.MetaProxy()
		if err != nil {
			return nil, err
		}
		return newDBLatency(px, KindMetaDBLatency, p), nil
	})
}
