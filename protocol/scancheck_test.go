package protocol

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scanCheck is one of the allocation-free object scanners (ScanChunk,
// ScanTGI, ScanOllama, ScanTriton) with what its tests compare: a view of
// what it read (decoded strings, comparable with cmp), and the same view
// computed with encoding/json.
type scanCheck[T, V any] struct {
	scan      func([]byte, *T) error
	view      func(*T) V
	reference func([]byte) (V, bool)
}

// scanCase is one row of a scanner's table test: an object and the view
// its scan must give.
type scanCase[V any] struct {
	name, data string
	want       V
}

// table scans each row's object and compares the view with the row's.
func (s scanCheck[T, V]) table(t *testing.T, tests []scanCase[V]) {
	t.Helper()
	for _, tt := range tests {
		var e T
		if err := s.scan([]byte(tt.data), &e); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, s.view(&e)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// fuzz checks the scanner against encoding/json: every valid JSON object
// is accepted and read as encoding/json reads it; nothing panics.
func (s scanCheck[T, V]) fuzz(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var e T
		err := s.scan(data, &e)
		ref, valid := s.reference(data)
		if !valid {
			return
		}
		if err != nil {
			t.Fatalf("valid JSON object rejected: %v", err)
		}
		if diff := cmp.Diff(ref, s.view(&e)); diff != "" {
			t.Errorf("differs from encoding/json (-json +scan):\n%s", diff)
		}
	})
}

// referenceObject decodes data as one JSON object with numbers kept as
// written, or reports false.
func referenceObject(data []byte) (map[string]any, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top any
	if dec.Decode(&top) != nil {
		return nil, false
	}
	obj, ok := top.(map[string]any)
	return obj, ok
}

// referenceError reads an "error" member as the scanners do: a string is
// the message, an object carries it in "message"; anything else is no
// error.
func referenceError(e any) (isError bool, msg string) {
	switch e := e.(type) {
	case string:
		return true, e
	case map[string]any:
		msg, _ = e["message"].(string)
		return true, msg
	}
	return false, ""
}
