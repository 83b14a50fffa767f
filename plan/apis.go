package plan

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/inferload/inferload/protocol"
)

// apis checks what the plan's APIs need of the target: a base URL of the
// shape they take (the server's root for a native API, .../v1 for the
// OpenAI ones), a model for the APIs whose path names it, and one shape
// for all: target.url is one base URL, so a plan cannot mix an OpenAI API
// with a native one.
func (v *validator) apis() {
	t := &v.p.Target
	used := map[protocol.API]string{} // API -> the field that chose it
	if knownAPI(t.API) {
		used[protocol.API(t.API)] = "target.api"
	}
	for k, c := range v.p.Workload.Classes {
		if knownAPI(c.API) && !c.IsGraph() {
			used[protocol.API(c.API)] = fmt.Sprintf("workload.classes[%d].api", k)
		}
	}
	if len(v.p.Workload.Classes) > 0 && !v.defaultAPIUsed() {
		delete(used, protocol.API(t.API)) // every class overrides it
	}
	apis := make([]protocol.API, 0, len(used))
	for api := range used {
		apis = append(apis, api)
	}
	sort.Slice(apis, func(i, j int) bool { return apis[i] < apis[j] })
	var openai, native protocol.API
	for _, api := range apis {
		if api.Native() {
			native = api
		} else {
			openai = api
		}
		if api.NeedsModel() && t.Model == "" {
			why := "its endpoint's path names the model"
			if api == protocol.APITritonGRPC {
				why = "each request names the model"
			}
			v.fail("target.model", "required by the %s API (%s): %s", api, used[api], why)
		}
	}
	_, usesHTTP := used[protocol.APIHTTP]
	v.httpAPI(usesHTTP)
	if field, ok := used[protocol.APIRealtime]; ok && !t.Streams() {
		v.fail("target.stream", "is false, but the realtime API (%s) always streams its events over the session: leave it true", field)
	}
	switch {
	case openai != "" && native != "":
		v.fail(used[native], "%s is a native API whose base URL is the server's root, but %s (%s) is an OpenAI API "+
			"whose base URL ends in /v1: target.url is one base URL, so use one kind per plan", native, openai, used[openai])
	case native != "" && t.URL != "":
		if err := protocol.CheckAPIURL(native, t.URL); err != nil {
			v.fail("target.url", "%v", err)
		}
	}
}

// defaultAPIUsed reports whether some request takes target.api: a class
// without its own api, or bad input.
func (v *validator) defaultAPIUsed() bool {
	if v.p.Workload.BadInput.Fraction > 0 {
		return true
	}
	for _, c := range v.p.Workload.Classes {
		if c.API == "" && !c.IsGraph() {
			return true
		}
	}
	return false
}

// Options converts target.http for protocol.NewOpenAI.
func (h *HTTPAPI) Options() *protocol.HTTPAPIOptions {
	return &protocol.HTTPAPIOptions{Method: h.Method, Path: h.Path, Response: h.Response,
		Text: h.Text, Tokens: h.Tokens, Error: h.Error}
}

// Tensors converts target.triton for the protocol.
func (t *TritonTensors) Tensors() protocol.TritonTensors {
	return protocol.TritonTensors{Input: t.Input, Output: t.Output}
}

// httpAPI checks target.http when some request uses the http API: it
// needs a body template that parses (or none, for a GET) and options the
// client accepts. Set without the http API, it is a mistake to name.
func (v *validator) httpAPI(used bool) {
	h := &v.p.Target.HTTP
	if !used {
		if *h != (HTTPAPI{}) {
			v.fail("target.http", "is set but no request uses the http API (target.api or a class's api: http)")
		}
		return
	}
	if err := h.Options().Validate(); err != nil {
		v.fail("target.http", "%v", err)
	}
	if _, err := protocol.ParseTemplate(h.Body, protocol.EscapeJSON); err != nil {
		v.fail("target.http.body", "%v", err)
	}
	if h.Body == "" && !strings.EqualFold(h.Method, "GET") {
		v.fail("target.http.body", "required with method %s: the body template, e.g. '{\"text\": \"{{prompt}}\"}'", cmp.Or(strings.ToUpper(h.Method), "POST"))
	}
}

// UsesAPI reports whether some request of the plan is sent with api:
// target.api (unless every class overrides it) or a class's.
func (p *Plan) UsesAPI(api protocol.API) bool {
	v := validator{p: p}
	if protocol.API(p.Target.API) == api && (len(p.Workload.Classes) == 0 || v.defaultAPIUsed()) {
		return true
	}
	for _, c := range p.Workload.Classes {
		if protocol.API(c.API) == api && !c.IsGraph() {
			return true
		}
	}
	return false
}
