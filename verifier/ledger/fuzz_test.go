package ledger

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
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
			// Whatever was read must write back without error (a decoded record is encodable).
			if _, err := AppendRecord(nil, rec); err != nil {
				t.Fatalf("record %d not writable: %v", i, err)
			}
		}
	})
}
