package kinds

import (
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// MetaDBDownName is the name of the meta-DB outage fault.
const MetaDBDownName = "meta_db_down"

// MetaDBDown declares meta_db_down: tenant_db_down's mechanism on the meta DB's proxy.
func MetaDBDown() fault.Def[DownParams] {
	return fault.Def[DownParams]{
		Name:      MetaDBDownName,
		Simulates: "the meta DB is down: outbox inserts fail and the poller cannot read, so peers are not woken (signal loss; events stay durable in tenant DBs)",
		Mechanism: "as tenant_db_down, on the meta DB's proxy",
		Targets:   fault.TargetMeta,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourceDB,
		Build: func(env fault.Env, _ string, _ time.Duration, _ DownParams) (fault.Fault, error) {
			px, err := env.MetaProxy()
			if err != nil {
				return nil, err
			}
			return &dbDown{proxy: px}, nil
		},
	}
}
