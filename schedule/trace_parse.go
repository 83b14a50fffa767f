package schedule

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// traceColumns names the CSV columns of a trace layout. Header cells are
// matched ignoring case and surrounding spaces.
type traceColumns struct {
	timestamp, input, output, model string
	// dates says timestamps are dates and times, not seconds.
	dates bool
}

// traceLayouts maps each CSV format to its columns.
var traceLayouts = map[string]traceColumns{
	TraceAzure:    {timestamp: "TIMESTAMP", input: "ContextTokens", output: "GeneratedTokens", dates: true},
	TraceBurstGPT: {timestamp: "Timestamp", input: "Request tokens", output: "Response tokens", model: "Model"},
	TraceCSV:      {timestamp: "timestamp", input: "input_tokens", output: "output_tokens"},
}

// maxTraceTokens bounds a recorded prompt or output length.
const maxTraceTokens = 1_000_000_000

// parseTrace parses data in format; blockTokens is what a Mooncake hash
// id stands for.
func parseTrace(format string, data []byte, blockTokens int) ([]traceRow, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	switch format {
	case TraceJSONL:
		return parseTraceJSONL(data)
	case TraceMooncake:
		return parseTraceMooncake(data, blockTokens)
	case TraceDynamo:
		return parseTraceDynamo(data)
	case TraceWeka:
		return parseTraceWeka(data)
	}
	cols, ok := traceLayouts[format]
	if !ok {
		return nil, fmt.Errorf("format %q: want one of %s", format, strings.Join(TraceFormats(), ", "))
	}
	return parseTraceCSV(data, cols)
}

// detectTraceFormat guesses the format: a first line naming Dynamo's
// schema is Dynamo's; a file naming hash_id_scope near its start is
// Weka's (whose traces may span lines); a first line naming hash_ids or
// input_length is Mooncake's; other .jsonl and .ndjson files are JSONL;
// otherwise the CSV header tells Azure (ContextTokens) and BurstGPT
// (Request tokens) from our own layout.
func detectTraceFormat(path string, data []byte) string {
	header, _, _ := bytes.Cut(bytes.TrimPrefix(data, []byte("\ufeff")), []byte("\n"))
	h := strings.ToLower(string(header))
	if strings.Contains(h, dynamoSchema) {
		return TraceDynamo
	}
	if head := data[:min(len(data), 64<<10)]; bytes.Contains(head, []byte(`"hash_id_scope"`)) {
		return TraceWeka
	}
	if strings.Contains(h, `"hash_ids"`) || strings.Contains(h, `"input_length"`) {
		return TraceMooncake
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		return TraceJSONL
	}
	switch {
	case strings.HasPrefix(strings.TrimSpace(h), "{"):
		return TraceJSONL
	case strings.Contains(h, "contexttokens"):
		return TraceAzure
	case strings.Contains(h, "request tokens"):
		return TraceBurstGPT
	}
	return TraceCSV
}

// parseTraceCSV reads a CSV trace whose header names cols; other columns
// (BurstGPT's Total tokens and Log Type) are ignored.
func parseTraceCSV(data []byte, cols traceColumns) ([]traceRow, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	idx, err := traceHeader(header, cols)
	if err != nil {
		return nil, err
	}
	var rows []traceRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err // a csv.ParseError names its line and column
		}
		line, _ := r.FieldPos(0)
		row, err := traceRecord(rec, idx, cols)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		row.line = line
		rows = append(rows, row)
	}
}

// traceHeader finds the columns of cols in header: timestamp, input,
// output, model (-1 when the layout has none).
func traceHeader(header []string, cols traceColumns) ([4]int, error) {
	idx := [4]int{-1, -1, -1, -1}
	for i, name := range []string{cols.timestamp, cols.input, cols.output, cols.model} {
		if name == "" {
			continue
		}
		for j, h := range header {
			if strings.EqualFold(strings.TrimSpace(h), name) {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return idx, fmt.Errorf("line 1: header %q has no %q column", strings.Join(header, ","), name)
		}
	}
	return idx, nil
}

// traceRecord parses one CSV record.
func traceRecord(rec []string, idx [4]int, cols traceColumns) (traceRow, error) {
	var row traceRow
	var err error
	if row.ns, err = parseTraceTime(strings.TrimSpace(rec[idx[0]]), cols.dates); err != nil {
		return row, fmt.Errorf("column %s: %w", cols.timestamp, err)
	}
	if row.input, err = parseTokens(rec[idx[1]]); err != nil {
		return row, fmt.Errorf("column %s: %w", cols.input, err)
	}
	if row.output, err = parseTokens(rec[idx[2]]); err != nil {
		return row, fmt.Errorf("column %s: %w", cols.output, err)
	}
	if idx[3] >= 0 {
		row.model = strings.TrimSpace(rec[idx[3]])
	}
	return row, nil
}

// readTraceTokens stores a recorded token count in dst: present, and 0
// to maxTraceTokens; field names it in the error.
func readTraceTokens(field string, v, dst *int) error {
	if v == nil || *v < 0 || *v > maxTraceTokens {
		return fmt.Errorf("%s: missing, negative or above %d", field, maxTraceTokens)
	}
	*dst = *v
	return nil
}

// parseTokens reads a token count: a whole number, not negative. BurstGPT
// writes counts as floats ("472.0") in some exports, so a whole float is
// accepted.
func parseTokens(s string) (int, error) {
	s = strings.TrimSpace(s)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f > maxTraceTokens {
		return 0, fmt.Errorf("%q is not a token count (a whole number from 0)", s)
	}
	return int(f), nil
}

// dateLayouts are the timestamp layouts of date-based traces: the Azure
// 2023 trace writes "2023-11-16 18:15:46.6805900", the 2024 one
// "2024-05-10 00:00:00.009930+00:00"; RFC 3339 is accepted too.
var dateLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	time.RFC3339Nano,
}

// maxTraceSeconds bounds numeric timestamps so that the difference of two,
// in nanoseconds, fits in an int64 (each within about 126 years of 0).
const maxTraceSeconds = 4e9

// Dates must lie where time.UnixNano is defined and close enough to 1970
// that the difference of any two timestamps, dates or seconds, fits in an
// int64 (at most about 8e18 ns).
const (
	minTraceYear = 1900
	maxTraceYear = 2100
)

// parseTraceTime returns a timestamp in nanoseconds. dates says which kind
// the layout has; a numeric timestamp is seconds, a date is converted to
// Unix time.
func parseTraceTime(s string, dates bool) (int64, error) {
	if !dates {
		if sec, err := strconv.ParseFloat(s, 64); err == nil {
			if math.IsNaN(sec) || math.Abs(sec) > maxTraceSeconds {
				return 0, fmt.Errorf("%q: seconds out of range", s)
			}
			return int64(math.Round(sec * 1e9)), nil
		}
	}
	for _, layout := range dateLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if t.Year() < minTraceYear || t.Year() > maxTraceYear {
			return 0, fmt.Errorf("%q: year %d out of range [%d, %d]", s, t.Year(), minTraceYear, maxTraceYear)
		}
		return t.UnixNano(), nil
	}
	if dates {
		return 0, fmt.Errorf("%q is not a date and time like 2023-11-16 18:15:46.6805900", s)
	}
	return 0, fmt.Errorf("%q is neither seconds nor a date and time", s)
}

// traceLine is one line of a JSONL trace. Timestamp is seconds (a number)
// or a date and time (a string).
type traceLine struct {
	Timestamp    json.RawMessage `json:"timestamp"`
	InputTokens  *int            `json:"input_tokens"`
	OutputTokens *int            `json:"output_tokens"`
	Model        string          `json:"model"`
}

// parseTraceJSONL reads one object per non-blank line.
func parseTraceJSONL(data []byte) ([]traceRow, error) {
	return parseTraceLines(data, parseTraceLine)
}

// parseTraceLines reads one row per non-blank line with parse, each row
// numbered by its line, an error naming the line.
func parseTraceLines(data []byte, parse func([]byte) (traceRow, error)) ([]traceRow, error) {
	var rows []traceRow
	for n := 1; len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		row, err := parse(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		row.line = n
		rows = append(rows, row)
	}
	return rows, nil
}

// decodeTraceLine decodes one JSON line into v, a type error naming its
// field.
func decodeTraceLine(line []byte, v any) error {
	if err := json.Unmarshal(line, v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			return fmt.Errorf("field %s: %w", typ.Field, err)
		}
		return err
	}
	return nil
}

// parseTraceLine reads one JSONL trace object.
func parseTraceLine(line []byte) (traceRow, error) {
	var l traceLine
	if err := decodeTraceLine(line, &l); err != nil {
		return traceRow{}, err
	}
	row := traceRow{model: l.Model}
	var err error
	if row.ns, err = jsonTimestamp(l.Timestamp); err != nil {
		return row, fmt.Errorf("field timestamp: %w", err)
	}
	for _, f := range []struct {
		name string
		v    *int
		dst  *int
	}{{"input_tokens", l.InputTokens, &row.input}, {"output_tokens", l.OutputTokens, &row.output}} {
		if f.v == nil || *f.v < 0 {
			return row, fmt.Errorf("field %s: missing or negative", f.name)
		}
		*f.dst = *f.v
	}
	return row, nil
}

// jsonTimestamp reads a JSON timestamp: seconds or a date string.
func jsonTimestamp(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, errors.New("missing")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return parseTraceTime(s, false)
	}
	return parseTraceTime(string(raw), false)
}
