package protocol

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
		tr:           c.tr,
		eps:          endpoints(base, "", nil, ""),
		streamHeader: c.streamHeader,
		plainHeader:  c.plainHeader,
		redact:       c.redact,
		ttft:         c.ttft,
		total:        c.total,
	}
	o.initPools()
	return o, nil
}
