package verifier

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// WriteJSON writes the summary JSON (docs/ledger-v1.md field names), indented, with a final newline.
//
// The tenants list, which names every tenant of the run (a million in a large one), is written one
// entry at a time into the place the rest of the summary leaves for it: encoding it with the rest
// would hold the whole summary twice over (encoded, then indented) in memory. The bytes are those
// of encoding it all at once.
func WriteJSON(w io.Writer, s *Summary) error {
	rest := *s
	rest.Tenants = nil
	var doc bytes.Buffer
	if err := encodeIndented(&doc, &rest, ""); err != nil {
		return err
	}
	// A top-level key is the only line indented by exactly two spaces that starts with its name:
	// strings in the JSON cannot hold a newline.
	const hole = "\n  \"tenants\": null,\n"
	before, after, ok := bytes.Cut(doc.Bytes(), []byte(hole))
	if !ok {
		return errors.New("summary JSON: no tenants field") // cannot happen: Summary always has one
	}
	bw := bufio.NewWriter(w)
	bw.Write(before)
	bw.WriteString("\n  \"tenants\": ")
	if s.Tenants == nil {
		bw.WriteString("null")
	} else if len(s.Tenants) == 0 {
		bw.WriteString("[]")
	} else {
		var one bytes.Buffer
		bw.WriteString("[\n")
		for i := range s.Tenants {
			one.Reset()
			if err := encodeIndented(&one, &s.Tenants[i], "    "); err != nil {
				return err
			}
			bw.WriteString("    ")
			bw.Write(bytes.TrimSuffix(one.Bytes(), []byte("\n")))
			if i < len(s.Tenants)-1 {
				bw.WriteByte(',')
			}
			bw.WriteByte('\n')
		}
		bw.WriteString("  ]")
	}
	bw.WriteString(",\n")
	bw.Write(after)
	return bw.Flush()
}

// encodeIndented writes v as the summary JSON is written: indented by two spaces, each line after
// the first starting with prefix, HTML characters as they are, and a final newline.
func encodeIndented(w io.Writer, v any, prefix string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
