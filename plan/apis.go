package plan

import (
	"fmt"
	"sort"

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
		if knownAPI(c.API) && len(c.Chain) == 0 {
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
			v.fail("target.model", "required by the %s API (%s): its endpoint's path names the model", api, used[api])
		}
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
		if c.API == "" && len(c.Chain) == 0 {
			return true
		}
	}
	return false
}
