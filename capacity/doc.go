// Package capacity plans capacity in virtual time on the simulator's
// batching model (sim.Engine, through the few methods of batchModel): the
// reference table of a profile against published figures (Reference);
// calibration, the one meaning of the word in inferload: a profile's
// costs fitted to measured load levels (Calibrate over run directories;
// Fit, FitHeldOut on levels); and fleets of replicas behind a router
// (PlanFleet, SimulateColdStart over RunFleet). It sends no request, runs
// no stage and reads no plan: the CLI reads plans and summaries into its
// inputs (FleetWorkload, MeasuredRun), since plan and summary know the
// engine.
package capacity
