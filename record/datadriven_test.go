package record_test

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/inferload/inferload/internal/ddtest"
	"github.com/inferload/inferload/record"
)

// TestDataDriven reads the figure math as data: testdata/figures/* hold
// compact record lines and the figures the aggregate must make of them.
// Refresh the expected outputs with
//
//	go test ./record/ -run DataDriven -rewrite
//
// and review the diff.
//
// One directive, aggregate, with arguments
//
//	warmup-end=µs measure-end=µs end=µs   the RunInfo (0 or absent: unknown)
//	show=(figures,…)                      what to print: percentiles, classes,
//	                                      buckets, goodput, throughput,
//	                                      failures, tpot
//
// and input lines, each one of
//
//	slo CLASS ttft=MS tpot=MS e2e=MS       an objective (CLASS "default" is the run's)
//	buckets N,N,…                          input-length bucket bounds
//	ID CLASS key=value… OUTCOME [flags]    one record
//
// A record's keys are in= (prompt tokens, server's and client's count
// alike), out= (output tokens), send=, ttft=, e2e= (µs, as a Result holds
// them: ttft and e2e from the latency origin), events=N (N content events
// evenly from ttft to e2e, so output tokens are spread over the stream;
// without it they all arrive at the end) and queue=µs (an open-loop
// request sent queue µs after its intended time, which is then the latency
// origin). CLASS "-" is no class. OUTCOME is ok or an error kind
// (http_5xx, …). Flags: warmup, nostream, expect (bad input: a 4xx is a
// pass).
func TestDataDriven(t *testing.T) {
	ddtest.Run(t, "testdata/figures", map[string]ddtest.Case{
		"aggregate": aggregateCase,
	})
}

func aggregateCase(t *testing.T, d *datadriven.TestData) string {
	var info record.RunInfo
	d.MaybeScanArgs(t, "warmup-end", &info.WarmupEndUS)
	d.MaybeScanArgs(t, "measure-end", &info.MeasureEndUS)
	d.MaybeScanArgs(t, "end", &info.EndUS)
	var show []string
	d.ScanArgs(t, "show", &show)

	a := record.NewAggregate()
	slos := &record.SLOs{Classes: map[string]record.SLO{}}
	var results []record.Result
	for _, line := range strings.Split(d.Input, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "slo":
			class, slo := parseSLO(t, d, f[1:])
			if class == record.DefaultClass {
				slos.Default = slo
			} else {
				slos.Classes[class] = slo
			}
		case f[0] == "buckets":
			var bounds []int
			for _, s := range strings.Split(f[1], ",") {
				bounds = append(bounds, atoi(t, d, s))
			}
			a.SetInputBuckets(bounds)
		default:
			results = append(results, parseRecord(t, d, f))
		}
	}
	a.SetSLOs(slos)
	for i := range results {
		a.Add(&results[i])
	}
	s := a.Summary(info)

	var b strings.Builder
	for _, what := range show {
		switch what {
		case "percentiles":
			showPercentiles(&b, s)
		case "classes":
			for _, name := range sortedKeys(s.Classes) {
				fmt.Fprintf(&b, "class %s:\n", name)
				showBreakdown(&b, "  ", s.Classes[name])
			}
		case "buckets":
			for i := range s.InputBuckets {
				ib := &s.InputBuckets[i]
				hi := strconv.Itoa(ib.MaxTokens)
				if ib.MaxTokens == 0 {
					hi = "∞" // the last bucket has no upper bound
				}
				fmt.Fprintf(&b, "bucket %s [%d, %s]:\n", ib.Label, ib.MinTokens, hi)
				showBreakdown(&b, "  ", &ib.Breakdown)
			}
		case "goodput":
			fmt.Fprintf(&b, "run: %s\n", goodputText(s.Goodput))
			for _, name := range sortedKeys(s.Classes) {
				fmt.Fprintf(&b, "class %s: %s\n", name, goodputText(s.Classes[name].Goodput))
			}
		case "throughput":
			fmt.Fprintf(&b, "window: %s s\n", num(s.WindowS))
			fmt.Fprintf(&b, "requests/s: %s\n", num(s.Throughput.RequestsPerS))
			fmt.Fprintf(&b, "output tokens/s: %s\n", num(s.Throughput.OutputTokensPerS))
			fmt.Fprintf(&b, "input tokens/s: %s\n", num(s.Throughput.InputTokensPerS))
			for _, w := range s.Warnings {
				if strings.HasPrefix(w, "throughput") {
					fmt.Fprintf(&b, "warning: %s\n", w)
				}
			}
		case "failures":
			showFailures(&b, "", s.Requests, s.FailureRate, s.Errors, s.FailedE2E)
		case "tpot":
			fmt.Fprintf(&b, "tpot ms: %s\n", statsText(s.Metrics.TPOT))
		default:
			d.Fatalf(t, "unknown figure %q", what)
		}
	}
	return b.String()
}

// parseSLO reads "CLASS ttft=MS tpot=MS e2e=MS".
func parseSLO(t *testing.T, d *datadriven.TestData, f []string) (string, record.SLO) {
	if len(f) == 0 {
		d.Fatalf(t, "slo: want a class")
	}
	var slo record.SLO
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		ms, err := strconv.ParseFloat(v, 64)
		if err != nil {
			d.Fatalf(t, "slo %s: %v", kv, err)
		}
		switch k {
		case "ttft":
			slo.TTFTMs = ms
		case "tpot":
			slo.TPOTMs = ms
		case "e2e":
			slo.E2EMs = ms
		default:
			d.Fatalf(t, "slo: unknown bound %q", k)
		}
	}
	return f[0], slo
}

// parseRecord reads "ID CLASS key=value… OUTCOME [flags]" into a Result.
func parseRecord(t *testing.T, d *datadriven.TestData, f []string) record.Result {
	if len(f) < 3 {
		d.Fatalf(t, "record %q: want ID CLASS key=value… OUTCOME", strings.Join(f, " "))
	}
	r := record.Result{ID: uint64(atoi(t, d, f[0])), Stream: true, TokenSource: record.TokensUsage}
	if r.ID == 0 {
		d.Fatalf(t, "record %q: the first field is the id, a number from 1", strings.Join(f, " "))
	}
	if f[1] != "-" {
		r.Class = f[1]
	}
	events, queue := 0, int64(0)
	for _, w := range f[2:] {
		k, v, isKV := strings.Cut(w, "=")
		if !isKV {
			switch w {
			case "ok":
			case "warmup":
				r.Warmup = true
			case "nostream":
				r.Stream = false
			case "expect":
				r.Expect = record.ExpectRejection
			default:
				r.Error = record.ErrorKind(w)
				if !slices.Contains(record.ErrorKinds, r.Error) {
					d.Fatalf(t, "record %s: %q is neither ok, a flag nor an error kind", f[0], w)
				}
			}
			continue
		}
		n := atoi(t, d, v)
		switch k {
		case "in":
			r.InputTokens, r.PromptTokensSent = n, n
		case "out":
			r.OutputTokens = n
		case "send":
			r.SendUS = int64(n)
		case "ttft":
			r.TTFTUS = int64(n)
		case "e2e":
			r.E2EUS = int64(n)
		case "events":
			events = n
		case "queue":
			queue = int64(n)
		default:
			d.Fatalf(t, "record %s: unknown key %q", f[0], k)
		}
	}
	if queue > 0 {
		r.OpenLoop, r.IntendedUS, r.QueueDelayUS = true, r.SendUS-queue, queue
	}
	// Events are offsets from the send time; TTFT and E2E from the origin.
	for i := range events {
		at := r.TTFTUS - queue
		if events > 1 {
			at += int64(i) * (r.E2EUS - r.TTFTUS) / int64(events-1)
		}
		r.EventsUS = append(r.EventsUS, at)
	}
	return r
}

func showPercentiles(b *strings.Builder, s *record.Summary) {
	m := s.Metrics
	fmt.Fprintf(b, "run:\n  ttft ms: %s\n  tpot ms: %s\n  e2e ms:  %s\n", statsText(m.TTFT), statsText(m.TPOT), statsText(m.E2E))
	for _, name := range sortedKeys(s.Classes) {
		m := s.Classes[name].Metrics
		fmt.Fprintf(b, "class %s:\n  ttft ms: %s\n  e2e ms:  %s\n", name, statsText(m.TTFT), statsText(m.E2E))
	}
	for _, ib := range s.InputBuckets {
		m := ib.Metrics
		fmt.Fprintf(b, "bucket %s:\n  ttft ms: %s\n  e2e ms:  %s\n", ib.Label, statsText(m.TTFT), statsText(m.E2E))
	}
}

func showBreakdown(b *strings.Builder, indent string, br *record.Breakdown) {
	showFailures(b, indent, br.Requests, br.FailureRate, br.Errors, br.FailedE2E)
	fmt.Fprintf(b, "%sttft ms: %s\n", indent, statsText(br.Metrics.TTFT))
	fmt.Fprintf(b, "%se2e ms: %s\n", indent, statsText(br.Metrics.E2E))
	fmt.Fprintf(b, "%sthroughput: %s requests/s, %s output tokens/s, %s input tokens/s\n", indent,
		num(br.Throughput.RequestsPerS), num(br.Throughput.OutputTokensPerS), num(br.Throughput.InputTokensPerS))
	fmt.Fprintf(b, "%sgoodput: %s\n", indent, goodputText(br.Goodput))
}

func showFailures(b *strings.Builder, indent string, r record.Requests, rate float64, errs map[string]int64, failed record.Stats) {
	fmt.Fprintf(b, "%srequests: total=%d succeeded=%d failed=%d rejected=%d warmup=%d\n",
		indent, r.Total, r.Succeeded, r.Failed, r.ExpectedRejections, r.Warmup)
	fmt.Fprintf(b, "%sfailure rate: %s\n", indent, num(rate))
	if len(errs) > 0 {
		var parts []string
		for _, k := range sortedKeys(errs) {
			parts = append(parts, fmt.Sprintf("%s=%d", k, errs[k]))
		}
		fmt.Fprintf(b, "%serrors: %s\n", indent, strings.Join(parts, " "))
		fmt.Fprintf(b, "%sfailed e2e ms: %s\n", indent, statsText(failed))
	}
}

func goodputText(g record.Goodput) string {
	return fmt.Sprintf("slo ttft=%s tpot=%s e2e=%s met=%d attainment=%s requests/s=%s",
		num(g.SLO.TTFTMs), num(g.SLO.TPOTMs), num(g.SLO.E2EMs), g.Met, num(g.Attainment), num(g.RequestsPerS))
}

func statsText(s record.Stats) string {
	if s.Count == 0 {
		return "n=0"
	}
	return fmt.Sprintf("n=%d min=%s p50=%s p90=%s p99=%s max=%s mean=%s",
		s.Count, num(s.Min), num(s.P50), num(s.P90), num(s.P99), num(s.Max), num(s.Mean))
}

// num prints a figure with at most 6 decimals and no trailing zeros.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

func atoi(t *testing.T, d *datadriven.TestData, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		d.Fatalf(t, "%q is not an integer", s)
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
