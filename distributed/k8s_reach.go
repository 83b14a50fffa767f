package distributed

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/inferload/inferload/internal/httpguard"
	"github.com/inferload/inferload/plan"
)

// ClusterWarnings are the plan's URLs that a pod cannot reach as the user
// meant them, one line each, for whoever generates the manifests. The
// rule, on each URL's host:
//
//   - a loopback name or address (localhost, *.localhost, 127.0.0.0/8,
//     ::1): in a pod it names the pod itself, never the machine the plan
//     was written on;
//   - an unspecified address (0.0.0.0, ::): a listen address, not one to
//     connect to;
//   - a link-local address (169.254.0.0/16, fe80::/10): reachable from
//     its own link only, which a pod's network is not.
//
// Private addresses (RFC 1918, fc00::/7) get no word: a cluster's own
// Service and pod addresses are private too, so such a URL is as likely
// right as wrong and a note would be noise. A name the cluster may not
// resolve cannot be told from here either.
func ClusterWarnings(p *plan.Plan) []string {
	var out []string
	check := func(field, raw string) {
		if why := unreachableFromPods(raw); why != "" {
			out = append(out, fmt.Sprintf("%s %s: %s; give an address the cluster reaches (a Service name like http://vllm.serving:8000/v1, or a node's address)", field, raw, why))
		}
	}
	check("target.url", p.Target.URL)
	for i, c := range p.Workload.Classes {
		for j, s := range c.Chain {
			check(fmt.Sprintf("workload.classes[%d].chain[%d].url", i, j), s.URL)
			if s.HTTP != nil {
				check(fmt.Sprintf("workload.classes[%d].chain[%d].http.url", i, j), s.HTTP.URL)
			}
		}
	}
	if raw := strings.TrimSpace(p.Observe.Scrape); raw != "off" {
		for s := range strings.SplitSeq(raw, ",") {
			check("observe.scrape", strings.TrimSpace(s))
		}
	}
	return out
}

// unreachableFromPods says why a URL's host is not one a pod reaches as
// meant ("" when it may be; ClusterWarnings has the rule).
func unreachableFromPods(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(strings.ReplaceAll(raw, "{{prompt}}", "x"))
	if err != nil || u.Hostname() == "" {
		return ""
	}
	host := u.Hostname()
	if httpguard.LoopbackHost(host) || strings.HasSuffix(strings.ToLower(host), ".localhost") || strings.EqualFold(host, "localhost") {
		return "a loopback address, which in a load pod is the pod itself"
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return ""
	case ip.IsUnspecified():
		return "an unspecified address (a listen address), not one a pod can connect to"
	case ip.IsLinkLocalUnicast():
		return "a link-local address, reachable from its own link only, which a pod's network is not"
	}
	return ""
}
