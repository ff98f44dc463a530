package ledger

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/internal/linereader"
)

// TestBorrowStrings: a reader that lends Path and MID returns the same records as one that copies
// them, for plain, escaped, non-ASCII and invalid UTF-8 paths and numeric mids; and the lent strings
// really are borrowed (the control: a kept one changes with the next line), so the verifier's copies
// are needed.
func TestBorrowStrings(t *testing.T) {
	const ledger = `{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1,"tenants":[{"id":"t1","mode":"dedicated"}],"pods":["p"],"target":"eventlogd"}
{"k":"mut","mid":"m1","tenant":"t1","op":"write","path":"/sg/r/t1/m1","intended_t":1,"t":2,"done_t":3,"res":"ok","status":200,"pod":"p"}
{"k":"mut","mid":42,"tenant":"t1","op":"write","path":"/sg/r/t1/\u00e9\"x","intended_t":1,"t":2,"done_t":3,"res":"ok","status":200,"pod":"p"}
{"k":"ev","consumer":"c","tenant":"t1","conn":"c#1","t":4,"seq":1,"op":"write","path":"/sg/r/t1/é","pod":"p"}
{"k":"ev","consumer":"c","tenant":"t1","conn":"c#1","t":5,"seq":2,"op":"write","path":"/sg/r/t1/` + "\xff" + `","pod":"p"}
{"k":"mut","mid":"m\n3","tenant":"t1","op":"write","path":"","intended_t":1,"t":2,"done_t":3,"res":"ok","status":200,"pod":"p"}
{"k":"persisted","tenant":"t1","seq":1,"op":"write","path":"/sg/r/t1/m1"}
{"k":"end","t":9,"drained":true}
`
	read := func(borrow bool) []Record {
		r, err := NewReader("l", strings.NewReader(ledger))
		if err != nil {
			t.Fatal(err)
		}
		if borrow {
			r.BorrowStrings()
		}
		var out []Record
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			c := *rec
			c.Path, c.MID = strings.Clone(rec.Path), strings.Clone(rec.MID)
			out = append(out, c)
		}
	}
	copied, lent := read(false), read(true)
	if !reflect.DeepEqual(copied, lent) {
		t.Fatalf("records differ:\ncopied %+v\nlent   %+v", copied, lent)
	}
	if len(lent) != 8 || lent[2].MID != "42" || lent[2].Path != "/sg/r/t1/é\"x" || lent[4].Path != "/sg/r/t1/\uFFFD" {
		t.Fatalf("unexpected records: %+v", lent)
	}

	// one line per Read: the reader's buffer is refilled from its start for every line
	r, _ := NewReader("l", linereader.New(ledger))
	r.BorrowStrings()
	_, _ = r.Next()
	m, _ := r.Next()
	kept := m.Path
	_, _ = r.Next()
	if kept == "/sg/r/t1/m1" {
		t.Errorf("a lent path kept past Next still reads %q: it was copied, not lent", kept)
	}
}
