package plan

import (
	"fmt"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/workload"
)

// scoresDocuments reports whether api scores the prompt against
// documents, so that a request of it needs them and only it takes them.
func scoresDocuments(api string) bool {
	return api == string(protocol.APIRerank) || api == string(protocol.APIScore)
}

// documents checks a documents section for requests sent to api: the
// rerank and score APIs need documents, no other API can send them.
func (v *validator) documents(path string, d Documents, api string) {
	if _, err := d.workload(); err != nil {
		v.fail(path, "%v", err)
		return
	}
	switch {
	case d.Count > 0 && !scoresDocuments(api):
		v.fail(path, "documents are sent by the rerank and score APIs only, not by %s", api)
	case d.Count == 0 && scoresDocuments(api):
		v.fail(path+".count", "required by the %s API, which scores the prompt (the query) against documents: "+
			"e.g. documents: {count: 16, tokens: 256}", api)
	}
}

// workload converts the section, checking its count and length.
func (d Documents) workload() (workload.DocumentConfig, error) {
	if d.Count == 0 {
		if d.Tokens != "" {
			return workload.DocumentConfig{}, fmt.Errorf("count: set it (1 or more) to send the documents tokens describes")
		}
		return workload.DocumentConfig{}, nil
	}
	if d.Tokens == "" {
		return workload.DocumentConfig{}, fmt.Errorf("tokens: set each document's length, e.g. 256 or uniform(64,512)")
	}
	dist, err := workload.ParseDist(d.Tokens)
	if err != nil {
		return workload.DocumentConfig{}, fmt.Errorf("tokens: %w", err)
	}
	cfg := workload.DocumentConfig{Count: d.Count, Tokens: dist}
	return cfg, cfg.Validate()
}
