package ledger

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
)

const runLine = `{"k":"run","v":1,"run_id":"r1","scenario":"s","seed":1,"start_unix_ns":5,"budget":0.0001,"tenants":[{"id":"t1","mode":"dedicated","cold":false}],"pods":["p0"],"target":"eventlogd"}`
const evLine = `{"k":"ev","consumer":"c1","tenant":"t1","conn":"x","t":5,"seq":1,"op":"write","path":"/a","pod":"p0"}`

// readString reads a whole ledger given as text and returns the records, the warnings and the error.
func readString(t *testing.T, name, text string) ([]Record, []Warning, error) {
	t.Helper()
	r, err := NewReader(name, strings.NewReader(text))
	if err != nil {
		return nil, nil, err
	}
	var recs []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs, r.Warnings(), nil
		}
		if err != nil {
			return recs, r.Warnings(), err
		}
		recs = append(recs, *rec)
	}
}

func TestLineErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // the full error text
	}{
		{"bad seq type", runLine + "\n" + strings.Replace(evLine, `"seq":1`, `"seq":"abc"`, 1) + "\n",
			`ledger.jsonl:2: field "seq": want integer, got "abc"`},
		{"fractional int", runLine + "\n" + strings.Replace(evLine, `"t":5`, `"t":1.5`, 1) + "\n",
			`ledger.jsonl:2: field "t": want integer, got 1.5`},
		{"missing required", runLine + "\n" + strings.Replace(evLine, `"seq":1,`, ``, 1) + "\n",
			`ledger.jsonl:2: field "seq": missing (required for k "ev")`},
		{"null required", runLine + "\n" + strings.Replace(evLine, `"seq":1`, `"seq":null`, 1) + "\n",
			`ledger.jsonl:2: field "seq": missing (required for k "ev")`},
		{"bad enum", runLine + "\n" + `{"k":"pod","pod":"p0","phase":"dancing","t":1}` + "\n",
			`ledger.jsonl:2: field "phase": want one of start|ready|crash|exit, got "dancing"`},
		{"bad res", runLine + "\n" + `{"k":"mut","mid":"m","tenant":"t1","op":"write","path":"/a","intended_t":1,"t":1,"done_t":1,"res":"maybe","pod":"p0"}` + "\n",
			`ledger.jsonl:2: field "res": want one of ok|err|timeout, got "maybe"`},
		{"invalid JSON mid-file", runLine + "\n{\"k\":\"ev\",\n" + evLine + "\n",
			`ledger.jsonl:2: invalid JSON at column 11: want a string`},
		{"missing k", runLine + "\n" + `{"t":1}` + "\n", `ledger.jsonl:2: field "k": missing (every record needs its kind)`},
		{"missing run", evLine + "\n", `ledger.jsonl:1: field "k": first record must be k "run", got "ev"`},
		{"empty", "", `ledger.jsonl:1: field "k": empty ledger: want a "run" record first`},
		{"wrong version", strings.Replace(runLine, `"v":1`, `"v":2`, 1) + "\n",
			`ledger.jsonl:1: field "v": unsupported ledger version 2, this reader knows 1`},
		{"bad tenant mode", strings.Replace(runLine, `"dedicated"`, `"solo"`, 1) + "\n",
			`ledger.jsonl:1: field "tenants": tenant "t1": mode want one of dedicated|shared, got "solo"`},
		{"labels not strings", runLine + "\n" + `{"k":"metric","pod":"p","t":1,"name":"x","labels":{"a":1},"value":1}` + "\n",
			`ledger.jsonl:2: field "labels": label "a": want string`},
		{"second run", runLine + "\n" + runLine + "\n", `ledger.jsonl:2: field "k": a second "run" record (only the first line may be one)`},
		{"run record after post-run", runLine + "\n" + `{"k":"end","t":1,"drained":true}` + "\n" + evLine + "\n",
			`ledger.jsonl:3: field "k": a "ev" record after the post-run records (persisted, consumer and end come last)`},
		{"after end", runLine + "\n" + `{"k":"end","t":1,"drained":true}` + "\n" + `{"k":"end","t":1,"drained":true}` + "\n",
			`ledger.jsonl:3: field "k": a "end" record after "end" (end is the last line)`},
		{"torn line not last", runLine + "\n" + evLine[:30] + "\n" + evLine + "\n",
			`ledger.jsonl:2: invalid JSON at column 31: unterminated string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readString(t, "ledger.jsonl", tt.text)
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error = %v (%T), want a *LineError", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		wantRecs int
		wantWarn string // substring of the only warning; "" = no warning
	}{
		{"torn last line", runLine + "\n" + evLine + "\n" + evLine[:40], 2, "ledger.jsonl:3: torn last line ignored"},
		{"valid last line without newline", runLine + "\n" + evLine + "\n" + evLine, 2, "ledger.jsonl:3: torn last line ignored (no newline)"},
		{"unknown kind skipped", runLine + "\n" + `{"k":"gossip","seq":"not checked"}` + "\n" + evLine + "\n", 2,
			`ledger.jsonl:2: unknown record kind "gossip" skipped`},
		{"unknown field ignored", runLine + "\n" + strings.Replace(evLine, `"pod":"p0"`, `"pod":"p0","extra":{"x":[1,2,{"y":null}]}`, 1) + "\n", 2, ""},
		{"blank lines skipped", runLine + "\n\n  \n" + evLine + "\n", 2, ""},
		{"byte order mark and CRLF", "\xef\xbb\xbf" + runLine + "\r\n" + evLine + "\r\n", 2, ""},
		{"numeric ids", strings.Replace(runLine, `"id":"t1"`, `"id":"1"`, 1) + "\n" + `{"k":"ev","consumer":7,"tenant":1,"conn":3,"t":5,"seq":1,"op":"write","path":"/a","pod":0}` + "\n", 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, warns, err := readString(t, "ledger.jsonl", tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != tt.wantRecs {
				t.Errorf("records = %d, want %d", len(recs), tt.wantRecs)
			}
			switch {
			case tt.wantWarn == "" && len(warns) != 0:
				t.Errorf("unexpected warnings %v", warns)
			case tt.wantWarn != "" && (len(warns) != 1 || !strings.Contains(warns[0].String(), tt.wantWarn)):
				t.Errorf("warnings = %v, want one containing %q", warns, tt.wantWarn)
			}
		})
	}
}

func TestNumericIDsKeptAsWritten(t *testing.T) {
	recs, _, err := readString(t, "x", strings.Replace(runLine, `"id":"t1"`, `"id":"1"`, 1)+"\n"+`{"k":"ev","consumer":7,"tenant":1,"conn":3,"t":5,"seq":1,"op":"write","path":"/a","pod":0}`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	if ev := recs[1]; ev.Consumer != "7" || ev.Tenant != "1" || ev.Conn != "3" || ev.Pod != "0" {
		t.Errorf("ids = %q %q %q %q", ev.Consumer, ev.Tenant, ev.Conn, ev.Pod)
	}
}

func TestTruncatedGzipIsAWarning(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(runLine + "\n"))
	for i := 0; i < 2000; i++ {
		zw.Write([]byte(evLine + "\n"))
	}
	zw.Close()
	cut := buf.Bytes()[:buf.Len()-200]
	recs, warns, err := readString(t, "l.jsonl.gz", string(cut))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 2 || len(recs) > 2001 {
		t.Errorf("records = %d", len(recs))
	}
	found := false
	for _, w := range warns {
		found = found || strings.Contains(w.Msg, "truncated gzip stream")
	}
	if !found {
		t.Errorf("warnings = %v, want a truncated gzip warning", warns)
	}
}

func TestCorruptGzipIsALineError(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(runLine + "\n" + evLine + "\n"))
	zw.Close()
	b := buf.Bytes()
	b[len(b)-6] ^= 0xff // the CRC-32
	_, _, err := readString(t, "l.jsonl.gz", string(b))
	var le *LineError
	if !errors.As(err, &le) || !strings.Contains(le.Msg, "corrupt gzip") {
		t.Fatalf("error = %v, want a corrupt gzip LineError", err)
	}
}

func TestOverlongLineIsAnError(t *testing.T) {
	text := runLine + "\n" + `{"k":"ev","path":"` + strings.Repeat("x", MaxLineBytes+10) + "\"}\n"
	_, _, err := readString(t, "big.jsonl", text)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(le.Msg, "line longer than") {
		t.Fatalf("error = %v, want an overlong-line LineError on line 2", err)
	}
}

// TestUndeclaredTenantRefused: a single ledger's record of a tenant its run record does not declare
// is unusable input naming the line, in the run and after it; the same records of a declared tenant
// read as before.
func TestUndeclaredTenantRefused(t *testing.T) {
	ev := `{"k":"ev","consumer":"c1","tenant":"TENANT","conn":"x","t":5,"seq":1,"op":"write","path":"/a","pod":"p0"}`
	persisted := `{"k":"persisted","tenant":"TENANT","seq":1,"op":"write","path":"/a"}` + "\n" + `{"k":"end","t":9,"drained":true}`
	for _, tc := range []struct {
		name, text string
		line       int
	}{
		{"delivery", runLine + "\n" + ev + "\n", 2},
		{"persisted row", runLine + "\n" + persisted + "\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readString(t, "x", strings.ReplaceAll(tc.text, "TENANT", "other"))
			var le *LineError
			if !errors.As(err, &le) || le.Line != tc.line || le.Field != "tenant" || !strings.Contains(le.Msg, `"other" is not declared`) {
				t.Fatalf("undeclared tenant: err = %v, want line %d, field tenant", err, tc.line)
			}
			if _, _, err := readString(t, "x", strings.ReplaceAll(tc.text, "TENANT", "t1")); err != nil {
				t.Fatalf("declared tenant: %v", err)
			}
		})
	}
}
