package enginetest

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// Agreement is how a run's measurement agrees with llama-server's own
// account of each request (its in-band timings): what
// TestLlamaMeasurementAgreement checks and realknee reports.
type Agreement struct {
	// Timed is how many measured requests carried the server's timings
	// and a TPOT of their own (at least 2 output tokens).
	Timed int
	// OutsideP50MS and OutsideP99MS are the client's TTFT less the
	// server's prompt time (prompt_ms), across the run: loopback HTTP and
	// the server's own request handling when nothing waits for a slot.
	OutsideP50MS, OutsideP99MS float64
	// TPOTErrMedian and TPOTErrMax are |TPOT − server TPOT| ÷ server TPOT
	// (a fraction), the server's TPOT being predicted_ms ÷
	// (predicted_n − 1).
	TPOTErrMedian, TPOTErrMax float64
	// EndErrMedianUS is the median of the client's first token → end of
	// reply (E2E − TTFT) less the server's generation time (predicted_ms),
	// in µs: how far the end of a reply is stamped from where the server
	// put it (EndAgainstServer).
	EndErrMedianUS int64
}

// EndAgainstServer is how far r's first token → end of reply (E2E −
// TTFT) is from the server's own generation time (llama.cpp
// predicted_ms), in µs: both ends of the client's interval are kernel
// receive stamps, so what is left is the server's own write of its last
// chunk and [DONE], and loopback.
func EndAgainstServer(r *record.Result) int64 {
	return (r.E2EUS - r.TTFTUS) - r.Server.DecodeUS
}

// MeasureAgreement compares run directory dir's records with the server
// timings each carried; sum is the run's summary.
func MeasureAgreement(dir string, sum *record.Summary) (Agreement, error) {
	if sum.ServerTime == nil {
		return Agreement{}, fmt.Errorf("%s: no request carried the server's timings", dir)
	}
	a := Agreement{OutsideP50MS: sum.ServerTime.OutsideMS.P50, OutsideP99MS: sum.ServerTime.OutsideMS.P99}
	var errs []float64
	var ends []int64
	_, err := rundir.ReadRecords(filepath.Join(dir, rundir.Records), func(r *record.Result) error {
		if !r.Warmup && r.Server != nil && r.OK() {
			ends = append(ends, EndAgainstServer(r))
		}
		tpot, ok := record.TPOTUS(r)
		if !ok || r.Warmup || r.Server == nil || r.Server.DecodeN < 2 {
			return nil
		}
		server := float64(r.Server.DecodeUS) / float64(r.Server.DecodeN-1)
		errs = append(errs, math.Abs(float64(tpot)-server)/server)
		return nil
	})
	if err != nil {
		return Agreement{}, err
	}
	if a.Timed = len(errs); a.Timed == 0 {
		return a, fmt.Errorf("%s: no record with a TPOT and the server's decode timings", dir)
	}
	slices.Sort(errs)
	a.TPOTErrMedian, a.TPOTErrMax = errs[len(errs)/2], errs[len(errs)-1]
	slices.Sort(ends)
	a.EndErrMedianUS = ends[len(ends)/2]
	return a, nil
}
