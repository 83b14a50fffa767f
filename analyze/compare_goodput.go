package analyze

// This file: session and task goodput in a comparison (docs/compare.md,
// "Session and task goodput"). Unlike every other figure, compare reads
// them from each run's summary.json, where each session's and task's
// calls were judged against that run's own SLOs: the records alone do
// not say what the objective was. A share judged by one objective is no
// measure of a share judged by another, so a class whose SLOs differ
// between the runs is not compared, and the comparison says why.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/inferload/inferload/record"
)

// GoodputShare is one class's session or task goodput as its run's
// summary.json counted it: Met of Total sessions (completed + failed) or
// tasks met every call's SLO, the class's objective.
type GoodputShare struct {
	SLO        record.SLO
	Met, Total int64
	// mixed: repeats of one side (MergeRuns) were judged by different SLOs.
	mixed bool
}

// goodputKind is one goodput figure: its name in compare.json and where
// a run keeps its shares.
type goodputKind struct {
	name string
	of   func(*RunSamples) map[string]GoodputShare
}

var goodputKinds = []goodputKind{
	{"session_goodput", func(rs *RunSamples) map[string]GoodputShare { return rs.SessionGoodput }},
	{"task_goodput", func(rs *RunSamples) map[string]GoodputShare { return rs.TaskGoodput }},
}

// kindOf is the goodput kind fig names ("session_goodput"); false for
// any other figure.
func kindOf(fig string) (goodputKind, bool) {
	for _, k := range goodputKinds {
		if fig == k.name {
			return k, true
		}
	}
	return goodputKind{}, false
}

// isGoodput reports whether fig is a goodput figure.
func isGoodput(fig string) bool {
	_, ok := kindOf(fig)
	return ok
}

// goodput adds each kind's rows: one per class both runs judged by the
// same bounded SLO, and an overall row pooling those classes (each
// session still judged by its own class's SLO). A class whose SLOs differ
// gets a warning instead; a class without an SLO judged nothing (every
// success would count) and gets no row.
func (m comparer) goodput(c *Comparison, base, cur *RunSamples) {
	for _, k := range goodputKinds {
		bm, cm := k.of(base), k.of(cur)
		var classRows []Delta
		var pb, pc GoodputShare
		var pooled []string
		for _, class := range sharedKeys(bm, cm) {
			b, cu := bm[class], cm[class]
			if why := sloMismatch(b, cu); why != "" {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s of class %s not compared: %s", k.name, class, why))
				continue
			}
			if !b.SLO.Bounded() || b.Total == 0 || cu.Total == 0 {
				continue
			}
			classRows = append(classRows, m.proportion("classes."+class+"."+k.name, b.Met, b.Total, cu.Met, cu.Total, higherIsBetter))
			pb.Met, pb.Total = pb.Met+b.Met, pb.Total+b.Total
			pc.Met, pc.Total = pc.Met+cu.Met, pc.Total+cu.Total
			pooled = append(pooled, class)
		}
		if len(pooled) == 0 {
			continue
		}
		m.pooled[k.name] = pooled
		c.Deltas = append(c.Deltas, m.proportion(k.name, pb.Met, pb.Total, pc.Met, pc.Total, higherIsBetter))
		c.Deltas = append(c.Deltas, classRows...)
	}
}

// sloMismatch says why two runs' shares of one class cannot be compared:
// their SLOs differ (or a side's repeats did); "" when they can.
func sloMismatch(b, cur GoodputShare) string {
	switch {
	case b.mixed:
		return "the baseline runs were judged by different SLOs"
	case cur.mixed:
		return "the current runs were judged by different SLOs"
	case b.SLO != cur.SLO:
		return fmt.Sprintf("the runs' SLOs differ (baseline %s, current %s)", b.SLO, cur.SLO)
	}
	return ""
}

// verdict is one session's or task's goodput verdict: its class, and
// whether it met the class's SLO.
type verdict struct {
	class string
	met   bool
}

// judgeSession keeps whole conversation c's verdict when session goodput
// counts it (record.Conversation.Counted), judged as summary.json's.
func (rs *RunSamples) judgeSession(c *record.Conversation) {
	if _, ok := rs.SessionGoodput[c.Class()]; ok && c.Counted() {
		rs.addVerdict("session_goodput", verdict{c.Class(), c.Met()})
	}
}

// judgeTask keeps the verdict of r, when it is a measured task of a
// class with task goodput, by task goodput's rule (record.TaskMet).
func (rs *RunSamples) judgeTask(r *record.Result, class string) {
	share, ok := rs.TaskGoodput[class]
	if !ok || len(r.Chain) == 0 || r.Warmup {
		return
	}
	rs.addVerdict("task_goodput", verdict{class, record.TaskMet(r, share.SLO)})
}

func (rs *RunSamples) addVerdict(fig string, v verdict) {
	if rs.verdicts == nil {
		rs.verdicts = map[string][]verdict{}
	}
	rs.verdicts[fig] = append(rs.verdicts[fig], v)
}

// orderedVerdicts is, in the order they finished, the met flags of
// goodput figure metric's sessions or tasks: its class's, or those of the
// classes its overall row pools.
func orderedVerdicts(rs *RunSamples, metric string, pooled []string) []bool {
	prefix, fig := splitMetric(metric)
	classes := pooled
	if prefix != "" {
		classes = []string{strings.TrimSuffix(strings.TrimPrefix(prefix, "classes."), ".")}
	}
	var out []bool
	for _, v := range rs.verdicts[fig] {
		if slices.Contains(classes, v.class) {
			out = append(out, v.met)
		}
	}
	return out
}

// runShare is one run's share of goodput figure metric: its class's, or
// pooled over classes (the overall row's); false when the run has none.
func runShare(rs *RunSamples, metric string, classes []string) (float64, bool) {
	prefix, fig := splitMetric(metric)
	k, _ := kindOf(fig)
	if prefix != "" {
		classes = []string{strings.TrimSuffix(strings.TrimPrefix(prefix, "classes."), ".")}
	}
	var met, total int64
	for _, class := range classes {
		s := k.of(rs)[class]
		met, total = met+s.Met, total+s.Total
	}
	return float64(met) / float64(max(total, 1)), total > 0
}

// mergeShares adds src's shares into dst (allocated when nil), marking a
// class mixed when the two were judged by different SLOs.
func mergeShares(dst, src map[string]GoodputShare) map[string]GoodputShare {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]GoodputShare{}
	}
	for class, s := range src {
		d, seen := dst[class]
		if !seen {
			dst[class] = s
			continue
		}
		d.mixed = d.mixed || s.mixed || d.SLO != s.SLO
		d.Met, d.Total = d.Met+s.Met, d.Total+s.Total
		dst[class] = d
	}
	return dst
}

// sharedKeys are the keys both maps have, sorted.
func sharedKeys(a, b map[string]GoodputShare) []string {
	var out []string
	for k := range a {
		if _, ok := b[k]; ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
