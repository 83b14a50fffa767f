package plan

import (
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/workload"
)

// knownAPI reports whether api is one target.api and a class's api accept.
func knownAPI(api string) bool { return protocol.API(api).Known() }

// openAIAPI reports whether api is one a chain step accepts: chains build
// OpenAI requests (their steps pass text and embeddings between them).
func openAIAPI(api string) bool {
	return api == "chat" || api == "completions" || api == "embeddings"
}

// turns checks a class's multi-turn setting: conversations need chat
// messages to carry their history (the chat API, or the Responses API,
// whose server holds it), and users that wait for each reply
// (a closed loop), or turn k would not follow turn k-1.
func (v *validator) turns(path string, c *Class) {
	if c.Turns < 0 || c.Turns > workload.MaxTurns {
		v.fail(path+".turns", "%d: want 0 to %d", c.Turns, workload.MaxTurns)
		return
	}
	if c.Turns <= 1 {
		return
	}
	if api := firstSet(c.API, v.p.Target.API); api != "chat" && api != "responses" {
		v.fail(path+".turns", "conversations need the chat or responses API, not %s", api)
	}
	if v.p.Load.OpenLoop() {
		v.fail(path+".turns", "conversations need a closed loop (load.concurrency): in an open loop turn k would not wait for turn k-1's reply")
	}
}

// firstSet returns the first non-empty string.
func firstSet(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
