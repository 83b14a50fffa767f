package plan

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestFiles: every field that names a file is reported, with its YAML
// path; an embedded tokenizer is a name, not a file.
func TestFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		yaml string
		want []string
	}{
		// A plan without files.
		{"target: {url: http://h/v1}\nload: {concurrency: 1}\nworkload: {tokenizer: o200k_base}\n", nil},
		// A tokenizer.json, a dataset and a class's dataset.
		{`target: {url: http://h/v1, ca_file: ca.pem}
load: {concurrency: 1}
workload:
  tokenizer: tok/tokenizer.json
  classes:
    - {name: a, weight: 1}
    - {name: b, weight: 1, dataset: {path: b.jsonl}}
`, []string{"target.ca_file", "workload.tokenizer", "workload.classes[1].dataset.path"}},
		// A trace and a key file (a secret).
		{"target: {url: http://h/v1, api_key_file: key}\nload: {trace: {path: t.csv}}\n", []string{"target.api_key_file", "load.trace.path"}},
	}
	for _, tt := range tests {
		p, err := Parse("plan.yaml", []byte(tt.yaml))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range p.Files() {
			got = append(got, f.Field)
			if f.Secret != (f.Field == "target.api_key_file") {
				t.Errorf("%s: secret %v", f.Field, f.Secret)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Files() = %v, want %v\n%s", got, tt.want, tt.yaml)
		}
	}
}

// TestFilesCoverTheSchema: every string field of the plan whose name says
// it holds a file (path, *_file, tokenizer) is one Files reports, so a new
// file field cannot be forgotten by the Kubernetes manifests (which mount
// what Files names). target.http.path is a URL's path, not a file.
func TestFilesCoverTheSchema(t *testing.T) {
	t.Parallel()
	var p Plan
	var fields []string
	setFileFields(reflect.ValueOf(&p).Elem(), "", &fields)
	var got []string
	for _, f := range p.Files() {
		got = append(got, strings.ReplaceAll(f.Field, "[0]", "[]"))
	}
	slices.Sort(got)
	slices.Sort(fields)
	if !slices.Equal(got, fields) {
		t.Errorf("Files() reports %v; the schema's file fields are %v", got, fields)
	}
}

// setFileFields sets every file-naming string field under v to "f", one
// element in each slice of structs, and lists their YAML paths.
func setFileFields(v reflect.Value, prefix string, fields *[]string) {
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		path := prefix + tag
		f := v.Field(i)
		switch {
		case f.Kind() == reflect.String && (tag == "path" || strings.HasSuffix(tag, "_file") || tag == "tokenizer"):
			if path == "target.http.path" {
				continue
			}
			f.SetString("f")
			*fields = append(*fields, path)
		case f.Kind() == reflect.Struct:
			setFileFields(f, path+".", fields)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			setFileFields(f.Index(0), path+"[].", fields)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.New(f.Type().Elem()))
			setFileFields(f.Elem(), path+".", fields)
		}
	}
}
