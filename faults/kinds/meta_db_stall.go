package kinds

import (
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// MetaDBStallName is the name of the meta-DB stall fault.
const MetaDBStallName = "meta_db_stall"

// MetaDBStall declares meta_db_stall: tenant_db_stall's mechanism on the meta DB's proxy.
func MetaDBStall() fault.Def[StallParams] {
	return fault.Def[StallParams]{
		Name:      MetaDBStallName,
		Simulates: "the meta DB stops answering: outbox inserts and the outbox poller hang, so cross-pod wakeups stop (signal loss) while tenant DBs stay healthy",
		Mechanism: "as tenant_db_stall, on the meta DB's proxy",
		Targets:   fault.TargetMeta,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourceDB,
		Defaults:  stallDefaults,
		Build: func(env fault.Env, _ string, _ time.Duration, p StallParams) (fault.Fault, error) {
			px, err := env.MetaProxy()
			if err != nil {
				return nil, err
			}
			return newDBStall(px, MetaDBStallName, p.Then), nil
		},
	}
}
