package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// jsonTypeProblem says, in the file's terms, what a JSON value of the
// wrong type should have been: `field "conversations" must be an array of
// objects, not a number`. encoding/json's own text names Go types
// ("cannot unmarshal number into Go struct field
// shareGPTConversation.conversations of type []struct { From string ...
// }"), which mean nothing to whoever wrote the file. Other errors are
// returned as they are.
//
// root is the Go value decoded into (a pointer to it): when the field is
// an array and the wrong value one of its items, that is what is said.
func jsonTypeProblem(err error, root any) error {
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) {
		return err
	}
	what := "the value"
	if typ.Field != "" {
		what = fmt.Sprintf("field %q", typ.Field)
		if d := fieldType(reflect.TypeOf(root), typ.Field); d != nil && isList(d) && d.Elem() == typ.Type {
			what = fmt.Sprintf("each item of field %q", typ.Field)
		}
	}
	return fmt.Errorf("%s must be %s, not %s", what, jsonKindOf(typ.Type), article(typ.Value))
}

// fieldType is the declared type of the dotted JSON field path in t (a
// struct, or a pointer or list of them), nil when it cannot be followed.
func fieldType(t reflect.Type, path string) reflect.Type {
	for name := range strings.SplitSeq(path, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || isList(t)) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			return nil
		}
		var next reflect.Type
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == name || (tag == "" && strings.EqualFold(f.Name, name)) {
				next = f.Type
				break
			}
		}
		t = next
	}
	return t
}

func isList(t reflect.Type) bool { return t.Kind() == reflect.Slice || t.Kind() == reflect.Array }

// jsonKindOf names the JSON a Go type is decoded from.
func jsonKindOf(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if e := jsonKindOf(t.Elem()); e != "another type" {
			return "an array of " + plural(e)
		}
		return "an array"
	}
	return "another type"
}

// plural turns "an object" into "objects", "a whole number" into "whole
// numbers", "true or false" into "true or false values".
func plural(kind string) string {
	switch kind {
	case "true or false":
		return "true or false values"
	case "an array":
		return "arrays"
	}
	for _, a := range []string{"an ", "a "} {
		if len(kind) > len(a) && kind[:len(a)] == a {
			return kind[len(a):] + "s"
		}
	}
	return kind
}

// article puts a or an before encoding/json's name of the JSON found
// ("number", "array", "object", "string", "bool").
func article(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "bool":
		return "true or false"
	case "":
		return "something else"
	}
	return "a " + v
}
