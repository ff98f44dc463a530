package ledger

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"testing"
	"time"
)

// benchLedger builds a ledger shaped like a real run: mostly ev records, a mutation per 4 evs, a
// metric now and then.
func benchLedger(b *testing.B, n int, gz bool) []byte {
	b.Helper()
	var buf bytes.Buffer
	var w *Writer
	if gz {
		w = NewGzipWriter(&buf)
	} else {
		w = NewWriter(&buf)
	}
	run := sampleRecords()[0]
	run.Tenants = nil
	for i := range 8 {
		run.Tenants = append(run.Tenants, Tenant{ID: fmt.Sprintf("tenant-%d", i), Mode: "dedicated"})
	}
	w.Write(&run)
	for i := 0; i < n; i++ {
		var rec Record
		switch {
		case i%50 == 49:
			rec = Record{K: KindMetric, Pod: "pod-1", T: int64(i) * 1000, Name: "drive9_sse_event_retry_dropped_total",
				Labels: map[string]string{"tenant_id": "tenant-3", "reason": "tenant_cap"}, Value: float64(i % 10)}
		case i%5 == 0:
			rec = Record{K: KindMut, MID: fmt.Sprintf("m%d", i), Tenant: fmt.Sprintf("tenant-%d", i%8), Op: "write",
				Path: fmt.Sprintf("/sg/run-1/tenant-%d/m%d", i%8, i), IntendedT: int64(i) * 1000, T: int64(i)*1000 + 50,
				DoneT: int64(i)*1000 + 900, Res: ResOK, Status: 200, Pod: "pod-0"}
		default:
			rec = Record{K: KindEv, Consumer: fmt.Sprintf("tenant-%d/c%d", i%8, i%3), Tenant: fmt.Sprintf("tenant-%d", i%8),
				Conn: fmt.Sprintf("tenant-%d/c%d#1", i%8, i%3), T: int64(i)*1000 + 1500, Seq: int64(i), Op: "write",
				Path: fmt.Sprintf("/sg/run-1/tenant-%d/m%d", i%8, i-i%5), Pod: "pod-1"}
		}
		if err := w.Write(&rec); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	return buf.Bytes()
}

const benchRecords = 200_000

// BenchmarkRead decodes a ledger with the Reader: compare with BenchmarkReadFloor (same bytes, lines
// only) for the cost of decoding; the ratio is what matters, not the absolute figure.
func BenchmarkRead(b *testing.B) {
	for _, gz := range []bool{false, true} {
		data := benchLedger(b, benchRecords, gz)
		plainSize := len(benchLedger(b, benchRecords, false))
		b.Run(fmt.Sprintf("gzip=%v", gz), func(b *testing.B) {
			b.SetBytes(int64(plainSize))
			b.ReportAllocs()
			for b.Loop() {
				r, err := NewReader("bench", bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != benchRecords+1 {
					b.Fatalf("read %d records", n)
				}
			}
			b.ReportMetric(float64(benchRecords+1)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkReadFloor reads the same bytes (gunzip included) line by line without decoding JSON: the
// floor no decoder can beat.
func BenchmarkReadFloor(b *testing.B) {
	for _, gz := range []bool{false, true} {
		data := benchLedger(b, benchRecords, gz)
		plainSize := len(benchLedger(b, benchRecords, false))
		b.Run(fmt.Sprintf("gzip=%v", gz), func(b *testing.B) {
			b.SetBytes(int64(plainSize))
			b.ReportAllocs()
			for b.Loop() {
				var src io.Reader = bytes.NewReader(data)
				if gz {
					zr, err := gzip.NewReader(src)
					if err != nil {
						b.Fatal(err)
					}
					src = zr
				}
				br := bufio.NewReaderSize(src, readBufSize)
				n := 0
				for {
					_, err := br.ReadSlice('\n')
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != benchRecords+1 {
					b.Fatalf("read %d lines", n)
				}
			}
			b.ReportMetric(float64(benchRecords+1)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkReadVsFloor reads the same ledger with the Reader and with the floor (lines only, gunzip
// included) alternately in one run, and reports the time ratio reader/floor ("x_floor"): a ratio
// measured side by side survives a noisy machine better than two absolute figures.
func BenchmarkReadVsFloor(b *testing.B) {
	for _, gz := range []bool{false, true} {
		data := benchLedger(b, benchRecords, gz)
		b.Run(fmt.Sprintf("gzip=%v", gz), func(b *testing.B) {
			var read, floor time.Duration
			for b.Loop() {
				t0 := time.Now()
				if n := readRecords(b, data); n != benchRecords+1 {
					b.Fatalf("read %d records", n)
				}
				t1 := time.Now()
				if n := readLines(b, data, gz); n != benchRecords+1 {
					b.Fatalf("read %d lines", n)
				}
				read, floor = read+t1.Sub(t0), floor+time.Since(t1)
			}
			b.ReportMetric(read.Seconds()/floor.Seconds(), "x_floor")
			b.ReportMetric(float64(benchRecords+1)*float64(b.N)/read.Seconds(), "records/s")
			b.ReportMetric(float64(benchRecords+1)*float64(b.N)/floor.Seconds(), "floor_records/s")
		})
	}
}

func readRecords(b *testing.B, data []byte) int {
	r, err := NewReader("bench", bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

func readLines(b *testing.B, data []byte, gz bool) int {
	var src io.Reader = bytes.NewReader(data)
	if gz {
		zr, err := gzip.NewReader(src)
		if err != nil {
			b.Fatal(err)
		}
		src = zr
	}
	br := bufio.NewReaderSize(src, readBufSize)
	n := 0
	for {
		_, err := br.ReadSlice('\n')
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

// BenchmarkWrite encodes ev records (the bulk of a ledger).
func BenchmarkWrite(b *testing.B) {
	w := NewWriter(io.Discard)
	rec := Record{K: KindEv, Consumer: "tenant-1/c1", Tenant: "tenant-1", Conn: "tenant-1/c1#1", T: 123456789,
		Seq: 4242, Op: "write", Path: "/sg/run-1/tenant-1/m4242", Pod: "pod-1"}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(&rec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkDecodeEv decodes one typical ev line (no I/O): the decoder's own cost per record.
func BenchmarkDecodeEv(b *testing.B) {
	line := []byte(`{"k":"ev","consumer":"tenant-3/c1","tenant":"tenant-3","conn":"tenant-3/c1#1","t":123456789012,"seq":424242,"op":"write","path":"/sg/run-1/tenant-3/m424242","pod":"pod-1"}`)
	d := decoder{in: newInterner(1 << 16)}
	var rec Record
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		rec = Record{}
		if err := d.decode(line, &rec); err != nil || len(d.ferrs) != 0 {
			b.Fatal(err, d.ferrs)
		}
	}
}
