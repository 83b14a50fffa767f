package sim

import (
	"errors"
	"strings"
)

// ExpectAnswerHeader carries a graded request's expected answer (the load
// generator sends it with every graded request). A test-only feature: the
// simulator answers it so that accuracy under load can be tested on
// known truth; a real server ignores the header.
const ExpectAnswerHeader = "X-Inferload-Expect-Answer"

// AnswerDegrade plants an accuracy drop past a load: while more than
// AboveInFlight chat or completions requests are being answered (queued
// or running, this one included), a request carrying an expected answer
// gets a wrong one with probability WrongShare. At or below that load
// every such request gets its expected answer. The zero value degrades
// nothing.
type AnswerDegrade struct {
	AboveInFlight int64   `yaml:"above_in_flight"`
	WrongShare    float64 `yaml:"wrong_share"`
}

func (a AnswerDegrade) validate() error {
	if a.AboveInFlight < 0 {
		return errors.New("answer_degrade.above_in_flight must be >= 0")
	}
	return checkFraction("answer_degrade.wrong_share", a.WrongShare)
}

// answerWith makes the reply the expected answer, alone and in one token
// (finish reason "stop", no reasoning), or a wrong answer when the
// server's AnswerDegrade says so at inFlight requests. An empty expect
// leaves the call as drawn.
func (c *call) answerWith(expect string, inFlight int64) {
	if expect == "" {
		return
	}
	deg := c.s.faults.AnswerDegrade
	if inFlight > deg.AboveInFlight && c.answerDraw < deg.WrongShare {
		expect = wrongAnswer(expect)
	}
	b := jsonString(expect)
	c.answer, c.answerJSON = expect, string(b[1:len(b)-1])
	c.reasoning, c.faultAt = 0, 0
	c.st.req.OutputTokens, c.st.reason = 1, "stop"
}

// tokenText is output token i's text as a JSON string's contents.
func (c *call) tokenText(i int) string {
	if c.answer != "" {
		return c.answerJSON
	}
	return tokenText(c.words, i)
}

// wrongAnswer is an answer that differs from want under every grader the
// simulator can satisfy: a choice letter moves on by one (J wraps to A),
// any other answer is negated.
func wrongAnswer(want string) string {
	if w := strings.TrimSpace(want); len(w) == 1 && w[0] >= 'A' && w[0] <= 'J' {
		return string('A' + (w[0]-'A'+1)%10)
	}
	return "not " + want
}
