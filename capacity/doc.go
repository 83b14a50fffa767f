// Package capacity plans capacity in virtual time on the simulator's
// batching model (sim.Engine): the reference table of a profile against
// published figures (Reference), the fit of a profile's costs to measured
// load levels (Fit, FitHeldOut), and fleets of replicas behind a router
// (RunFleet). It sends no request and runs no stage: the experiment
// package turns run directories and plans into its inputs.
package capacity
