package faults

import "time"

// KindMetaDBDown is the name of the meta-DB outage fault.
const KindMetaDBDown = "meta_db_down"

func metaDBDownKind() Kind {
	return defineKind(Kind{
		Name:      KindMetaDBDown,
		Simulates: "the meta DB is down: outbox inserts fail and the poller cannot read, so peers are not woken (signal loss; events stay durable in tenant DBs)",
		Mechanism: "as tenant_db_down, on the meta DB's proxy",
		Targets:   TargetMeta,
		Timing:    TimingSpan,
		resource:  "db",
	}, DownParams{}, func(env Env, _ string, _ time.Duration, _ DownParams) (Fault, error) {
		px, err := env.MetaProxy()
		if err != nil {
			return nil, err
		}
		return &dbDown{proxy: px}, nil
	})
}
