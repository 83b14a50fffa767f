package protocol

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tritonView is a TritonEvent with its message decoded.
type tritonView struct {
	Content, Error bool
	ErrMsg         string
}

func viewTriton(e *TritonEvent) tritonView {
	return tritonView{Content: e.Content, Error: e.Error, ErrMsg: decodeJSONString(e.ErrorMessage)}
}

// referenceTriton reads data as encoding/json does, for FuzzTriton.
func referenceTriton(data []byte) (tritonView, bool) {
	obj, ok := referenceObject(data)
	if !ok {
		return tritonView{}, false
	}
	var v tritonView
	switch out := obj["text_output"].(type) {
	case string:
		v.Content = out != ""
	case []any:
		v.Content = len(out) > 0
	}
	switch e := obj["error"].(type) {
	case string:
		v.Error, v.ErrMsg = true, e
	case map[string]any:
		v.Error = true
		v.ErrMsg, _ = e["message"].(string)
	}
	return v, true
}

func TestScanTriton(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data string
		want       tritonView
	}{
		// A response with text is output.
		{"text", `{"model_name":"ensemble","model_version":"1","text_output":"a"}`, tritonView{Content: true}},
		// An empty text is not.
		{"empty", `{"model_name":"ensemble","text_output":""}`, tritonView{}},
		// A model that keeps the batch dimension sends an array.
		{"array", `{"text_output":["a"]}`, tritonView{Content: true}},
		// The extension's error object.
		{"error", `{"error":"request was cancelled"}`, tritonView{Error: true, ErrMsg: "request was cancelled"}},
	}
	for _, tt := range tests {
		var e TritonEvent
		if err := ScanTriton([]byte(tt.data), &e); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, viewTriton(&e)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// FuzzTriton checks ScanTriton against encoding/json.
func FuzzTriton(f *testing.F) {
	f.Add([]byte(`{"model_name":"ensemble","model_version":"1","text_output":"a"}`))
	f.Add([]byte(`{"text_output":[" b"],"output_log_probs":[0.0]}`))
	f.Add([]byte(`{"error":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e TritonEvent
		err := ScanTriton(data, &e)
		ref, valid := referenceTriton(data)
		if !valid {
			return
		}
		if err != nil {
			t.Fatalf("valid JSON object rejected: %v", err)
		}
		if diff := cmp.Diff(ref, viewTriton(&e)); diff != "" {
			t.Errorf("differs from encoding/json (-json +scan):\n%s", diff)
		}
	})
}
