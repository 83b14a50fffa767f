// Package rundir is the run directory's files: their names, formats,
// writers and readers (DESIGN.md, "The run directory"). Everyone who reads
// or writes a run directory goes through it; what the figures mean is
// record's and analyze's business.
package rundir
