package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Graders an Answer can use. docs/workload.md states each one's rule.
const (
	// GradeExact compares the reply with the expected answer after
	// trimming, collapsing whitespace runs to one space and folding case.
	GradeExact = "exact"
	// GradeChoice reads the first standalone letter A–J of the reply as
	// a multiple-choice answer.
	GradeChoice = "choice"
	// GradeRegex matches a Go (RE2) regular expression anywhere in the
	// reply.
	GradeRegex = "regex"
	// GradeJSONSchema validates the reply, or the first JSON object or
	// array in it, against a JSON schema.
	GradeJSONSchema = "json_schema"
	// GradeToolCall checks the reply's first tool call: its function name
	// and its arguments against the tool's parameters schema.
	GradeToolCall = "tool_call"
)

// Graders lists the graders a dataset may name.
func Graders() []string {
	return []string{GradeExact, GradeChoice, GradeRegex, GradeJSONSchema, GradeToolCall}
}

// Answer is what a dataset entry expects of the reply, and how the reply
// is graded. It is immutable once built and shared by every request of
// its entry.
type Answer struct {
	// Grader is one of Graders.
	Grader string
	// Expect is the expected answer: the text (exact), the letter
	// (choice), the pattern (regex) or the function name (tool_call; ""
	// accepts any name). Unused by json_schema.
	Expect string

	re     *regexp.Regexp
	schema *jsonschema.Schema
}

// Verdict is a graded reply: Correct when it holds the expected answer,
// Unparsable when no answer could be read from it at all (no text, no
// choice letter, no JSON value, no tool call, or tool arguments that are
// not JSON). An unparsable reply is never correct.
type Verdict struct {
	Correct    bool
	Unparsable bool
}

// ToolCall is one function call of a reply: its name and its arguments,
// as the raw JSON text the server sent, and its id when the server gave
// one (what a tool message answering it names).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// NewAnswer builds an answer for grader. expect is the expected answer
// (see Answer.Expect); schema is the JSON schema json_schema and tool_call
// need, raw JSON, nil for the others. A schema must be self-contained:
// a $ref to another document is refused rather than fetched.
func NewAnswer(grader, expect string, schema json.RawMessage) (*Answer, error) {
	a := &Answer{Grader: grader, Expect: expect}
	switch grader {
	case GradeExact:
		a.Expect = normaliseAnswer(expect)
	case GradeChoice:
		want := strings.ToUpper(strings.TrimSpace(expect)) // the dataset may write "b"
		letter, ok := choiceLetter(want)
		if !ok || len(want) != 1 {
			return nil, fmt.Errorf("field expect_answer: %q is not one letter A-J", expect)
		}
		a.Expect = string(letter)
	case GradeRegex:
		re, err := regexp.Compile(expect)
		if err != nil {
			return nil, fmt.Errorf("field expect_answer: %w", err)
		}
		a.re = re
	case GradeJSONSchema, GradeToolCall:
		if len(schema) == 0 {
			return nil, fmt.Errorf("field schema: grader %s needs a JSON schema", grader)
		}
		sch, err := compileSchema(schema)
		if err != nil {
			return nil, fmt.Errorf("field schema: %w", err)
		}
		a.schema = sch
	default:
		return nil, fmt.Errorf("field grader: %q: want one of %s", grader, strings.Join(Graders(), ", "))
	}
	if a.Expect == "" && (grader == GradeExact || grader == GradeRegex) {
		return nil, errors.New("field expect_answer: missing")
	}
	return a, nil
}

// refuseLoader keeps schema compilation offline and off the disk.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref %s: schemas must be self-contained", url)
}

// compileSchema compiles one self-contained schema document.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	const loc = "mem:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// Grade judges a reply: its answer text and its tool calls.
func (a *Answer) Grade(text string, calls []ToolCall) Verdict {
	if a.Grader == GradeToolCall {
		return a.gradeToolCall(calls)
	}
	if strings.TrimSpace(text) == "" {
		return Verdict{Unparsable: true}
	}
	switch a.Grader {
	case GradeExact:
		return Verdict{Correct: normaliseAnswer(text) == a.Expect}
	case GradeChoice:
		letter, ok := choiceLetter(text)
		return Verdict{Correct: ok && string(letter) == a.Expect, Unparsable: !ok}
	case GradeRegex:
		return Verdict{Correct: a.re.MatchString(text)}
	case GradeJSONSchema:
		v, ok := firstJSON(text)
		return Verdict{Correct: ok && a.schema.Validate(v) == nil, Unparsable: !ok}
	}
	return Verdict{Unparsable: true}
}

// gradeToolCall: the first tool call must name the expected function
// (any name when none is expected) and carry arguments that are JSON and
// valid against the parameters schema.
func (a *Answer) gradeToolCall(calls []ToolCall) Verdict {
	if len(calls) == 0 {
		return Verdict{Unparsable: true}
	}
	c := calls[0]
	args, err := jsonschema.UnmarshalJSON(strings.NewReader(c.Arguments))
	if err != nil {
		return Verdict{Unparsable: true}
	}
	nameOK := a.Expect == "" || c.Name == a.Expect
	return Verdict{Correct: nameOK && a.schema.Validate(args) == nil}
}

// normaliseAnswer trims s, collapses each whitespace run to one space and
// folds case, so "  Paris\n" and "paris" compare equal.
func normaliseAnswer(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// choiceLetter returns the first standalone capital letter A–J of s: one
// with no letter or digit right before or after it, so "(B)", "B." and
// "Answer: C" read as choices and "Because" or "A1" do not. A lowercase
// letter is not a choice ("a" is an English word). A capital "A" used as
// an article ("A good answer is C") reads as A: the documented price of
// a rule simple enough to state.
func choiceLetter(s string) (byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 'A' || c > 'J' {
			continue
		}
		if i > 0 && isWordByte(s[i-1]) || i+1 < len(s) && isWordByte(s[i+1]) {
			continue
		}
		return c, true
	}
	return 0, false
}

// isWordByte: an ASCII letter or digit, or any byte of a multi-byte
// UTF-8 character (accented letters touch their neighbours too).
func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= 0x80
}

// maxJSONStarts bounds how many '{' or '[' firstJSON tries, so a long
// reply full of brackets costs linear time, not quadratic.
const maxJSONStarts = 32

// firstJSON returns the reply as one JSON value when it is one, else the
// first object or array inside it that decodes (say in a ```json fence or
// after "Here it is:"), trying at most maxJSONStarts openings.
func firstJSON(text string) (any, bool) {
	if v, err := jsonschema.UnmarshalJSON(strings.NewReader(text)); err == nil {
		return v, true
	}
	tries := 0
	for i := 0; i < len(text) && tries < maxJSONStarts; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		tries++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			return v, true
		}
	}
	return nil, false
}
