package kinds

import (
	"fmt"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// PodMetaDBLatencyName is the name of the one-pod meta-DB latency fault.
const PodMetaDBLatencyName = "pod_meta_db_latency"

// PodMetaDBLatency declares pod_meta_db_latency: tenant_db_latency's mechanism on one pod's meta DB
// proxy.
func PodMetaDBLatency() fault.Def[LatencyParams] {
	return fault.Def[LatencyParams]{
		Name:      PodMetaDBLatencyName,
		Simulates: "one pod's path to the meta DB is slow (a bad node, a congested link): its outbox transactions commit late relative to the other pods', so outbox ids taken in one order become visible in another unless the outbox is ordered",
		Mechanism: "as tenant_db_latency, on the pod's own meta DB proxy (harness-run pods reach the meta DB through one proxy each, chained in front of the shared meta proxy that meta_db_* faults act on)",
		Targets:   fault.TargetPod,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourceDB,
		Defaults:  latencyDefaults,
		Build: func(env fault.Env, target string, _ time.Duration, p LatencyParams) (fault.Fault, error) {
			m, ok := env.(fault.PodMetaProxies)
			if !ok {
				return nil, fmt.Errorf("pod %s: the target has no per-pod meta DB proxies (only harness-run eventlogd pods do)", target)
			}
			px, err := m.PodMetaProxy(target)
			if err != nil {
				return nil, err
			}
			return newDBLatency(px, PodMetaDBLatencyName, p), nil
		},
	}
}
