package workload

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// rawEntry is a dataset entry as parsed, before its tokens are counted.
type rawEntry struct {
	line     int
	prompt   string
	messages []ChatMessage
	// reply is the recorded answer whose length is the expected output
	// length; nil when the entry has none.
	reply *string
	// outputTokens is an output length the entry states (0: none).
	outputTokens int
	// answer grades the reply; nil when the entry expects none.
	answer *Answer
}

// parseDataset parses data in format. skipped counts entries that are well
// formed but hold no usable prompt (ShareGPT has many).
func parseDataset(format string, data []byte) (entries []rawEntry, skipped int, err error) {
	switch format {
	case FormatShareGPT:
		return parseShareGPT(data)
	case FormatOpenAIJSONL:
		entries, err = parseJSONLines(data, parseOpenAILine)
	case FormatJSONL:
		entries, err = parseJSONLines(data, parsePromptLine)
	case FormatCSV:
		entries, err = parsePromptCSV(data)
	default:
		err = fmt.Errorf("format %q: want one of %s", format, strings.Join(DatasetFormats(), ", "))
	}
	return entries, 0, err
}

// detectDatasetFormat guesses the format from the extension, then from
// the first line: a JSON array is ShareGPT, a JSON object with "messages"
// is OpenAI chat, any other object a prompt line, anything else CSV.
func detectDatasetFormat(path string, data []byte) string {
	first := bytes.TrimSpace(data)
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	chat := bytes.Contains(first, []byte(`"messages"`))
	switch ext := strings.ToLower(filepath.Ext(path)); {
	case ext == ".csv":
		return FormatCSV
	case ext == ".json", bytes.HasPrefix(first, []byte("[")):
		return FormatShareGPT
	case chat && (ext == ".jsonl" || ext == ".ndjson" || bytes.HasPrefix(first, []byte("{"))):
		return FormatOpenAIJSONL
	case ext == ".jsonl", ext == ".ndjson", bytes.HasPrefix(first, []byte("{")):
		return FormatJSONL
	}
	return FormatCSV
}

// lineCounter turns increasing byte offsets into line numbers without
// rescanning the file from the start each time.
type lineCounter struct {
	data []byte
	off  int64
	line int
}

// at returns the 1-based line of byte offset off; offsets must not
// decrease between calls.
func (c *lineCounter) at(off int64) int {
	off = min(max(off, c.off), int64(len(c.data)))
	c.line += bytes.Count(c.data[c.off:off], []byte("\n"))
	c.off = off
	return c.line + 1
}

// shareGPTConversation is one element of a ShareGPT file.
type shareGPTConversation struct {
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// parseShareGPT streams the conversations of a ShareGPT JSON array. The
// prompt is the first human turn and the expected output the turn after
// it, when that is the model's; conversations without such a pair are
// skipped, as benchmark tools do.
func parseShareGPT(data []byte) ([]rawEntry, int, error) {
	lines := lineCounter{data: data}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, 0, fmt.Errorf("line %d: want a JSON array of conversations", lines.at(dec.InputOffset()))
	}
	var out []rawEntry
	skipped := 0
	for i := 0; dec.More(); i++ {
		start := skipJSONSeparators(data, dec.InputOffset())
		line := lines.at(start)
		var c shareGPTConversation
		if err := dec.Decode(&c); err != nil {
			return nil, 0, fmt.Errorf("line %d: conversation %d: %w", lineOfDecodeError(data, start, line, err), i, jsonTypeProblem(err, &c))
		}
		prompt, reply, ok := shareGPTPair(&c)
		if !ok {
			skipped++
			continue
		}
		out = append(out, rawEntry{line: line, prompt: prompt, reply: &reply})
	}
	if _, err := dec.Token(); err != nil {
		return nil, 0, fmt.Errorf("line %d: unterminated array: %w", lines.at(dec.InputOffset()), err)
	}
	return out, skipped, nil
}

// shareGPTPair finds the first human turn and the model's reply to it.
func shareGPTPair(c *shareGPTConversation) (prompt, reply string, ok bool) {
	turns := c.Conversations
	for i := 0; i+1 < len(turns); i++ {
		if !isRole(turns[i].From, "human", "user") || turns[i].Value == "" {
			continue
		}
		if isRole(turns[i+1].From, "gpt", "assistant", "chatgpt", "bard", "bing", "model") {
			return turns[i].Value, turns[i+1].Value, true
		}
	}
	return "", "", false
}

// isRole reports whether role is one of names, ignoring case.
func isRole(role string, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(role, n) {
			return true
		}
	}
	return false
}

// skipJSONSeparators moves off past whitespace and the comma between array
// elements, to where the next value starts.
func skipJSONSeparators(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
		off++
	}
	return off
}

// lineOfDecodeError returns the line of a decode error: a syntax error's
// offset counts from the start of the input, a type error's from the start
// of the value being decoded (at byte start, on line startLine).
func lineOfDecodeError(data []byte, start int64, startLine int, err error) int {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		end := min(max(start+typ.Offset, start), int64(len(data)))
		return startLine + bytes.Count(data[start:end], []byte("\n"))
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return lineAt(data, syn.Offset)
	}
	return startLine
}

// parseJSONLines calls parse on every non-blank line of data.
func parseJSONLines(data []byte, parse func([]byte) (rawEntry, error)) ([]rawEntry, error) {
	var out []rawEntry
	for n := 1; len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		e, err := parse(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		e.line = n
		out = append(out, e)
	}
	return out, nil
}

// jsonFieldError says which field of a line decoded into root has the
// wrong type, and what it should be (jsonTypeProblem).
func jsonFieldError(err error, root any) error {
	return jsonTypeProblem(err, root)
}

// openAILine is one request of an OpenAI chat JSONL file (the batch API and
// fine-tuning files have this shape).
type openAILine struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
	// Body holds the request of a batch API line ({"body": {...}}).
	Body *openAILine `json:"body"`
	answerFields
}

// parseOpenAILine reads one chat request: the messages up to the last user
// message are the input; an assistant reply after it, else max_tokens,
// gives the output length.
func parseOpenAILine(line []byte) (rawEntry, error) {
	var l openAILine
	if err := json.Unmarshal(line, &l); err != nil {
		return rawEntry{}, jsonFieldError(err, &l)
	}
	answer, err := l.answer() // a batch line's are beside its body
	if err != nil {
		return rawEntry{}, err
	}
	if l.Body != nil {
		l = *l.Body
	}
	msgs := make([]ChatMessage, len(l.Messages))
	lastUser := -1
	for i, m := range l.Messages {
		text, images, err := messageContent(m.Content)
		if err != nil {
			return rawEntry{}, fmt.Errorf("field messages.%d.content: %w", i, err)
		}
		msgs[i] = ChatMessage{Role: m.Role, Content: text, Images: images}
		if m.Role == "user" {
			lastUser = i
		}
	}
	if lastUser < 0 {
		return rawEntry{}, errors.New("field messages: no message with role \"user\"")
	}
	e := rawEntry{prompt: msgs[lastUser].Content, messages: msgs[:lastUser+1], answer: answer}
	if lastUser == 0 && len(msgs[0].Images) == 0 {
		e.messages = nil // the prompt is the whole input
	}
	if lastUser+1 < len(msgs) && msgs[lastUser+1].Role == "assistant" {
		e.reply = &msgs[lastUser+1].Content
	}
	out, err := firstLength("max_completion_tokens", l.MaxCompletionTokens, "max_tokens", l.MaxTokens)
	e.outputTokens = out
	return e, err
}

// messageContent returns a message's text and images: a string, null, or
// an array of content parts. Text parts are joined; image_url parts are
// kept and sent; any other part (input_audio, file, ...) is an error, as
// no API inferload speaks can send it and dropping it would measure a
// different request than the dataset holds.
func messageContent(raw json.RawMessage) (string, []Image, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, errors.New("want a string or an array of content parts")
	}
	var b strings.Builder
	var images []Image
	for k, p := range parts {
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
		case "image_url":
			im, err := partImage(p)
			if err != nil {
				return "", nil, fmt.Errorf("part %d: %w", k, err)
			}
			images = append(images, im)
		default:
			return "", nil, fmt.Errorf("part %d: type %q cannot be sent: inferload sends text and image_url parts only", k, p.Type)
		}
	}
	return b.String(), images, nil
}

// firstLength returns the first of two optional lengths that is set,
// checking it is not negative.
func firstLength(nameA string, a *int, nameB string, b *int) (int, error) {
	for _, f := range []struct {
		name string
		v    *int
	}{{nameA, a}, {nameB, b}} {
		if f.v == nil {
			continue
		}
		if *f.v < 0 {
			return 0, fmt.Errorf("field %s: %d is negative", f.name, *f.v)
		}
		return *f.v, nil
	}
	return 0, nil
}

// promptLine is one line of a plain prompt JSONL file.
type promptLine struct {
	Prompt       *string `json:"prompt"`
	OutputTokens *int    `json:"output_tokens"`
	MaxTokens    *int    `json:"max_tokens"`
	answerFields
}

// parsePromptLine reads {"prompt": ..., "output_tokens": N}.
func parsePromptLine(line []byte) (rawEntry, error) {
	var l promptLine
	if err := json.Unmarshal(line, &l); err != nil {
		return rawEntry{}, jsonFieldError(err, &l)
	}
	if l.Prompt == nil {
		return rawEntry{}, errors.New("field prompt: missing")
	}
	out, err := firstLength("output_tokens", l.OutputTokens, "max_tokens", l.MaxTokens)
	if err != nil {
		return rawEntry{}, err
	}
	answer, err := l.answer()
	return rawEntry{prompt: *l.Prompt, outputTokens: out, answer: answer}, err
}

// parsePromptCSV reads a CSV file whose header names a "prompt" column and
// optionally an "output_tokens" (or "max_tokens") column. Other columns are
// ignored, so an export with ids and metadata can be used as it is.
func parsePromptCSV(data []byte) ([]rawEntry, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	promptCol, outCol := csvColumn(header, "prompt"), csvColumn(header, "output_tokens", "max_tokens")
	if promptCol < 0 {
		return nil, fmt.Errorf("line 1: header %q has no prompt column", strings.Join(header, ","))
	}
	var out []rawEntry
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err // a csv.ParseError names its line and column
		}
		line, _ := r.FieldPos(0)
		e := rawEntry{line: line, prompt: rec[promptCol]}
		if outCol >= 0 && strings.TrimSpace(rec[outCol]) != "" {
			n, err := strconv.Atoi(strings.TrimSpace(rec[outCol]))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("line %d: column %s: %q is not a whole number of tokens", line, header[outCol], rec[outCol])
			}
			e.outputTokens = n
		}
		out = append(out, e)
	}
}

// csvColumn returns the index of the first header cell equal to one of
// names (ignoring case and spaces), or -1.
func csvColumn(header []string, names ...string) int {
	for _, n := range names {
		for i, h := range header {
			if strings.EqualFold(strings.TrimSpace(h), n) {
				return i
			}
		}
	}
	return -1
}
