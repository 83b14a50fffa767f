package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/inferload/inferload/record"
)

// WriteFleet renders `inferload fleet`'s answer for a terminal: what was
// planned, the replica curve (every size simulated, with its figures and
// verdict), the answer and why, and the cost when a price was given.
func WriteFleet(w io.Writer, f *record.Fleet) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "inferload fleet: %s replicas behind a %s router, %s (peak %s + %.0f%% headroom)\n",
		f.Profile, f.Router, record.LoadText(f.Load, f.Mode), record.LoadText(f.Peak, f.Mode), f.Headroom*100)
	fmt.Fprintf(&b, "simulated %.0f s after %.0f s of warm-up per size; SLOs %s at %.0f%% confidence, failure rate ≤ %.2f%%\n",
		f.WindowS, f.WarmupS, strings.Join(f.SLOs, ", "), f.Confidence*100, f.MaxFailureRate*100)
	if f.PerReplica > 0 {
		fmt.Fprintf(&b, "one replica alone carries about %s within the SLOs\n", record.LoadText(f.PerReplica, f.Mode))
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	names, at := f.Shown.Columns()
	fmt.Fprintf(tw, "replicas\treq/s\toutput tok/s\t%s ms\t%s ms\t%s ms\tfail %%\tbusy mean/max\tSLOs\t\n", names[0], names[1], names[2])
	for _, p := range f.Probes {
		verdict := "missed"
		if p.Passed {
			verdict = "met"
		}
		lat := at(p.Metrics)
		fmt.Fprintf(tw, "%d\t%.2f\t%.0f\t%s\t%s\t%s\t%.2f\t%.0f%%/%.0f%%\t%s\t\n", p.Replicas,
			p.Throughput.RequestsPerS, p.Throughput.OutputTokensPerS, formatMS(lat[0]),
			formatMS(lat[1]), formatMS(lat[2]), p.FailureRate*100,
			p.Utilisation*100, p.MaxUtilisation*100, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nAnswer: %s\n", f.Reason)
	if f.CostPerHour > 0 {
		fmt.Fprintf(&b, "cost: %.2f per hour (%d × %.2f), %.3f per million output tokens at the planned load\n",
			f.CostPerHour, f.Replicas, f.PricePerHour, f.CostPerMillionTokens)
	}
	if err := writeFleetRouters(&b, f.Routers); err != nil {
		return err
	}
	if c := f.ColdStart; c != nil {
		if err := writeColdStart(&b, c, f.Shown); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeFleetRouters shows the comparison of routers, one row each.
func writeFleetRouters(b *bytes.Buffer, rows []record.FleetRouter) error {
	if len(rows) == 0 {
		return nil
	}
	b.WriteString("\nRouters compared (same workload, load and SLOs):\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "router\treplicas\t%s ms\tprefix-cache hits\t\n", rows[0].Figure)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%%\t\n", r.Router, fleetRouterReplicas(r), formatMS(r.FigureMS), r.PrefixHitShare*100)
	}
	return tw.Flush()
}

// fleetRouterReplicas is a router's answer in words: its count, or "none"
// when no size up to the bound met the SLOs (its figures are then the
// largest size's).
func fleetRouterReplicas(r record.FleetRouter) string {
	if r.Replicas == 0 {
		return "none"
	}
	return fmt.Sprint(r.Replicas)
}

// writeColdStart shows the scale-out: its verdict, then each 30 s window.
func writeColdStart(b *bytes.Buffer, c *record.FleetColdStart, shown record.FleetShown) error {
	verdict := "the SLOs hold"
	if !c.Passed {
		verdict = "the SLOs are missed"
	}
	fmt.Fprintf(b, "\nScaling out from %d to %d replicas as the load ramps over %.0f s, new replicas up after %.0f s: %s over the %.0f s from the ramp's start\n",
		c.From, c.To, c.RampS, c.ColdStartS, verdict, c.JudgedS)
	for _, r := range c.Reasons {
		fmt.Fprintf(b, "  %s\n", r)
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	names, at := shown.Columns()
	fmt.Fprintf(tw, "from s\treplicas up\trequests\tmet SLOs\t%s ms\t\n", names[0])
	for _, w := range c.Windows {
		ttft := at(record.Metrics{TTFT: w.TTFT})[0]
		fmt.Fprintf(tw, "%.0f\t%d\t%d\t%.0f%%\t%s\t\n", w.StartS, w.Replicas, w.Requests, w.MetShare*100, formatMS(ttft))
	}
	return tw.Flush()
}
