package verifier

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the summary JSON (docs/ledger-v1.md field names), indented, with a final newline.
func WriteJSON(w io.Writer, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}
