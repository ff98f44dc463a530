package faults

import "time"

// KindMetaDBStall is the name of the meta-DB stall fault.
const KindMetaDBStall = "meta_db_stall"

func metaDBStallKind() Kind {
	return defineKind(Kind{
		Name:      KindMetaDBStall,
		Simulates: "the meta DB stops answering: outbox inserts and the outbox poller hang, so cross-pod wakeups stop (signal loss) while tenant DBs stay healthy",
		Mechanism: "as tenant_db_stall, on the meta DB's proxy",
		Targets:   TargetMeta,
		Timing:    TimingSpan,
		resource:  "db",
	}, StallParams{Then: ThenReset}, func(env Env, _ string, _ time.Duration, p StallParams) (Fault, error) {
		px, err := env.MetaProxy()
		if err != nil {
			return nil, err
		}
		return newDBStall(px, KindMetaDBStall, p.Then), nil
	})
}
