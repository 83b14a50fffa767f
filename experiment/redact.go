package experiment

import (
	"reflect"

	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// planRedactor redacts the plan's secrets (plan.Plan.Secrets) and the API
// key, if it resolves.
func planRedactor(p *plan.Plan, env Env) record.Redactor {
	key, _ := env.apiKey(p)
	return record.NewRedactor(p.Secrets(key))
}

// redactStrings replaces every secret in every string reachable from v (a
// pointer to a struct of strings, slices, maps and nested structs): what
// a server says about itself (a model id, a Server header echoing the
// Authorization it was sent) is written to env.json and report.html.
func redactStrings(v reflect.Value, r record.Redactor) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			redactStrings(v.Elem(), r)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(r.Redact(v.String()))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				redactStrings(v.Field(i), r)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			redactStrings(v.Index(i), r)
		}
	case reflect.Map:
		redactMap(v, r)
	}
}

// redactMap rebuilds a map whose keys or values hold a secret (map values
// are not addressable, so each is copied, redacted and stored back).
func redactMap(v reflect.Value, r record.Redactor) {
	if v.IsNil() {
		return
	}
	for _, k := range v.MapKeys() {
		val := reflect.New(v.Type().Elem()).Elem()
		val.Set(v.MapIndex(k))
		redactStrings(val, r)
		nk := k
		if k.Kind() == reflect.String {
			nk = reflect.ValueOf(r.Redact(k.String())).Convert(k.Type())
		}
		v.SetMapIndex(k, reflect.Value{})
		v.SetMapIndex(nk, val)
	}
}
