package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestThresholdsPlan(t *testing.T) {
	t.Parallel()
	const head = "target: {url: http://127.0.0.1:1/v1}\nload: {concurrency: 1}\n"
	tests := []struct {
		name    string
		yaml    string
		args    []string
		want    []string
		wantErr string // substring; "" means it loads
	}{
		// A block list from the file.
		{name: "file", yaml: head + "thresholds:\n  - ttft_ms.p99 < 2000\n  - error_rate < 0.01\n",
			want: []string{"ttft_ms.p99 < 2000", "error_rate < 0.01"}},
		// --threshold adds to the file's list rather than replacing it.
		{name: "flag adds", yaml: head + "thresholds: [ttft_ms.p99 < 2000]\n", args: []string{"--threshold", "output_tokens_per_s > 5", "--threshold", "e2e_ms.p99<9e3"},
			want: []string{"ttft_ms.p99 < 2000", "output_tokens_per_s > 5", "e2e_ms.p99<9e3"}},
		// A bad expression is an error that names its line and position.
		{name: "bad in file", yaml: head + "thresholds:\n  - ttft_ms.p99 < 2000\n  - ttft_ms.p99 below 5\n",
			wantErr: "plan.yaml:5: thresholds[1]"},
		// A bad flag expression names the flag.
		{name: "bad flag", yaml: head, args: []string{"--threshold", "failure_rate < 2s"}, wantErr: "--threshold"},
		// One language with the SLOs: a short latency name and a duration.
		{name: "durations", yaml: head + "thresholds: [ttft.p99 < 2s]\n", want: []string{"ttft.p99 < 2s"}},
		// A mapping is not a list.
		{name: "not a list", yaml: head + "thresholds: {a: 1}\n", wantErr: "want a list"},
	}
	for _, tt := range tests {
		path := writePlan(t, tt.yaml)
		p, err := Load(path, newFlags(t, tt.args...), nil)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want it to contain %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, p.Thresholds); diff != "" {
			t.Errorf("%s: thresholds (-want +got):\n%s", tt.name, diff)
		}
		// Validate parsed them once, in order.
		checks, err := p.Checks()
		if err != nil || len(checks) != len(tt.want) || (len(checks) > 0 && checks[0].Expr != tt.want[0]) {
			t.Errorf("%s: checks %+v, %v; want %d parsed", tt.name, checks, err, len(tt.want))
		}
		if tt.name == "durations" && (checks[0].Metric != "ttft_ms.p99" || checks[0].Limit != 2000) {
			t.Errorf("durations: %+v, want ttft_ms.p99 < 2000", checks[0])
		}
		// plan.yaml in the run directory keeps them, so a rebuild checks them again.
		red, err := p.Redacted()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse("plan.yaml", red)
		if err != nil {
			t.Fatalf("%s: reparse of redacted plan: %v\n%s", tt.name, err, red)
		}
		if diff := cmp.Diff(tt.want, back.Thresholds); diff != "" {
			t.Errorf("%s: thresholds after a round trip (-want +got):\n%s", tt.name, diff)
		}
	}
}
