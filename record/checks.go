package record

import "math"

// Causes of a gap between the server's and the client's prompt token
// counts, as Checks.InputTokensCause. docs/metrics.md ("Token-count
// checks") states each rule.
const (
	// CauseMatch: the counts agree (within half a token per request).
	CauseMatch = "match"
	// CauseTemplate: the server counts a constant number of tokens more
	// (or fewer) per request whatever the prompt's length: a chat template
	// or a BOS token, not the tokenizer.
	CauseTemplate = "template_offset"
	// CauseTokenizer: the gap grows with the prompt's length: the client
	// tokenizes differently from the model.
	CauseTokenizer = "tokenizer"
	// CauseTruncated: the server cut prompts to one length.
	CauseTruncated = "truncated"
)

const (
	// maxTemplateOffset is the largest constant per-request offset read as
	// a template (Llama-3's chat template adds 10, a BOS token 1);
	// maxSingleLengthOffset the largest when every prompt had one length,
	// where a template and a tokenizer's share cannot be told apart.
	maxTemplateOffset     = 64
	maxSingleLengthOffset = 16
	// maxTemplateSlope is the largest growth of the gap per prompt token
	// still read as constant (1%: a tokenizer off by less stays under the
	// 5% warning anyway).
	maxTemplateSlope = 0.01
	// truncShortfall is how far below the client's count (relative) a
	// server count must be to look cut.
	truncShortfall = 0.05
)

// tokenChecks compare what the server reported with what was asked, over
// successful ordinary requests (bad input is left out: its prompts are
// meant to be odd). Every sum is an integer, so the figures do not depend
// on the order records arrive in.
type tokenChecks struct {
	eosChecked, eosNotHonoured int64
	maxChecked, maxExceeded    int64
	// Prompt-length comparison: n requests, sums of the client count c,
	// the gap d = server − client, c², c·d and the server's total.
	n, sumC, sumD, sumCC, sumCD, sumServer int64
	// short are requests whose server count fell truncShortfall below the
	// client's; ceil is the largest server count among them and atCeil
	// how many had exactly it, with the sum of their client counts and of
	// its squares (ceilC, ceilCC); maxClient is the longest short prompt.
	// Resetting on a higher ceiling keeps them order-independent: the end
	// state is the group at the overall highest ceiling.
	short, ceil, atCeil, ceilC, ceilCC, maxClient int64
}

func (tc *tokenChecks) add(r *Result) {
	if r.Expect != "" {
		return
	}
	if r.MaxTokens > 0 && r.TokenSource == TokensUsage {
		tc.maxChecked++
		if r.OutputTokens > r.MaxTokens {
			tc.maxExceeded++
		}
	}
	if r.IgnoreEOS && r.MaxTokens > 0 {
		tc.eosChecked++
		if r.OutputTokens != r.MaxTokens {
			tc.eosNotHonoured++
		}
	}
	// A chain's prompt also carries retrieved text we never counted, and
	// an image's tokens are the server's vision encoder's to count.
	if r.TokenSource != TokensUsage || r.UsageInputTokens != 0 || r.InputTokens <= 0 || r.PromptTokensSent <= 0 || len(r.Chain) > 0 || r.Images > 0 {
		return
	}
	s, c := int64(r.InputTokens), int64(r.PromptTokensSent)
	d := s - c
	tc.n++
	tc.sumC += c
	tc.sumD += d
	tc.sumCC += c * c
	tc.sumCD += c * d
	tc.sumServer += s
	if float64(s) < float64(c)*(1-truncShortfall) {
		tc.short++
		tc.maxClient = max(tc.maxClient, c)
		if s > tc.ceil {
			tc.ceil, tc.atCeil, tc.ceilC, tc.ceilCC = s, 0, 0, 0
		}
		if s == tc.ceil {
			tc.atCeil++
			tc.ceilC += c
			tc.ceilCC += c * c
		}
	}
}

// checks are the figures of Checks.
func (tc *tokenChecks) checks() Checks {
	c := Checks{
		IgnoreEOSChecked: tc.eosChecked, IgnoreEOSNotHonoured: tc.eosNotHonoured,
		MaxTokensChecked: tc.maxChecked, MaxTokensExceeded: tc.maxExceeded,
		InputTokensCompared: tc.n, InputTokensDiff: relDiff(tc.sumServer, tc.sumC),
	}
	if tc.n == 0 {
		return c
	}
	if tc.truncated() {
		c.InputTokensCause = CauseTruncated
		c.InputTokensTruncated, c.InputTokensTruncatedTo, c.InputTokensLongest = tc.atCeil, tc.ceil, tc.maxClient
		return c
	}
	offset, slope, varied := tc.fit()
	limit := float64(maxTemplateOffset)
	if !varied {
		limit = maxSingleLengthOffset
	}
	switch {
	case math.Abs(slope) <= maxTemplateSlope && math.Abs(offset) < 0.5:
		c.InputTokensCause = CauseMatch
	case math.Abs(slope) <= maxTemplateSlope && math.Abs(offset) <= limit:
		c.InputTokensCause = CauseTemplate
		c.InputTokensOffset = math.Round(offset)
	default:
		c.InputTokensCause = CauseTokenizer
	}
	return c
}

// truncated: at least two prompts the server counted well short ended at
// exactly the same server length, the most any short one got, though the
// client sent them at different lengths, and they are at least half of
// the short ones — the mark of a cut. A tokenizer that counts fewer tokens
// shortens each prompt by its own share instead; prompts all of one length
// cut to one length cannot be told from it and are not called truncated.
func (tc *tokenChecks) truncated() bool {
	spread := tc.atCeil*tc.ceilCC - tc.ceilC*tc.ceilC // n² × variance of their client lengths
	return tc.atCeil >= 2 && spread > 0 && 2*tc.atCeil >= tc.short
}

// fit is the least-squares line d = offset + slope·c; varied is false
// when every prompt had one length, which cannot tell an offset from a
// tokenizer's share: the mean gap is then the offset and the slope 0, and
// checks reads only a small one (maxSingleLengthOffset) as a template.
func (tc *tokenChecks) fit() (offset, slope float64, varied bool) {
	n := float64(tc.n)
	varC := n*float64(tc.sumCC) - float64(tc.sumC)*float64(tc.sumC)
	meanD := float64(tc.sumD) / n
	if varC <= 0 {
		return meanD, 0, false
	}
	slope = (n*float64(tc.sumCD) - float64(tc.sumC)*float64(tc.sumD)) / varC
	return meanD - slope*float64(tc.sumC)/n, slope, true
}
