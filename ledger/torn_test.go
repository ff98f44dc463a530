package ledger

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// zeros is an endless reader of NUL bytes (the tail a power loss leaves in a preallocated file).
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestTornTailOfAnyLength: a last line without a newline is torn whatever its length, so a NUL tail
// past the 16 MiB line cap is a warning and every record before it is read; the same tail ended by
// a newline was written whole and is unusable input, named by its line. Tails just under and just
// over the cap behave alike.
func TestTornTailOfAnyLength(t *testing.T) {
	head := runLine + "\n" + evLine + "\n"
	cases := []struct {
		name    string
		tail    int64
		newline bool
		wantErr string // "": read with one torn-line warning
	}{
		{"NUL tail, 17 MiB, no newline", 17 << 20, false, ""},
		{"NUL tail, one byte over the cap, no newline", MaxLineBytes + 1, false, ""},
		{"NUL tail at the cap, no newline", MaxLineBytes, false, ""},
		{"NUL tail, 17 MiB, newline", 17 << 20, true, "ledger.jsonl:3: line longer than 16777216 bytes"},
		{"NUL tail, one byte over the cap, newline", MaxLineBytes + 1, true, "ledger.jsonl:3: line longer than 16777216 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parts := []io.Reader{strings.NewReader(head), io.LimitReader(zeros{}, tc.tail)}
			if tc.newline {
				parts = append(parts, strings.NewReader("\n"))
			}
			r, err := NewReader("ledger.jsonl", io.MultiReader(parts...))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				_, err = r.Next()
				if err != nil {
					break
				}
				n++
			}
			if tc.wantErr != "" {
				var le *LineError
				if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want a LineError %q", err, tc.wantErr)
				}
				return
			}
			if err != io.EOF || n != 2 {
				t.Fatalf("read %d records, then %v; want 2 and EOF", n, err)
			}
			if w := r.Warnings(); len(w) != 1 || !strings.Contains(w[0].String(), "ledger.jsonl:3: torn last line ignored") {
				t.Errorf("warnings %v, want one torn last line at line 3", w)
			}
		})
	}
}
