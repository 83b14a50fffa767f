package report

import (
	"fmt"
	"maps"
	"slices"

	"github.com/inferload/inferload/analyze"
)

// envParts are env.json's top-level fields with their table captions, in
// display order; GPUs get a table of their own (gpuTable).
var envParts = []struct{ key, caption string }{
	{"client", "client host"},
	{"target", "target"},
	{"declared", "declared by the user (plan env: or --env)"},
}

// environmentSection shows env.json as tables: the client host, the
// target as declared and as it described itself, one row per GPU (local
// and on the server), and the user's declared fields. Fields this report
// does not know yet still appear, under "other".
func environmentSection(in *HTMLInput) *section {
	if len(in.Env) == 0 {
		return nil
	}
	sec := &section{ID: "environment", Title: "Environment",
		Help: "From env.json: what ran, where, against what. Two runs' env.json files diff line by line."}
	known := map[string]bool{"gpus": true, "server_gpus": true}
	for _, part := range envParts {
		known[part.key] = true
		if t, ok := flatTable(part.caption, in.Env[part.key]); ok {
			sec.Tables = append(sec.Tables, t)
		}
	}
	if t, note := gpuTable(in.Env); len(t.Rows) > 0 {
		sec.Tables = append(sec.Tables, t)
	} else if note != "" {
		sec.Notes = append(sec.Notes, note)
	}
	other := map[string]any{}
	for k, v := range in.Env {
		if !known[k] {
			other[k] = v
		}
	}
	if t, ok := flatTable("other", other); ok {
		sec.Tables = append(sec.Tables, t)
	}
	return sec
}

// flatTable lists a JSON value's leaves as field/value rows, sorted.
func flatTable(caption string, v any) (table, bool) {
	flat := map[string]string{}
	analyze.FlattenJSON(flat, "", v)
	t := table{Caption: caption, Head: []string{"field", "value"}}
	for _, k := range slices.Sorted(maps.Keys(flat)) {
		t.Rows = append(t.Rows, []string{k, flat[k]})
	}
	return t, len(t.Rows) > 0
}

// gpuTable has one row per GPU: local ones (NVML or nvidia-smi) and the
// server's (DCGM labels). Without any, the note says why there are none.
func gpuTable(env map[string]any) (table, string) {
	t := table{Caption: "GPUs", Head: []string{"where", "index", "model", "memory (MiB)", "driver", "CUDA", "UUID"}}
	note := ""
	if local, ok := env["gpus"].(map[string]any); ok {
		backend := fmt.Sprint(local["backend"])
		gpus, _ := local["gpus"].([]any)
		for _, g := range gpus {
			t.Rows = append(t.Rows, gpuRow("local ("+backend+")", g))
		}
		if len(gpus) == 0 {
			if reason, ok := local["reason"].(string); ok {
				note = "Local GPUs: none. " + reason
			}
		}
	}
	server, _ := env["server_gpus"].([]any)
	for _, g := range server {
		t.Rows = append(t.Rows, gpuRow("server (DCGM)", g))
	}
	return t, note
}

func gpuRow(where string, v any) []string {
	g, _ := v.(map[string]any)
	field := func(k string) string {
		switch x := g[k].(type) {
		case nil:
			return ""
		case float64:
			if x < 0 {
				return "" // -1: not reported by this source
			}
			return fmt.Sprintf("%.0f", x)
		default:
			return fmt.Sprint(x)
		}
	}
	return []string{where, field("index"), field("name"), field("memory_total_mib"), field("driver"), field("cuda"), field("uuid")}
}
