package schedule

import (
	"errors"
	"fmt"
	"math"
)

// DefaultBlockTokens is the tokens a Mooncake hash id stands for: the
// FAST'25 traces hash prompts in blocks of 512 tokens.
const DefaultBlockTokens = 512

// MaxBlockTokens bounds TraceOptions.BlockTokens: a block's text is built
// and cached whole, so a block is at most this long.
const MaxBlockTokens = 1 << 16

// mooncakeLine is one line of a Mooncake trace (kvcache-ai/Mooncake,
// FAST25-release/traces): timestamp in milliseconds from the trace's
// start, the prompt and output lengths, and the ids of the prompt's
// blocks of block-tokens tokens, the last possibly partial. Two requests
// whose hash_ids open alike share that much prompt.
type mooncakeLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      *[]int64 `json:"hash_ids"`
}

// parseTraceMooncake reads one Mooncake object per non-blank line. Each
// line's hash_ids may cover at most its input_length: ⌈input/block⌉ ids.
func parseTraceMooncake(data []byte, blockTokens int) ([]traceRow, error) {
	return parseTraceLines(data, func(line []byte) (traceRow, error) { return parseMooncakeLine(line, blockTokens) })
}

// parseMooncakeLine reads one Mooncake object.
func parseMooncakeLine(line []byte, blockTokens int) (traceRow, error) {
	var l mooncakeLine
	if err := decodeTraceLine(line, &l); err != nil {
		return traceRow{}, err
	}
	var row traceRow
	switch ms := l.Timestamp; {
	case ms == nil:
		return row, errors.New("field timestamp: missing")
	case *ms < 0 || *ms > maxTraceSeconds*1e3:
		return row, fmt.Errorf("field timestamp: %v: want milliseconds from the trace's start, 0 to %g", *ms, maxTraceSeconds*1e3)
	default:
		row.ns = int64(math.Round(*ms * 1e6))
	}
	if err := readTraceTokens("field input_length", l.InputLength, &row.input); err != nil {
		return row, err
	}
	if err := readTraceTokens("field output_length", l.OutputLength, &row.output); err != nil {
		return row, err
	}
	if l.HashIDs == nil {
		return row, errors.New("field hash_ids: missing (an empty list [] means no block is shared)")
	}
	row.hashIDs = *l.HashIDs
	if most := (row.input + blockTokens - 1) / blockTokens; len(row.hashIDs) > most {
		return row, fmt.Errorf("field hash_ids: %d blocks, but input_length %d fills at most %d of %d tokens", len(row.hashIDs), row.input, most, blockTokens)
	}
	return row, nil
}
