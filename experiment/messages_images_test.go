package experiment

import (
	"fmt"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// TestMessagesImagesAgainstSim: a class's synthetic images on --api
// messages reach the simulator as Anthropic image blocks it accepts and
// charges: each request's prompt is, token for token, what the same
// request (same seed and index: same text, same images) costs on the
// chat API, and holds the images' 255 tokens each (a 32×24 image is one
// tile) over the text alone.
func TestMessagesImagesAgainstSim(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	const planFmt = `
name: images-%[2]s
target: {url: %[1]s, api: %[2]s, preflight: false}
load: {concurrency: 1, requests: 3}
workload:
  seed: 9
  classes:
    - {name: vision, weight: 1, input_tokens: "8", output_tokens: "2"%[3]s}
`
	prompts := func(api string, images int) map[uint64]int {
		section := "" // no images: the text alone
		if images > 0 {
			section = fmt.Sprintf(", images: {count: %d, size: 32x24, format: png}", images)
		}
		res := runPlan(t, fmt.Sprintf(planFmt, url, api, section))
		got := map[uint64]int{}
		eachRecord(t, res.Dir, func(r *record.Result) error {
			if r.Error != record.ErrNone || r.Images != images || r.TokenSource != record.TokensUsage {
				t.Errorf("%s record %d: error %s, %d images, tokens from %s; want a success with %d images counted by usage", api, r.ID, r.Error, r.Images, r.TokenSource, images)
			}
			got[r.ID] = r.InputTokens
			return nil
		})
		return got
	}
	messages, chat, text := prompts("messages", 2), prompts("chat", 2), prompts("messages", 0)
	if len(messages) != 3 {
		t.Fatalf("%d records, want 3", len(messages))
	}
	for id, n := range messages {
		if n != chat[id] || n != text[id]+2*255 {
			t.Errorf("request %d: %d prompt tokens on messages, %d on chat, %d without images; want chat's, and the text's + 510", id, n, chat[id], text[id])
		}
	}
}
