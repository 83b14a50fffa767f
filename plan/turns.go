package plan

import (
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/workload"
)

// knownAPI reports whether api is one target.api and a class's api accept.
func knownAPI(api string) bool { return protocol.API(api).Known() }

// stepAPI reports whether api is one a chain step (or graph model node)
// accepts: the APIs whose text (or embeddings) steps pass between them.
func stepAPI(api string) bool {
	return api == "chat" || api == "completions" || api == "embeddings" || api == "messages" || api == "ollama"
}

// callsTools reports whether api's replies can call a tool, so a node of
// it may offer tools and feed an on_tool_call tool: OpenAI's chat,
// Anthropic's Messages API and Ollama's /api/chat.
func callsTools(api string) bool { return api == "chat" || api == "messages" || api == "ollama" }

// The values of a class's history.
const (
	HistoryReplies   = "replies"
	HistorySynthetic = "synthetic"
)

// conversationAPI reports whether api can carry a conversation: its
// request holds the history as messages of alternating turns (OpenAI's
// chat, Anthropic's Messages API, both stateless), or its server holds
// the history (the Responses API).
func conversationAPI(api string) bool {
	return api == "chat" || api == "messages" || api == "responses"
}

// turns checks a class's multi-turn setting: conversations need an API
// that carries their history (conversationAPI), and a schedule whose turn k waits for turn
// k-1's reply: users (load.concurrency), or an arrival rate whose
// arrivals start conversations (load.rate), not a trace or a compute
// budget, whose arrivals are single requests.
func (v *validator) turns(path string, c *Class) {
	switch c.History {
	case "", HistoryReplies, HistorySynthetic:
	default:
		v.fail(path+".history", "%q: want %s or %s", c.History, HistoryReplies, HistorySynthetic)
	}
	if c.Turns < 0 || c.Turns > workload.MaxTurns {
		v.fail(path+".turns", "%d: want 0 to %d", c.Turns, workload.MaxTurns)
		return
	}
	if c.Turns <= 1 {
		return
	}
	if api := firstSet(c.API, v.p.Target.API); !conversationAPI(api) {
		v.fail(path+".turns", "conversations need the chat, messages or responses API, not %s", api)
	}
	if sh := v.p.Load.Shape(); sh != ShapeUsers && sh != ShapeRate {
		v.fail(path+".turns", "conversations need load.concurrency or load.rate: a trace's or a compute budget's arrivals are single requests")
	}
}

// conversations reports whether some class holds multi-turn conversations.
func (p *Plan) conversations() bool { return len(p.SessionTurns()) > 0 }

// SessionTurns is each conversational class's turns per conversation
// (classes with turns > 1); empty when the plan has none.
func (p *Plan) SessionTurns() map[string]int {
	turns := map[string]int{}
	for _, c := range p.Workload.Classes {
		if c.Turns > 1 {
			turns[c.Name] = c.Turns
		}
	}
	return turns
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
