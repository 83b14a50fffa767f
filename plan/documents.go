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

// audio checks an audio section for requests sent to api: the
// transcriptions API needs audio, no other API can send it.
func (v *validator) audio(path string, a Audio, api string) {
	if _, err := a.workload(); err != nil {
		v.fail(path+".seconds", "%v", err)
		return
	}
	transcribes := api == string(protocol.APITranscriptions)
	switch {
	case a.Seconds != "" && !transcribes:
		v.fail(path, "audio is uploaded by the transcriptions API only, not by %s", api)
	case a.Seconds == "" && transcribes:
		v.fail(path+".seconds", "required by the transcriptions API, which uploads audio: e.g. audio: {seconds: \"uniform(5,30)\"}")
	}
}

// workload converts the section, checking its length.
func (a Audio) workload() (workload.AudioConfig, error) {
	if a.Seconds == "" {
		return workload.AudioConfig{}, nil
	}
	d, err := workload.ParseDist(a.Seconds)
	if err != nil {
		return workload.AudioConfig{}, err
	}
	cfg := workload.AudioConfig{Seconds: d}
	return cfg, cfg.Validate()
}
