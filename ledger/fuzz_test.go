package ledger

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

// FuzzReader: arbitrary bytes never panic the Reader, and every error is a *LineError (the input is
// in memory, so there is no OS error to wrap).
func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, rec := range sampleRecords() {
		w.Write(&rec)
	}
	w.Close()
	f.Add(buf.Bytes())
	f.Add([]byte(runLine + "\n" + evLine + "\n" + evLine[:20]))
	f.Add([]byte(runNoTenants + "\n" + tenantLine + "\n" + listedLine + "\n" + resyncLine + "\n" + tenantLine + "\n"))
	f.Add([]byte(runLine + "\n" + tenantLine + "\n" + resyncLine[:40]))
	f.Add([]byte(`{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1,"tenants":[],"pods":[],"target":"eventlogd","provenance":{"seqgate":{},"pods":null,"defects":[],"machine":{"load_avg":[]}}}` + "\n" + `{"k":"end","t":1,"drained":true,"load_avg":[1,2]}` + "\n"))
	f.Add([]byte(`{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1,"tenants":[],"pods":[],"target":"eventlogd","provenance":{"pods":{"build":{"go":"x"}},"args":["a"]}}` + "\n" + `{"k":"end","t":1,"drained":true,"load_avg":"x"}` + "\n"))
	f.Add([]byte(runLine + "\n" + `{"k":"ev","seq":"x\u00e9\ud83d\ude00","t":1e3,"labels":{"a":"b"}}` + "\n"))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(buf.Bytes())
	zw.Close()
	f.Add(gz.Bytes())
	f.Add(gz.Bytes()[:gz.Len()/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader("fuzz", bytes.NewReader(data))
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("NewReader error %T: %v", err, err)
			}
			return
		}
		for i := 0; ; i++ {
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var le *LineError
				if !errors.As(err, &le) {
					t.Fatalf("error %T: %v", err, err)
				}
				return
			}
			// Whatever was read writes back, and reads back equal (the writer and the reader agree).
			line, err := AppendRecord(nil, rec)
			if err != nil {
				t.Fatalf("record %d not writable: %v", i, err)
			}
			var again Record
			d := decoder{in: newInterner(16)}
			if err := d.decode(line[:len(line)-1], &again); err != nil || len(d.ferrs) != 0 {
				t.Fatalf("record %d: re-reading %s: %v %v", i, line, err, d.ferrs)
			}
			if !reflect.DeepEqual(*rec, again) {
				t.Fatalf("record %d changed in a round trip:\n read %+v\nagain %+v\n line %s", i, *rec, again, line)
			}
		}
	})
}

// FuzzScalars: the decoder's fast paths agree with the general ones. int's one-pass parse gives what
// intGeneral gives (value, error or not, and where the scan stops), and rawString, which scans eight
// bytes at a time, decodes a string as encoding/json does (and fails where it fails).
func FuzzScalars(f *testing.F) {
	for _, s := range []string{"0", "-0", "12", "-12", "007", "1.5", "1e3", "123456789012345678", "1234567890123456789",
		"-9223372036854775808", "9223372036854775808", "-", "1,", "12}", `"abc"`, `"a\"b"`, `"\u00e9\ud83d\ude00"`,
		`"exactly8"`, `"0123456789abcdef\n"`, "\"caf\xc3\xa9\"", "\"bad \xff byte\"", `"/sg/synth-1/t5/m1679580"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, slow := decoder{b: b, in: newInterner(16)}, decoder{b: b, in: newInterner(16)}
		v1, err1 := fast.int()
		v2, err2 := slow.intGeneral()
		if (err1 == nil) != (err2 == nil) || v1 != v2 || (err1 == nil && fast.i != slow.i) {
			t.Fatalf("int(%q) = %d, %v (stops at %d); intGeneral = %d, %v (stops at %d)", b, v1, err1, fast.i, v2, err2, slow.i)
		}
		if len(b) == 0 || b[0] != '"' {
			return
		}
		d := decoder{b: b, in: newInterner(16)}
		got, err := d.rawString()
		end := d.i
		var want string
		jerr := json.Unmarshal(b[:max(end, 1)], &want)
		if err != nil {
			// rawString failed: encoding/json must refuse the same prefix... unless the string was
			// simply cut (no closing quote), where both fail.
			if json.Unmarshal(b, &want) == nil && json.Valid(b) {
				t.Fatalf("rawString(%q) failed (%v), encoding/json read %q", b, err, want)
			}
			return
		}
		if jerr != nil || want != string(got) {
			t.Fatalf("rawString(%q) = %q (to %d), encoding/json: %q, %v", b, got, end, want, jerr)
		}
	})
}
