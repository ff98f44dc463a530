package verifier

// checks is the list of checks, in the order of the summary's checks (the gateFails ones), of JUnit's
// report-only testcases and of the docs' checks table. Their checkers (the descriptors with a build)
// are built, observe and finish in this order too, so a checker may read what an earlier one wrote:
// confidence and projection read loss, the windows read latency and drops, slowest reads the faults.
// A new check is its file (its checker and its descriptor) and its line here.
var checks = []*descriptor{
	&peersCheckDesc,
	&lossBudgetCheck,
	&silentCheck,
	&lostCheck,
	&confidenceCheckDesc,
	&recoveredCheckDesc,
	&resyncBuild,
	&skippedCheckDesc,
	&resetCoveredCheck,
	&leaksCheckDesc,
	&undeliveredCheckDesc,
	&tenantGoneCheck,
	&coldCheckDesc,
	&structuralCheckDesc,
	&batchCheckDesc,
	&droppedFractionCheck,
	&resyncMissedCheck,
	&spuriousCheckDesc,
	&duplicatesCheckDesc,
	&unexpectedCheckDesc,
	&seqMismatchCheckDesc,
	&unresolvedCheck,
	&loadCheck,
	&evidenceCheckDesc,
	&spuriousCursorCheckDesc,
	&recoveryCheckDesc,
	&latencyCheckDesc,
	&issueLatencyCheck,
	&reorderCheckDesc,
	&resetsCheckDesc,
	&reconnectCheckDesc,
	&projectionCheckDesc,
	&unrecoveredCheck,
	&metricsCheck,
	&slowestCheck,
	&resyncProvenCheck,
	&resyncUnprovenCheck,
}
