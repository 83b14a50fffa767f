// Package summary turns a run directory into its summary: the resolved
// plan, the experiment's design (experiment.json), the records, the events
// and the telemetry in; summary.json and report.html out, through one
// ordered assembly (Assemble). A live run feeds the same assembly each
// record as it writes it (Live) and ends with FinishLive; `inferload
// report` and a merge of segments call Rebuild. Both write the same bytes
// (experiment's TestRebuildIsIdenticalForEveryCommand). The package runs
// nothing: whatever rebuilds a run needs no orchestrator (archtest).
package summary
