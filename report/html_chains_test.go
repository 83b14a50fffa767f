package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

func TestHTMLShowsChains(t *testing.T) {
	t.Parallel()
	s := &record.Summary{Chains: map[string]*record.ChainSummary{"rag": {Chains: 4, Failed: 1,
		Steps: []record.ChainStepSummary{{Name: "retrieve<b>", Kind: "http", Started: 4, Failed: 1, ShareOfE2E: 0.25}}}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, &HTMLInput{Summary: s, Digest: NewDigest()}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, "Multi-step chains") || !strings.Contains(page, "rag: 4 chains, 1 failed") || !strings.Contains(page, "25.0 %") {
		t.Error("the chains section is missing or incomplete")
	}
	if strings.Contains(page, "retrieve<b>") {
		t.Error("a step name reached the page unescaped")
	}
}
