package plan

import (
	"fmt"

	"github.com/inferload/inferload/workload"
)

// FileRef is a plan field that names a file the run reads.
type FileRef struct {
	// Field is the field's YAML path, e.g. "workload.classes[1].dataset.path".
	Field string
	// Path points at the field's value, so a caller can rewrite it (on
	// its own copy of the plan, workload.classes cloned too).
	Path *string
	// Secret says the file holds a secret (target.api_key_file).
	Secret bool
}

// Files are the fields of p that name files, in the plan's order: the key
// and CA files, the trace, a tokenizer file (not an embedded encoding)
// and every dataset. Empty fields are left out.
func (p *Plan) Files() []FileRef {
	var refs []FileRef
	add := func(field string, path *string, secret bool) {
		if *path != "" {
			refs = append(refs, FileRef{Field: field, Path: path, Secret: secret})
		}
	}
	add("target.api_key_file", &p.Target.APIKeyFile, true)
	add("target.ca_file", &p.Target.CAFile, false)
	add("load.trace.path", &p.Load.Trace.Path, false)
	switch p.Workload.Tokenizer {
	case workload.Cl100kBase, workload.O200kBase:
	default:
		add("workload.tokenizer", &p.Workload.Tokenizer, false)
	}
	add("workload.dataset.path", &p.Workload.Dataset.Path, false)
	for i := range p.Workload.Classes {
		add(fmt.Sprintf("workload.classes[%d].dataset.path", i), &p.Workload.Classes[i].Dataset.Path, false)
	}
	return refs
}
