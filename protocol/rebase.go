package protocol

import "time"

// WithBaseURL returns a client for another OpenAI-compatible server that
// shares c's connection pool, TLS settings, headers, API key and timeouts:
// a chain's embeddings step may live on its own server. A Host header
// override is not carried over: it named c's server.
func (c *OpenAI) WithBaseURL(baseURL string) (*OpenAI, error) {
	base, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	o := &OpenAI{
		tr:             c.tr,
		chatURL:        base.JoinPath("chat/completions"),
		completionsURL: base.JoinPath("completions"),
		embeddingsURL:  base.JoinPath("embeddings"),
		streamHeader:   c.streamHeader,
		plainHeader:    c.plainHeader,
		redact:         c.redact,
		ttft:           c.ttft,
		total:          c.total,
	}
	o.readers.New = func() any { return NewSSEReader(nil, time.Now) }
	return o, nil
}
