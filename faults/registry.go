package faults

import "github.com/seqgate/seqgate/faults/kinds"

// Registry is every fault kind, in the order `seqgate faults` prints them. It is an explicit list:
// adding a kind means writing its file in faults/kinds and adding its Def here (see CONTRIBUTING.md).
var Registry = mustRegistry(
	register(kinds.TenantDBStall()),
	register(kinds.TenantDBLatency()),
	register(kinds.TenantDBDown()),
	register(kinds.MetaDBStall()),
	register(kinds.MetaDBLatency()),
	register(kinds.PodMetaDBLatency()),
	register(kinds.MetaDBDown()),
	register(kinds.PodCrash()),
	register(kinds.PodPause()),
	register(kinds.PodRestart()),
	register(kinds.OutboxPollerStall()),
	register(kinds.OutboxCommitDelay()),
	register(kinds.EventInsertFail()),
	register(kinds.ConsumerSlow()),
	register(kinds.ConsumerDisconnect()),
	register(kinds.TenantDelete()),
)
