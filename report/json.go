package report

import (
	"io"

	"github.com/inferload/inferload/record"
)

// WriteJSON writes s as summary.json's exact bytes (indented, trailing
// newline): what `--output json` prints, so a script reading stdout sees
// the same document as one reading the run directory.
func WriteJSON(w io.Writer, s *record.Summary) error {
	return record.EncodeSummary(w, s)
}
