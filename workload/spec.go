// Package workload builds request specs deterministically from a seed: what
// is sent, never when or how.
package workload

// Spec is one request's content, independent of the API used to send it.
type Spec struct {
	// Index is the request's position in the run (0, 1, 2, ...). The spec is
	// a pure function of (plan, seed, Index), so the same plan and seed send
	// the same requests whatever the concurrency or timing.
	Index uint64
	// Class names the request class ("default" until classes exist).
	Class string
	// Prompt is the user message (chat) or the prompt (completions).
	Prompt string
	// Messages, when set, is the whole chat conversation ending with Prompt
	// (a dataset entry with a system prompt or earlier turns). The
	// completions API sends Prompt alone.
	Messages []ChatMessage
	// Images are sent with Prompt, after its text, as image_url parts
	// (synthetic images; a dataset's are in Messages). Shared read-only
	// between specs: never modify them.
	Images []Image
	// Documents are what a rerank or score request scores Prompt (the
	// query) against (ClassConfig.Documents); nil for other requests.
	Documents []string
	// Audio is the WAV a transcription request uploads, AudioSeconds its
	// length (ClassConfig.Audio); nil and 0 for other requests.
	Audio        []byte
	AudioSeconds int
	// InputTokens is the prompt length the generator aimed for, in tokens;
	// with Documents, what a cross-encoder reads: the prompt once per
	// document, plus the documents.
	InputTokens int
	// ReuseTokens is how much of the prompt the workload built for a
	// prefix cache to reuse, because an earlier request of the run sent
	// it: a replayed trace's leading blocks (Generator.BlockReuse), a later
	// turn's history (the previous turn's whole prompt), or a shared
	// prefix an earlier request carried (set when the request is sent,
	// engine.PrefixLedger); 0 otherwise.
	ReuseTokens int
	// PrefixGroup is 1 + the group of the class's shared prefix the prompt
	// opens with (after the salt); 0 for none. PrefixTokens is that
	// prefix's length.
	PrefixGroup, PrefixTokens int
	// MaxTokens is the output length asked for.
	MaxTokens int
	// IgnoreEOS asks the server to generate exactly MaxTokens.
	IgnoreEOS bool
	// BadInput names the kind of deliberately bad request (BadEmpty,
	// BadTooLong, ...); empty for ordinary requests.
	BadInput string
	// Turn is the request's turn in its multi-turn conversation (0 for
	// the first turn and for single requests).
	Turn int
	// Turns is how many turns the request's conversation holds; 0 for a
	// single request. It tells a conversation's first turn (Turn 0,
	// Turns > 1) from a single request.
	Turns int
	// Session names the request's conversation: the run's index of its
	// first turn (set by the engine, never by the workload, since only
	// the engine numbers requests); 0 and meaningless when Turns is 0.
	Session uint64
	// PreviousResponseID is the id the server gave the conversation's
	// previous turn (set by the engine from that turn's reply, never by
	// the workload): an API whose server holds the history (responses)
	// sends only the new turn with it. Empty for a first turn and after a
	// turn that failed, when the whole history is sent again.
	PreviousResponseID string
	// KeepReply is set on a conversation turn whose reply the next turn's
	// history is to carry (History replies, not the last turn): the engine
	// keeps the reply's text and hands it to Session.Reply before the
	// next turn is built.
	KeepReply bool
	// Expect is what counts as a pass for this request besides success:
	// ExpectRejection for bad input, empty for ordinary requests (only a
	// success passes). Renderers send MaxTokens 0 as an explicit
	// "max_tokens": 0 when Expect is set.
	Expect string
	// Answer, when set, grades the reply (a dataset entry's expected
	// answer); nil for ungraded requests, whose reply text is never kept.
	Answer *Answer
}

// ExpectRejection marks a request for which a 4xx reply with an error body
// is a correct answer, not a failure. The engine copies it into the
// record, where the aggregate counts such replies as expected rejections.
const ExpectRejection = "rejection"
