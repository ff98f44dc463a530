package ledger

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestNextIntoAsNext: reading with NextInto, each record into a buffer of its own, gives the records,
// the final error and the warnings Next gives, for one file (tenant records read ahead, an unknown
// kind skipped, post-run records, a torn last line, a bad line) and for several files merged. In one
// file every record after the run header is decoded into the caller's buffer (the copy NextInto
// saves), but the first after the tenant records, which the header read ahead; a buffer handed over
// dirty comes back holding only its record.
func TestNextIntoAsNext(t *testing.T) {
	const head = `{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1,"pods":["p"],"target":"eventlogd"}
{"k":"tenant","id":"t1","mode":"dedicated","cold":false}
{"k":"tenant","id":"t2","mode":"shared","cold":true}
`
	const body = `{"k":"mut","mid":"m1","tenant":"t1","op":"write","path":"/a/m1","intended_t":1,"t":2,"done_t":3,"res":"ok","status":200,"pod":"p"}
{"k":"future_kind","t":3}

{"k":"ev","consumer":"c","tenant":"t1","conn":"c#1","t":4,"seq":1,"op":"write","path":"/a/m1","pod":"p"}
{"k":"metric","t":5,"pod":"p","name":"x_total","labels":{"tenant":"t1"},"value":2}
{"k":"persisted","tenant":"t1","seq":1,"op":"write","path":"/a/m1"}
{"k":"consumer","consumer":"c","tenant":"t1","from_t":1,"to_t":9,"first_since":0,"final_cursor":1,"durable":true}
`
	dir := t.TempDir()
	other := filepath.Join(dir, "b.jsonl")
	writeAll(t, mustCreate(t, other), []Record{{K: KindRun, V: 1, RunID: "m", Scenario: "s", Seed: 1, Target: "eventlogd",
		Shard: &Shard{K: 2, N: 2}, Tenants: []Tenant{{ID: "u2", Mode: "shared"}}, Pods: []string{"q"}},
		{K: KindEv, Consumer: "d", Tenant: "u2", T: 3, Seq: 1, Path: "/b"}, {K: KindEnd, T: 9}})
	first := filepath.Join(dir, "a.jsonl")
	writeAll(t, mustCreate(t, first), []Record{{K: KindRun, V: 1, RunID: "m", Scenario: "s", Seed: 1, Target: "eventlogd",
		Shard: &Shard{K: 1, N: 2}, Tenants: []Tenant{{ID: "u1", Mode: "shared"}}, Pods: []string{"p"}},
		{K: KindMut, MID: "x", Tenant: "u1", T: 1, DoneT: 2, Res: ResOK, Path: "/a"}, {K: KindEnd, T: 8}})

	type read struct {
		recs     []Record
		err      error
		warnings []Warning
		into     int // records that came back in the caller's buffer
	}
	readAll := func(t *testing.T, open func() *Reader, into bool) read {
		r := open()
		r.BorrowStrings()
		var out read
		for {
			var rec *Record
			var err error
			if into {
				dst := &Record{K: "stale", Path: "/stale", Labels: map[string]string{"stale": "1"}, Seq: 99}
				if rec, err = r.NextInto(dst); rec == dst {
					out.into++
				}
			} else {
				rec, err = r.Next()
			}
			if err != nil {
				out.err, out.warnings = err, r.Warnings()
				return out
			}
			c := *rec
			c.Path, c.MID = strings.Clone(rec.Path), strings.Clone(rec.MID)
			out.recs = append(out.recs, c)
		}
	}
	text := func(s string) func() *Reader {
		return func() *Reader {
			r, err := NewReader("l", strings.NewReader(s))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	for _, tc := range []struct {
		name     string
		open     func() *Reader
		wantInto int // -1: the records after the header and the one read ahead
		wantErr  error
	}{
		{"one file", text(head + body + `{"k":"end","t":9,"drained":true}` + "\n"), -1, io.EOF},
		{"torn last line", text(head + body + `{"k":"end","t":9,"dr`), -1, io.EOF},
		{"a bad line", text(head + body[:strings.Index(body, "\n")+1] + "{\"k\":\"ev\",\"t\":\"x\"}\n"), -1, nil},
		{"several files merged", func() *Reader {
			r, err := Open(first, other)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}, 0, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := readAll(t, tc.open, false), readAll(t, tc.open, true)
			if !reflect.DeepEqual(want.recs, got.recs) {
				t.Fatalf("records differ:\nNext     %+v\nNextInto %+v", want.recs, got.recs)
			}
			if !reflect.DeepEqual(want.warnings, got.warnings) || (want.err == nil) != (got.err == nil) ||
				(want.err != nil && want.err.Error() != got.err.Error()) {
				t.Fatalf("ends differ: Next %v %v, NextInto %v %v", want.err, want.warnings, got.err, got.warnings)
			}
			if tc.wantErr != nil && !errors.Is(got.err, tc.wantErr) || tc.wantErr == nil && errors.Is(got.err, io.EOF) {
				t.Fatalf("ended with %v, want %v (nil: a line error)", got.err, tc.wantErr)
			}
			wantInto := tc.wantInto
			if wantInto < 0 {
				wantInto = len(got.recs) - 2
			}
			if got.into != wantInto || len(got.recs) < 2 {
				t.Fatalf("%d of %d records came back in the caller's buffer, want %d", got.into, len(got.recs), wantInto)
			}
		})
	}
}

func mustCreate(t *testing.T, path string) *Writer {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("%s exists", path)
	}
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
