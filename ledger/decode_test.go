package ledger

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStringsAgreeWithEncodingJSON: for every length up to 40 and a special character at every
// position (escape, quote, control byte, non-ASCII, invalid UTF-8), the decoder accepts and rejects
// exactly what encoding/json does and decodes to the same string (the 8-byte fast path included).
func TestStringsAgreeWithEncodingJSON(t *testing.T) {
	specials := []string{`\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, "\x01", `"`, "é", "\xff", `\x`, "\u2028"}
	for n := 0; n <= 40; n++ {
		for pos := 0; pos <= n; pos++ {
			for _, sp := range specials {
				body := strings.Repeat("a", pos) + sp + strings.Repeat("b", n-pos)
				line := []byte(`{"k":"x","path":"` + body + `"}`)
				var want struct {
					Path string `json:"path"`
				}
				stdErr := json.Unmarshal(line, &want)
				var rec Record
				d := decoder{in: newInterner(16)}
				err := d.decode(line, &rec)
				if (err != nil) != (stdErr != nil) {
					t.Fatalf("%q: decoder error %v, encoding/json error %v", line, err, stdErr)
				}
				if err == nil && rec.Path != want.Path {
					t.Fatalf("%q: decoded %q, encoding/json %q", line, rec.Path, want.Path)
				}
			}
		}
	}
}

// TestNumbersSyntaxAgreesWithEncodingJSON: a number is valid JSON for the decoder exactly when it is
// for encoding/json; integral values are accepted for integer fields, others named in the error.
func TestNumbersSyntaxAgreesWithEncodingJSON(t *testing.T) {
	tests := []struct {
		lit  string
		want int64
		ok   bool // accepted for an integer field
	}{
		{"0", 0, true}, {"-0", 0, true}, {"42", 42, true}, {"-17", -17, true}, {"1e3", 1000, true}, {"5.0", 5, true},
		{"9223372036854775807", 9223372036854775807, true}, {"123456789012345678", 123456789012345678, true},
		{"1.5", 0, false}, {"1e400", 0, false}, {"9223372036854775808", 0, false},
		{"01", 0, false}, {"-", 0, false}, {"1.", 0, false}, {".5", 0, false}, {"1e", 0, false}, {"+1", 0, false}, {"0x10", 0, false},
	}
	for _, tt := range tests {
		line := []byte(`{"k":"x","seq":` + tt.lit + `}`)
		var rec Record
		d := decoder{in: newInterner(16)}
		err := d.decode(line, &rec)
		if (err == nil) != json.Valid(line) {
			t.Errorf("%s: syntax error %v, json.Valid %v", tt.lit, err, json.Valid(line))
			continue
		}
		got := err == nil && len(d.ferrs) == 0
		if got != tt.ok || (got && rec.Seq != tt.want) {
			t.Errorf("%s: accepted %v (%v) seq %d, want accepted %v seq %d", tt.lit, got, d.ferrs, rec.Seq, tt.ok, tt.want)
		}
	}
}
