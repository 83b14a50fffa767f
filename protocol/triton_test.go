package protocol

import "testing"

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
	v.Error, v.ErrMsg = referenceError(obj["error"])
	return v, true
}

func TestScanTriton(t *testing.T) {
	t.Parallel()
	tests := []scanCase[tritonView]{
		// A response with text is output.
		{"text", `{"model_name":"ensemble","model_version":"1","text_output":"a"}`, tritonView{Content: true}},
		// An empty text is not.
		{"empty", `{"model_name":"ensemble","text_output":""}`, tritonView{}},
		// A model that keeps the batch dimension sends an array.
		{"array", `{"text_output":["a"]}`, tritonView{Content: true}},
		// The extension's error object.
		{"error", `{"error":"request was cancelled"}`, tritonView{Error: true, ErrMsg: "request was cancelled"}},
	}
	tritonScan.table(t, tests)
}

// FuzzTriton checks ScanTriton against encoding/json.
func FuzzTriton(f *testing.F) {
	f.Add([]byte(`{"model_name":"ensemble","model_version":"1","text_output":"a"}`))
	f.Add([]byte(`{"text_output":[" b"],"output_log_probs":[0.0]}`))
	f.Add([]byte(`{"error":"x"}`))
	tritonScan.fuzz(f)
}

var tritonScan = scanCheck[TritonEvent, tritonView]{scan: ScanTriton, view: viewTriton, reference: referenceTriton}
