package record

// RandomRecords exposes the aggregate tests' record generator to the
// package's external tests (record_test), which may import rundir.
var RandomRecords = randomRecords
