package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// maxExtractDepth bounds an extraction path; deeper JSON is unusual for a
// search reply and a path longer than this is more likely a typo.
const maxExtractDepth = 16

// ExtractText returns the text a reply yields for path. An empty path
// takes the whole body. Otherwise path is dot-separated: a name selects an
// object's key, a number an array's element, and "*" every element of an
// array (or every value of an object, in key order), e.g.
// "results.*.payload.text" or "matches.0.text". A string is taken as is;
// any other value as its JSON text; several matches are joined by a blank
// line. A path that matches nothing is an error, so a mistyped path fails
// loudly instead of sending prompts without their retrieved context.
func ExtractText(body []byte, path string) (string, error) {
	if path == "" {
		return string(body), nil
	}
	segs, err := parseExtract(path)
	if err != nil {
		return "", err
	}
	root, err := decodeReply(body)
	if err != nil {
		return "", fmt.Errorf("extract %q: reply is not JSON: %v", path, err)
	}
	out := segs.texts(root)
	if len(out) == 0 {
		return "", fmt.Errorf("extract %q: the reply has no such field", path)
	}
	return strings.Join(out, "\n\n"), nil
}

// jsonPath is a parsed extraction path (ExtractText's syntax).
type jsonPath []string

// texts returns the texts root yields for p, none when nothing matches
// or p is empty (no path: nothing asked for).
func (p jsonPath) texts(root any) []string {
	if len(p) == 0 {
		return nil
	}
	var out []string
	collect(root, p, &out)
	return out
}

// decodeReply decodes one JSON value, keeping numbers as written.
func decodeReply(body []byte) (any, error) {
	var root any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return root, nil
}

// parseExtract splits and checks an extraction path.
func parseExtract(path string) (jsonPath, error) {
	if path == "" {
		return nil, nil
	}
	segs := strings.Split(path, ".")
	if len(segs) > maxExtractDepth {
		return nil, fmt.Errorf("extract path %q: more than %d parts", path, maxExtractDepth)
	}
	for _, s := range segs {
		if s == "" {
			return nil, fmt.Errorf("extract path %q: empty part (want e.g. results.*.text)", path)
		}
	}
	return segs, nil
}

// collect appends the texts v yields for segs.
func collect(v any, segs []string, out *[]string) {
	if len(segs) == 0 {
		*out = append(*out, leafText(v))
		return
	}
	seg, rest := segs[0], segs[1:]
	switch x := v.(type) {
	case map[string]any:
		if seg == "*" {
			for _, k := range sortedKeys(x) {
				collect(x[k], rest, out)
			}
		} else if child, ok := x[seg]; ok {
			collect(child, rest, out)
		}
	case []any:
		if seg == "*" {
			for _, e := range x {
				collect(e, rest, out)
			}
		} else if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
			collect(x[i], rest, out)
		}
	}
}

// leafText is a matched value as text.
func leafText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return string(appendJSONValue(nil, v))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // map order is random; the joined text must not be
	return keys
}

// appendJSONValue encodes v compactly without HTML escaping (retrieved
// text is data, not HTML).
func appendJSONValue(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...) // decoded JSON always re-encodes
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
