package tritonpb

import (
	"errors"
	"slices"
	"testing"
)

// Raw BYTES tensors: what each holds, and where a truncated one stops.
func TestRawBytes(t *testing.T) {
	t.Parallel()
	two := AppendBytes(AppendBytes(nil, ""), "hi")
	tests := []struct {
		name  string
		raw   []byte
		elems []string
		any   bool
		err   error
	}{
		// An empty element then a non-empty one.
		{"two", two, []string{"", "hi"}, true, nil},
		// Only an empty element: no text.
		{"empty element", AppendBytes(nil, ""), []string{""}, false, nil},
		// No elements at all.
		{"none", nil, nil, false, nil},
		// The last byte cut: the element's length runs past the end.
		{"cut data", two[:len(two)-1], []string{""}, false, ErrTruncated},
		// A length prefix cut short.
		{"cut length", []byte{1, 0}, nil, false, ErrTruncated},
	}
	for _, tt := range tests {
		var got []string
		err := EachBytes(tt.raw, func(e []byte) { got = append(got, string(e)) })
		if !slices.Equal(got, tt.elems) || !errors.Is(err, tt.err) {
			t.Errorf("%s: EachBytes %q, %v; want %q, %v", tt.name, got, err, tt.elems, tt.err)
		}
		if any, err := AnyBytes(tt.raw); any != tt.any || !errors.Is(err, tt.err) {
			t.Errorf("%s: AnyBytes %v, %v; want %v, %v", tt.name, any, err, tt.any, tt.err)
		}
	}
	if v, err := FirstInt32(AppendInt32(nil, -7)); v != -7 || err != nil {
		t.Errorf("INT32 -7 read back as %d, %v", v, err)
	}
	if _, err := FirstInt32([]byte{1}); err == nil {
		t.Error("a 1-byte INT32 tensor read without error")
	}
}
