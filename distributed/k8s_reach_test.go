package distributed

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/plan"
)

// TestClusterWarnings: each URL whose host a pod cannot reach as meant is
// warned about, naming its field; addresses a cluster may well reach
// (private ones included) are not.
func TestClusterWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		want string // "" for no warning
	}{
		{"http://127.0.0.1:8000/v1", "loopback"},      // the pod itself
		{"http://127.8.9.10:8000/v1", "loopback"},     // all of 127.0.0.0/8
		{"http://localhost:8000/v1", "loopback"},      // the name
		{"http://LocalHost:8000/v1", "loopback"},      // in any case
		{"http://vllm.localhost:8000/v1", "loopback"}, // *.localhost resolves to loopback
		{"http://[::1]:8000/v1", "loopback"},          // IPv6 loopback
		{"http://0.0.0.0:8000/v1", "unspecified"},     // a listen address
		{"http://169.254.10.1:8000/v1", "link-local"}, // its own link only
		{"http://[fe80::1]:8000/v1", "link-local"},    // IPv6 link-local
		{"http://10.0.3.7:8000/v1", ""},               // RFC 1918: a cluster's own addresses look so too
		{"http://192.168.1.20:8000/v1", ""},           // RFC 1918
		{"http://vllm.serving.svc:8000/v1", ""},       // a Service name
		{"https://api.example.com/v1", ""},            // a public name
		{"http://127.0.0.1.nip.io:8000/v1", ""},       // a name, not an address: cannot be told from here
	}
	for _, tt := range tests {
		p, err := plan.Parse("plan.yaml", []byte("target: {url: \""+tt.url+"\", model: m}\nload: {concurrency: 2}\nobserve: {scrape: \"off\"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		got := ClusterWarnings(p)
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%s: warned %q; want nothing", tt.url, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want) || !strings.HasPrefix(got[0], "target.url "+tt.url)):
			t.Errorf("%s: %q; want one target.url warning saying %s", tt.url, got, tt.want)
		}
	}
	// The other URLs a pod calls: a chain's steps and the scrape list.
	p, err := plan.Parse("plan.yaml", []byte(`target: {url: "http://vllm:8000/v1", model: m}
load: {concurrency: 2}
observe: {scrape: "http://vllm:8000/metrics, http://localhost:9400/metrics"}
workload:
  classes:
    - name: rag
      weight: 1
      chain:
        - {api: embeddings, url: "http://127.0.0.1:8001/v1"}
        - {http: {url: "http://localhost:6333/search?q={{prompt}}"}}
        - {api: chat}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(ClusterWarnings(p), "\n")
	for _, field := range []string{"workload.classes[0].chain[0].url", "workload.classes[0].chain[1].http.url", "observe.scrape http://localhost:9400"} {
		if !strings.Contains(got, field) {
			t.Errorf("warnings %q lack %s", got, field)
		}
	}
	if strings.Contains(got, "http://vllm:8000") {
		t.Errorf("warnings %q name a reachable URL", got)
	}
}
