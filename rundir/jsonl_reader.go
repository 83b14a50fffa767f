package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/inferload/inferload/record"
)

// MaxLineBytes bounds one JSON line, for the readers and the writer alike:
// the writer refuses a longer line, so every line it writes can be read
// back. A record keeps at most record.MaxEventsKept offsets (under 1 MB
// even with 19-digit values); anything past this is not a line we wrote.
const MaxLineBytes = 64 << 20

// ReadStats says what a reader found in a JSON-lines file.
type ReadStats struct {
	// Lines is the number of non-blank lines seen, including a truncated one.
	Lines int
	// Values is the number of lines decoded and handed to the callback.
	Values int
	// Truncated is 1 when the file ended in a cut-short line (the writer was
	// killed mid-line): that line is skipped rather than failing the read.
	Truncated int
	// DroppedBytes counts the bytes of a compressed file that held no
	// record read: junk between or after frames (zeros a crash left),
	// frames that do not decode, and the tail of a cut frame.
	DroppedBytes int64
	// Missing counts the records known to be lost with those bytes, from
	// the line counts the writer leaves after each frame; records lost
	// where no later count reaches (the file's end) are not in it.
	Missing int64
}

// ReadRecords streams the records of a records file (records.jsonl.zst or
// the plain records.jsonl of older runs: RecordsFile finds it) to fn, in file
// order. Each call gets a fresh *Result that fn may keep. A cut-short last
// line is counted in ReadStats.Truncated and skipped; a corrupt line
// anywhere else is an error naming its line number. An error from fn stops
// the read and is returned wrapped with the line number.
func ReadRecords(path string, fn func(*record.Result) error) (ReadStats, error) {
	return readJSONL(path, fn)
}

// ReadEvents streams the annotations of an events.jsonl file to fn, with the
// same tolerance and errors as ReadRecords.
func ReadEvents(path string, fn func(*record.Event) error) (ReadStats, error) {
	return readJSONL(path, fn)
}

// ReadSeries streams the windows of a series.jsonl file to fn, with the same
// tolerance and errors as ReadRecords.
func ReadSeries(path string, fn func(*record.Window) error) (ReadStats, error) {
	return readJSONL(path, fn)
}

// ReadSpans streams the spans of a spans.jsonl file to fn, with the same
// tolerance and errors as ReadRecords.
func ReadSpans(path string, fn func(*record.Span) error) (ReadStats, error) {
	return readJSONL(path, fn)
}

func readJSONL[T any](path string, fn func(*T) error) (ReadStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return ReadStats{}, fmt.Errorf("read JSON lines: %w", err)
	}
	defer f.Close()
	return decodeFile(path, f, fn)
}

// decodeFile reads a JSON-lines file in either form: plain, or compressed
// (a run of zstd frames, told by its magic number whatever the file's
// name). A compressed file cut inside its last frame (the writer was
// killed between flushes) is read up to that frame and counted in
// ReadStats.Truncated; the lines of the cut frame are not counted in Lines.
func decodeFile[T any](name string, r io.Reader, fn func(*T) error) (ReadStats, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(4); !IsZstd(head) {
		return decodeJSONL(name, br, fn)
	}
	fr := newFrameReader(br)
	defer fr.Close()
	st, err := decodeJSONL(name, fr, fn)
	if fr.truncated {
		st.Truncated = 1
	}
	st.DroppedBytes, st.Missing = fr.dropped, fr.missing
	return st, err
}

// decodeJSONL is readJSONL over any reader; name labels errors.
func decodeJSONL[T any](name string, r io.Reader, fn func(*T) error) (ReadStats, error) {
	var st ReadStats
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, complete, err := readLine(br)
		if err != nil {
			return st, fmt.Errorf("%s line %d: %w", name, lineNo, err)
		}
		if line == nil {
			return st, nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		st.Lines++
		v := new(T)
		if err := unmarshal(line, v); err != nil {
			if !complete {
				st.Truncated = 1 // the writer died mid-line: expected, not corrupt
				return st, nil
			}
			return st, fmt.Errorf("%s line %d: corrupt record: %w", name, lineNo, err)
		}
		st.Values++
		if err := fn(v); err != nil {
			return st, fmt.Errorf("%s line %d: %w", name, lineNo, err)
		}
	}
}

// unmarshal decodes a line into v. A type with its own UnmarshalJSON (a
// record) gets the line directly: json.Unmarshal would first check the
// whole line's syntax, then the method decodes it (and checks it) again.
func unmarshal(line []byte, v any) error {
	if u, ok := v.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(bytes.TrimSpace(line))
	}
	return json.Unmarshal(line, v)
}

// readLine returns the next line without its newline; complete is false for
// a last line with no newline. It returns a nil line at the end of input.
func readLine(br *bufio.Reader) (line []byte, complete bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(line) > MaxLineBytes {
				return nil, false, fmt.Errorf("line longer than %d bytes", MaxLineBytes)
			}
		case errors.Is(err, io.EOF):
			if len(line) == 0 {
				return nil, false, nil
			}
			return line, false, nil
		default:
			return nil, false, err
		}
	}
}
