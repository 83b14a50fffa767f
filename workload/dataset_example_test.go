package workload_test

import (
	"fmt"
	"log"

	"github.com/inferload/inferload/workload"
)

// A dataset of prompts with their expected output lengths, counted with
// the default tokenizer (cl100k_base), and its profile as printed before a
// run.
func ExampleLoadDataset() {
	d, err := workload.LoadDataset("testdata/dataset/prompts.jsonl", workload.DatasetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	e := d.Entry(1)
	fmt.Printf("%d entries; entry 1: %q, %d tokens in, %d out\n", d.Len(), e.Prompt, e.InputTokens, e.OutputTokens)
	fmt.Println(d.Profile())
	// Output:
	// 3 entries; entry 1: "the cat sat on the mat", 6 tokens in, 512 out
	// dataset testdata/dataset/prompts.jsonl (jsonl, cl100k_base): 3 of 3 entries
	//   input tokens   P50 3  P90 6  P99 6  (min 2, max 6, mean 3.7)
	//   output tokens  P50 128  P90 512  P99 512  (min 128, max 512, mean 320.0) over 2 entries that give one
}
