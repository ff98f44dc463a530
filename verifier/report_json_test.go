package verifier

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestWriteJSONAsOneEncoding: WriteJSON, which writes the tenants list entry by entry, gives the
// bytes of encoding the whole summary at once, for summaries with many tenants, one, none, a nil
// list (a summary read back from JSON without one), and names with HTML characters and escapes.
func TestWriteJSONAsOneEncoding(t *testing.T) {
	base := func() *Summary { return verifyText(t, idleLedger(), Options{}) }
	for _, tc := range []struct {
		name string
		edit func(*Summary)
	}{
		{"as verified", func(*Summary) {}},
		{"anomalies", func(s *Summary) { *s = *anomalySummary(t) }},
		{"one tenant", func(s *Summary) { s.Tenants = s.Tenants[:1] }},
		{"empty list", func(s *Summary) { s.Tenants = []TenantInfo{} }},
		{"nil list", func(s *Summary) { s.Tenants = nil }},
		{"odd names", func(s *Summary) {
			s.Tenants = append(s.Tenants, TenantInfo{Name: "a<b>&c", ID: "q\"\\\n\u2028", Mode: "shared", Cold: true})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.edit(s)
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteJSON(&got, s); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("WriteJSON differs from one encoding:\n got %s\nwant %s", got.String(), want.String())
			}
		})
	}
}
