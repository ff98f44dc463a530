package ledger

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func ptrF(f float64) *float64 { return &f }
func ptrI(i int) *int         { return &i }

// sampleRecords has one record of every kind, with required zero values and optional fields set.
func sampleRecords() []Record {
	return []Record{
		{K: KindRun, V: 1, RunID: "r1", Scenario: "smoke", Seed: 7, StartUnixNs: 1700000000000000000, Budget: ptrF(1e-4),
			Tenants: []Tenant{{ID: "t1", Mode: "dedicated", Name: "tenant_1"}, {ID: "t2", Mode: "shared", Cold: true}},
			Pods:    []string{"pod-0", "pod-1"}, Target: "eventlogd", CrashesPerPodYear: ptrF(12), PodsInFleet: ptrI(20),
			Thresholds: map[string][]string{"latency_ms.p99": {"< 500"}, "duplicates": {"== 0"}}, Audit: true, Profile: "drive9-v2.5", Shard: &Shard{K: 1, N: 1},
			Metrics: []string{"drive9_sse_event_retry_flush_total"},
			Provenance: &Provenance{Seqgate: Build{Module: "github.com/seqgate/seqgate", Version: "(devel)", Revision: "abc", Modified: true, Go: "go1.26"},
				Pods:     &Binary{Path: "/bin/eventlogd", SHA256: "00ff", Version: "eventlogd x", Build: &Build{Module: "m", Go: "go1.26"}},
				PodFlags: []string{"--retry-tenant-cap=5"}, Defects: []string{"late-commit-skip"}, Sets: []string{"seed=3"}, Args: []string{"run", "s.yaml"},
				ScenarioFile: "s.yaml", ScenarioSHA256: "beef", Machine: Machine{Cores: 2, OS: "linux", Arch: "amd64", LoadAvg: []float64{1.5, 0.25, 0}}}},
		{K: KindPod, Pod: "pod-0", Phase: "start", T: 0, PID: 42},
		{K: KindConn, Consumer: "c1", Tenant: "t1", Conn: "c1-1", T: 5, Phase: "open", Pod: "pod-0", Since: 0},
		{K: KindReset, Consumer: "c1", Tenant: "t1", Conn: "c1-1", T: 6, Seq: 0, Reason: "initial_sync"},
		{K: KindMut, MID: "m1", Tenant: "t1", Op: "write", Path: "/p/r1/t1/m1", IntendedT: 10, T: 11, DoneT: 20, Res: ResOK, Status: 200, Pod: "pod-0"},
		{K: KindMut, MID: "m2", Tenant: "t1", Op: "rename", Path: "/p/r1/t1/m2", Src: "/p/r1/t1/m1", IntendedT: 12, T: 13, DoneT: 0, Res: ResTimeout, Pod: "pod-1"},
		{K: KindEv, Consumer: "c1", Tenant: "t1", Conn: "c1-1", T: 25, Seq: 1, Op: "write", Path: "/p/r1/t1/m1 \"quoted\"\n\u00e9\u2028", Pod: "pod-0"},
		{K: KindMut, MID: "m3.0", Tenant: "t1", Op: "write", Path: "/p/r1/t1/m3.0", IntendedT: 14, T: 15, DoneT: 21, Res: ResOK, Status: 200, Pod: "pod-0", Batch: "r1.m3"},
		{K: KindEv, Consumer: "c1", Tenant: "t1", Conn: "c1-1", T: 26, Seq: 2, Op: "write", Path: "/p/r1/t1/m3.0", Pod: "pod-0", Batch: "r1.m3"},
		{K: KindConn, Consumer: "c2", Tenant: "t1", Conn: "c2.1", T: 27, Phase: "open", Pod: "pod-1", Since: 2, Kind: "pull"},
		{K: KindFault, ID: "f1", Kind: "tenant_db_stall", Target: "t1", Phase: "start", T: 30, Params: map[string]any{"for": "2s"}, InjectedBy: 1},
		{K: KindMetric, Pod: "pod-0", T: 40, Name: "drive9_sse_event_retry_dropped_total", Labels: map[string]string{"tenant_id": "t1", "reason": "tenant_cap"}, Value: 0, MetricType: "counter"},
		{K: KindProxy, Name: "tenant_t2", Tenant: "t2", T: 40},
		{K: KindPod, Pod: "pod-1", Phase: "crash", T: 50, Signal: "SIGKILL", Code: ptrI(0)},
		{K: KindDrop, Tenant: "t2", IntendedT: 55, Block: "1"},
		{K: KindDrop, Tenant: "t2", IntendedT: 56},
		{K: KindPersisted, Tenant: "t1", Seq: 1, Op: "write", Path: "/p/r1/t1/m1", CreatedUnixNs: 1700000000000000011},
		{K: KindAudit, T: 65, OK: false, AuditTenants: 2, Rows: 0, Error: "dial tcp: connection refused"},
		{K: KindAudit, T: 66, OK: true, AuditTenants: 2, Rows: 1},
		{K: KindConsumer, Consumer: "c1", Tenant: "t1", FromT: 0, ToT: 60, FirstSince: 0, FinalCursor: 1, Durable: false},
		{K: KindEnd, T: 70, Drained: false, LoadAvg: []float64{2, 1, 0.5}, LoadT: 7},
	}
}

func writeAll(t *testing.T, w *Writer, recs []Record) {
	t.Helper()
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, r *Reader) []Record {
	t.Helper()
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		out = append(out, *rec)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"ledger.jsonl", "ledger.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			w, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			want := sampleRecords()
			writeAll(t, w, want)
			raw, _ := os.ReadFile(path)
			if isGz := bytes.HasPrefix(raw, []byte{0x1f, 0x8b}); isGz != strings.HasSuffix(name, ".gz") {
				t.Fatalf("gzip = %v for %s", isGz, name)
			}
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, r)
			if len(r.Warnings()) != 0 {
				t.Errorf("warnings: %v", r.Warnings())
			}
			if len(got) != len(want) {
				t.Fatalf("got %d records, want %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestRequiredZeroValuesWritten: the writer emits each kind's required fields even when zero.
func TestRequiredZeroValuesWritten(t *testing.T) {
	tests := []struct {
		rec  Record
		want string
	}{
		{Record{K: KindEnd}, `{"k":"end","t":0,"drained":false}` + "\n"},
		{Record{K: KindEv}, `{"k":"ev","consumer":"","tenant":"","conn":"","t":0,"seq":0,"op":"","path":"","pod":""}` + "\n"},
		{Record{K: KindConsumer}, `{"k":"consumer","consumer":"","tenant":"","from_t":0,"to_t":0,"first_since":0,"final_cursor":0,"durable":false}` + "\n"},
		{Record{K: KindMetric, Labels: map[string]string{"b": "2", "a": "1"}, Value: 0.5},
			`{"k":"metric","pod":"","t":0,"name":"","labels":{"a":"1","b":"2"},"value":0.5}` + "\n"},
		{Record{K: KindEnd, T: 3, Seq: 9}, `{"k":"end","t":3,"drained":false,"seq":9}` + "\n"},
	}
	for _, tt := range tests {
		b, err := AppendRecord(nil, &tt.rec)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("got  %s\nwant %s", b, tt.want)
		}
	}
	if _, err := AppendRecord(nil, &Record{K: "bogus"}); err == nil {
		t.Error("unknown kind written without error")
	}
}

func TestGzipDetectedByMagic(t *testing.T) {
	var plain bytes.Buffer
	w := NewWriter(&plain)
	writeAll(t, w, sampleRecords()[:3])
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain.Bytes())
	zw.Close()
	path := filepath.Join(t.TempDir(), "noext.jsonl")
	os.WriteFile(path, gz.Bytes(), 0o644)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 3 {
		t.Fatalf("got %d records from gzip without .gz, want 3", len(got))
	}
}

// TestConcurrentWrites: lines from many goroutines never interleave.
func TestConcurrentWrites(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	run := sampleRecords()[0]
	if err := w.Write(&run); err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 500
	done := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		go func() {
			for i := 0; i < each; i++ {
				rec := Record{K: KindEv, Consumer: "c", Tenant: run.Tenants[0].ID, Conn: "x", T: int64(i), Seq: int64(i), Op: "write",
					Path: strings.Repeat("p", g*50+i%7), Pod: "p0"}
				if err := w.Write(&rec); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < goroutines; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Records() != goroutines*each+1 {
		t.Errorf("Records() = %d", w.Records())
	}
	r, _ := NewReader("buf", &buf)
	if got := readAll(t, r); len(got) != goroutines*each+1 {
		t.Errorf("read back %d records, want %d", len(got), goroutines*each+1)
	}
	if err := w.Write(&run); err == nil {
		t.Error("write after Close succeeded")
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

// TestWriterErrorsStick: a failed write is returned by every later call, and a bad record (NaN,
// unknown kind) fails alone without poisoning the writer.
func TestWriterErrorsStick(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write(&Record{K: KindMetric, Value: math.NaN()}); err == nil || !strings.Contains(err.Error(), `"value"`) {
		t.Errorf("NaN value: %v", err)
	}
	if err := w.Write(&Record{K: KindEnd, T: 1}); err != nil {
		t.Errorf("writer unusable after a bad record: %v", err)
	}
	if err := w.Close(); err != nil || buf.String() != `{"k":"end","t":1,"drained":false}`+"\n" {
		t.Errorf("close %v, wrote %q", err, buf.String())
	}

	fw := NewWriter(&failingWriter{})
	rec := Record{K: KindEv, Path: strings.Repeat("p", writeBufSize)} // larger than the buffer: written through
	if err := fw.Write(&rec); err == nil {
		t.Fatal("write to a failing writer succeeded")
	}
	if err := fw.Write(&Record{K: KindEnd}); err == nil || err.Error() != "disk full" {
		t.Errorf("later write: %v, want the sticky disk full", err)
	}
	if err := fw.Close(); err == nil {
		t.Error("Close after a failed write succeeded")
	}
	if _, err := Create(filepath.Join(t.TempDir(), "no", "such", "dir.jsonl")); err == nil {
		t.Error("Create in a missing directory succeeded")
	}
}

// TestProvenanceWrongShape: a provenance or load_avg of the wrong type is an error naming the field.
func TestProvenanceWrongShape(t *testing.T) {
	for field, line := range map[string]string{
		"provenance": `{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1,"tenants":[],"pods":[],"target":"eventlogd","provenance":"v1.2"}`,
		"load_avg":   `{"k":"end","t":1,"drained":true,"load_avg":{"a":1}}`,
	} {
		text := line + "\n"
		if field == "load_avg" {
			text = `{"k":"run","v":1,"run_id":"r","scenario":"s","seed":1,"start_unix_ns":1,"tenants":[],"pods":[],"target":"eventlogd"}` + "\n" + text
		}
		r, err := NewReader("x.jsonl", strings.NewReader(text))
		for err == nil {
			_, err = r.Next()
		}
		var le *LineError
		if !errors.As(err, &le) || le.Field != field {
			t.Errorf("%s: error %v, want a line error naming the field", field, err)
		}
	}
}
