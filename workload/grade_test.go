package workload

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustAnswer(t *testing.T, grader, expect, schema string) *Answer {
	t.Helper()
	var raw json.RawMessage
	if schema != "" {
		raw = json.RawMessage(schema)
	}
	a, err := NewAnswer(grader, expect, raw)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const objSchema = `{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`

func TestAnswerGrade(t *testing.T) {
	t.Parallel()
	weather := []ToolCall{{Name: "get_weather", Arguments: `{"city":"Oslo"}`}}
	for _, tc := range []struct {
		name, grader, expect, schema, text string
		calls                              []ToolCall
		want                               Verdict
	}{
		// exact: whitespace runs and case do not matter
		{"exact normalised", GradeExact, "New  York", "", "  new york\n", nil, Verdict{Correct: true}},
		// exact: a longer answer is wrong, not unparsable
		{"exact wrong", GradeExact, "Paris", "", "Paris, France", nil, Verdict{}},
		// any grader: an empty reply holds no answer
		{"exact empty", GradeExact, "Paris", "", " \n", nil, Verdict{Unparsable: true}},
		// choice: the first standalone letter, inside punctuation
		{"choice paren", GradeChoice, "b", "", "The answer is (B).", nil, Verdict{Correct: true}},
		// choice: letters inside words and digits are skipped
		{"choice skips words", GradeChoice, "C", "", "Because D1 is wrong: C", nil, Verdict{Correct: true}},
		// choice: the first letter decides, even when a later one is right
		{"choice first wins", GradeChoice, "C", "", "B, or maybe C", nil, Verdict{}},
		// choice: lowercase letters and K+ are not choices
		{"choice none", GradeChoice, "A", "", "a kind answer: K", nil, Verdict{Unparsable: true}},
		// regex: matches anywhere
		{"regex match", GradeRegex, `\b1[3-7]\b`, "", "I pick 13.", nil, Verdict{Correct: true}},
		// regex: no match is wrong
		{"regex miss", GradeRegex, `^\d+$`, "", "thirteen", nil, Verdict{}},
		// json: the whole reply is the value
		{"json whole", GradeJSONSchema, "", objSchema, `{"n": 3}`, nil, Verdict{Correct: true}},
		// json: the first object in a fenced reply
		{"json fenced", GradeJSONSchema, "", objSchema, "Here:\n```json\n{\"n\": 4}\n```", nil, Verdict{Correct: true}},
		// json: a value that fails the schema is wrong
		{"json invalid", GradeJSONSchema, "", objSchema, `{"n": "four"}`, nil, Verdict{}},
		// json: no JSON at all is unparsable
		{"json none", GradeJSONSchema, "", objSchema, "n is 4 {oops", nil, Verdict{Unparsable: true}},
		// tool call: name and arguments as expected
		{"tool ok", GradeToolCall, "get_weather", `{"type":"object","required":["city"]}`, "", weather, Verdict{Correct: true}},
		// tool call: another function is wrong
		{"tool wrong name", GradeToolCall, "get_time", `{"type":"object"}`, "", weather, Verdict{}},
		// tool call: arguments missing a required field are wrong
		{"tool bad args", GradeToolCall, "", `{"type":"object","required":["day"]}`, "", weather, Verdict{}},
		// tool call: arguments that are not JSON are unparsable
		{"tool not json", GradeToolCall, "", `{"type":"object"}`, "", []ToolCall{{Name: "f", Arguments: `{"city":`}}, Verdict{Unparsable: true}},
		// tool call: a text answer instead of a call is unparsable
		{"tool none", GradeToolCall, "", `{"type":"object"}`, "It is sunny.", nil, Verdict{Unparsable: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := mustAnswer(t, tc.grader, tc.expect, tc.schema)
			if got := a.Grade(tc.text, tc.calls); got != tc.want {
				t.Errorf("Grade(%q) = %+v, want %+v", tc.text, got, tc.want)
			}
		})
	}
}

func TestNewAnswerRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, grader, expect, schema, want string
	}{
		{"unknown grader", "fuzzy", "x", "", "field grader"},
		{"choice not a letter", GradeChoice, "K", "", "not one letter"},
		{"choice two letters", GradeChoice, "AB", "", "not one letter"},
		{"bad regex", GradeRegex, "(", "", "field expect_answer"},
		{"exact without answer", GradeExact, "", "", "field expect_answer: missing"},
		{"schema missing", GradeJSONSchema, "", "", "needs a JSON schema"},
		{"schema not a schema", GradeJSONSchema, "", `{"type": 3}`, "field schema"},
		// a schema is never fetched from elsewhere (offline, off the disk)
		{"remote ref", GradeJSONSchema, "", `{"$ref": "file:///etc/passwd"}`, "self-contained"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var raw json.RawMessage
			if tc.schema != "" {
				raw = json.RawMessage(tc.schema)
			}
			_, err := NewAnswer(tc.grader, tc.expect, raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestDatasetAnswers(t *testing.T) {
	t.Parallel()
	d, err := LoadDataset("testdata/dataset/graded.jsonl", DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{GradeExact, GradeChoice, GradeRegex, GradeJSONSchema, GradeToolCall, ""}
	if d.Len() != len(want) {
		t.Fatalf("%d entries, want %d", d.Len(), len(want))
	}
	for i, g := range want {
		a := d.Entry(i).Answer
		switch {
		case g == "" && a != nil:
			t.Errorf("entry %d graded by %s, want ungraded", i, a.Grader)
		case g != "" && (a == nil || a.Grader != g):
			t.Errorf("entry %d answer %+v, want grader %s", i, a, g)
		}
	}
	// a batch line's grading fields sit beside its body
	dir := t.TempDir()
	path := filepath.Join(dir, "batch.jsonl")
	line := `{"custom_id":"1","expect_answer":"C","grader":"choice","body":{"messages":[{"role":"user","content":"Pick"}]}}`
	if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := LoadDataset(path, DatasetOptions{Format: FormatOpenAIJSONL})
	if err != nil {
		t.Fatal(err)
	}
	if a := b.Entry(0).Answer; a == nil || a.Grader != GradeChoice || a.Expect != "C" {
		t.Errorf("batch answer = %+v, want choice C", a)
	}
}

func TestDatasetAnswerErrorsNameLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	data := "{\"prompt\": \"ok\"}\n{\"prompt\": \"x\", \"grader\": \"choice\", \"expect_answer\": \"Z\"}\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDataset(path, DatasetOptions{})
	if err == nil || !strings.Contains(err.Error(), "line 2: field expect_answer") {
		t.Errorf("err = %v, want line 2 and the field", err)
	}
}

// FuzzAnswerFields feeds arbitrary grading fields to a prompt line and
// arbitrary replies to whatever answer they built: nothing may panic, an
// unparsable verdict is never correct.
func FuzzAnswerFields(f *testing.F) {
	f.Add(`{"prompt":"p","expect_answer":"B","grader":"choice"}`, "(B)")
	f.Add(`{"prompt":"p","grader":"json_schema","schema":{"type":"object"}}`, "x {\"a\":1}")
	f.Add(`{"prompt":"p","grader":"regex","expect_answer":"a+"}`, "aaa")
	f.Add(`{"prompt":"p","grader":"tool_call","schema":{"type":"object"}}`, "{}")
	f.Add(`{"prompt":"p","schema":{"$ref":"#/x"}}`, "")
	f.Fuzz(func(t *testing.T, line, reply string) {
		e, err := parsePromptLine([]byte(line))
		if err != nil || e.answer == nil {
			return
		}
		v := e.answer.Grade(reply, []ToolCall{{Name: "f", Arguments: reply}})
		if v.Unparsable && v.Correct {
			t.Fatalf("%s on %q: unparsable and correct", line, reply)
		}
	})
}
