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
	// InputTokens is the prompt length the generator aimed for, in tokens.
	InputTokens int
	// MaxTokens is the output length asked for.
	MaxTokens int
	// IgnoreEOS asks the server to generate exactly MaxTokens.
	IgnoreEOS bool
}
