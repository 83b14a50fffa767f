package record

import (
	"bytes"
	"testing"
)

// classed is a streamed success of class c with a prompt of in tokens and
// a TTFT of ttftMS milliseconds.
func classed(c string, in int, ttftMS int64) Result {
	r := streamed(0, []int64{ttftMS * 1000, ttftMS*1000 + 10_000}, ttftMS*1000+20_000, 2)
	r.Class, r.PromptTokensSent, r.InputTokens = c, in, in
	return r
}

// rejected is a bad-input request refused with status (4xx or 5xx).
func rejected(status int, kind ErrorKind) Result {
	return Result{Class: "bad_input", Expect: ExpectRejection, Status: status, Error: kind, E2EUS: 2000, PromptTokensSent: 5000}
}

func TestBreakdownByClassAndBucket(t *testing.T) {
	t.Parallel()
	// 90 short chats at 100 ms TTFT, 10 long documents at 900 ms; one
	// failed chat; bad input: 3 refused with a 400 (passes), 1 with a 500.
	var recs []Result
	recs = append(recs, repeat(90, classed("chat", 128, 100))...)
	recs = append(recs, repeat(10, classed("doc", 2048, 900))...)
	recs = append(recs, withRes(classed("chat", 128, 100), func(r *Result) { r.Error, r.Status = ErrHTTP5xx, 503 }))
	recs = append(recs, repeat(3, rejected(400, ErrHTTP4xx))...)
	recs = append(recs, rejected(500, ErrHTTP5xx))
	recs = append(recs, withRes(rejected(429, ErrHTTP429), func(r *Result) { r.Warmup = true }))
	got := flatten(t, summarize(closedInfo, recs))
	tests := []struct {
		path string
		want any
	}{
		// Each class has its own TTFT distribution: percentiles are never mixed.
		{"classes.chat.metrics.ttft_ms.p99", 100.0},
		{"classes.doc.metrics.ttft_ms.p50", 900.0},
		// The overall P99 sits in the documents' tail (10% of requests).
		{"metrics.ttft_ms.p99", 900.0},
		// Counts and failure rates per class.
		{"classes.chat.requests.succeeded", 90.0},
		{"classes.chat.requests.failed", 1.0},
		{"classes.chat.errors.http_5xx", 1.0},
		{"classes.doc.failure_rate", 0.0},
		// Expected rejections are passes: counted apart, not failures.
		{"classes.bad_input.requests.expected_rejections", 3.0},
		{"classes.bad_input.requests.failed", 1.0},
		{"classes.bad_input.failure_rate", 0.25},
		{"classes.bad_input.errors.http_5xx", 1.0},
		// A 429 is never an expected rejection (here in the warm-up, where it
		// still counts as a failed warm-up request).
		{"classes.bad_input.requests.warmup", 1.0},
		{"requests.total", 106.0},
		{"requests.expected_rejections", 3.0},
		{"requests.failed", 2.0},
		{"failure_rate", 2.0 / 105},
		// Per-class throughput over the run's 10 s window.
		{"classes.doc.throughput.requests_per_s", 1.0},
		{"classes.chat.throughput.requests_per_s", 9.0},
		{"classes.chat.tokens.input_total", 90.0 * 128},
	}
	for _, tt := range tests {
		checkPath(t, got, tt.path, tt.want)
	}
	s := summarize(closedInfo, recs)
	// Buckets by prompt length: chats ≤256, documents ≤4096, bad input >4096.
	wantBuckets := []struct {
		label    string
		min, max int
		total    int64
		p99      float64
	}{
		{"<=256", 0, 256, 91, 100},
		{"<=1024", 257, 1024, 0, 0},
		{"<=4096", 1025, 4096, 10, 900},
		{">4096", 4097, 0, 5, 0},
	}
	if len(s.InputBuckets) != len(wantBuckets) {
		t.Fatalf("%d buckets, want %d", len(s.InputBuckets), len(wantBuckets))
	}
	for k, w := range wantBuckets {
		b := s.InputBuckets[k]
		if b.Label != w.label || b.MinTokens != w.min || b.MaxTokens != w.max || b.Requests.Total != w.total ||
			b.Metrics.TTFT.P99 < w.p99*0.999 || b.Metrics.TTFT.P99 > w.p99*1.001 {
			t.Errorf("bucket %d = %s [%d,%d] total %d p99 %v; want %+v", k, b.Label, b.MinTokens, b.MaxTokens,
				b.Requests.Total, b.Metrics.TTFT.P99, w)
		}
	}
}

func TestBreakdownCustomBucketsAndOrder(t *testing.T) {
	t.Parallel()
	recs := randomRecords(300, 4)
	for i := range recs {
		recs[i].Class = []string{"a", "b", ""}[i%3]
		recs[i].PromptTokensSent = i * 7
	}
	encode := func(order []int) []byte {
		a := NewAggregate()
		a.SetInputBuckets([]int{500, 1000})
		for _, i := range order {
			a.Add(&recs[i])
		}
		var buf bytes.Buffer
		if err := EncodeSummary(&buf, a.Summary(closedInfo)); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	fwd, rev := make([]int, len(recs)), make([]int, len(recs))
	for i := range recs {
		fwd[i], rev[i] = i, len(recs)-1-i
	}
	// The breakdowns, like the rest, do not depend on record order.
	if !bytes.Equal(encode(fwd), encode(rev)) {
		t.Error("summary depends on record order")
	}
	a := NewAggregate()
	a.SetInputBuckets([]int{500, 1000})
	for i := range recs {
		a.Add(&recs[i])
	}
	s := a.Summary(closedInfo)
	// Records without a class are the default class; custom bounds give
	// three buckets that together hold every record.
	if len(s.Classes) != 3 || s.Classes[DefaultClass] == nil || s.Classes[DefaultClass].Requests.Total != 100 {
		t.Errorf("classes %v", s.Classes)
	}
	var total int64
	for _, b := range s.InputBuckets {
		total += b.Requests.Total
	}
	if len(s.InputBuckets) != 3 || s.InputBuckets[2].Label != ">1000" || total != int64(len(recs)) {
		t.Errorf("buckets %d, last %q, holding %d of %d", len(s.InputBuckets), s.InputBuckets[2].Label, total, len(recs))
	}
}
