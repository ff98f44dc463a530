package ledger

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shard writes one harness shard's ledger: run header for tenant, evs and muts at the given times,
// a persisted row, a consumer summary and (optionally) an end.
func shard(t *testing.T, dir, name, runID, tenant string, times []int64, withEnd bool, endT int64, drained bool) string {
	t.Helper()
	path := filepath.Join(dir, name)
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := []Record{{K: KindRun, V: 1, RunID: runID, Scenario: "s", Seed: 1, Budget: ptrF(1e-4), Target: "eventlogd",
		Tenants: []Tenant{{ID: tenant, Mode: "shared"}}, Pods: []string{"p-" + tenant}}}
	for i, ts := range times {
		if i%2 == 0 {
			recs = append(recs, Record{K: KindEv, Consumer: "c-" + tenant, Tenant: tenant, T: ts, Seq: int64(i), Path: fmt.Sprint(ts)})
		} else { // a mutation is ordered by its done_t
			recs = append(recs, Record{K: KindMut, MID: fmt.Sprint(ts), Tenant: tenant, T: ts - 1000, DoneT: ts, Res: ResOK})
		}
	}
	recs = append(recs, Record{K: KindPersisted, Tenant: tenant, Seq: 1},
		Record{K: KindConsumer, Consumer: "c-" + tenant, Tenant: tenant, Durable: true})
	if withEnd {
		recs = append(recs, Record{K: KindEnd, T: endT, Drained: drained})
	}
	writeAll(t, w, recs)
	return path
}

func TestMergeByTime(t *testing.T) {
	dir := t.TempDir()
	a := shard(t, dir, "a.jsonl", "r", "ta", []int64{1, 5, 9, 9, 20}, true, 100, true)
	b := shard(t, dir, "b.jsonl.gz", "r", "tb", []int64{2, 3, 9, 30}, true, 120, false)
	c := shard(t, dir, "c.jsonl", "r", "tc", []int64{0, 4, 25}, true, 110, true)
	r, err := Open(a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if got[0].K != KindRun || len(got[0].Tenants) != 3 || len(got[0].Pods) != 3 {
		t.Fatalf("header = %+v, want one run record with the 3 tenants and pods", got[0])
	}
	var keys []int64
	var kinds []string
	for _, rec := range got[1:] {
		kinds = append(kinds, rec.K)
		if !IsPostRun(rec.K) {
			keys = append(keys, orderKey(&rec))
		}
	}
	if !slices.IsSorted(keys) || len(keys) != 12 {
		t.Errorf("run-phase keys = %v, want 12 sorted", keys)
	}
	wantTail := []string{KindPersisted, KindConsumer, KindPersisted, KindConsumer, KindPersisted, KindConsumer, KindEnd}
	if tail := kinds[len(kinds)-7:]; !slices.Equal(tail, wantTail) {
		t.Errorf("post-run kinds = %v, want %v", tail, wantTail)
	}
	end := got[len(got)-1]
	if end.T != 120 || end.Drained {
		t.Errorf("merged end = t %d drained %v, want t 120 drained false (one shard did not drain)", end.T, end.Drained)
	}
	// Ties keep file order: the two t=9 records of a come before b's t=9.
	var at9 []string
	for _, rec := range got {
		if !IsPostRun(rec.K) && rec.K != KindRun && orderKey(&rec) == 9 {
			at9 = append(at9, rec.Tenant)
		}
	}
	if !slices.Equal(at9, []string{"ta", "ta", "tb"}) {
		t.Errorf("records at t=9 from %v, want [ta ta tb]", at9)
	}
}

func TestMergeWithoutEveryEndHasNoEnd(t *testing.T) {
	dir := t.TempDir()
	a := shard(t, dir, "a.jsonl", "r", "ta", []int64{1}, true, 100, true)
	b := shard(t, dir, "b.jsonl", "r", "tb", []int64{2}, false, 0, false)
	r, err := Open(a, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range readAll(t, r) {
		if rec.K == KindEnd {
			t.Fatal("merged an end record although one shard has none (the run must stay inconclusive)")
		}
	}
}

func TestMergeRejectsDifferentRuns(t *testing.T) {
	dir := t.TempDir()
	a := shard(t, dir, "a.jsonl", "r1", "ta", []int64{1}, true, 1, true)
	b := shard(t, dir, "b.jsonl", "r2", "tb", []int64{1}, true, 1, true)
	r, err := Open(a, b)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	var le *LineError
	if !errors.As(err, &le) || le.Field != "run_id" || le.File != b || le.Line != 1 {
		t.Fatalf("error = %v, want a run_id LineError on %s:1", err, b)
	}
}

func TestStdin(t *testing.T) {
	path := shard(t, t.TempDir(), "a.jsonl.gz", "r", "ta", []int64{1, 2, 3}, true, 9, true)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	r, err := Open("-")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 7 {
		t.Errorf("read %d records from stdin, want 7", len(got))
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the end: %v, want io.EOF", err)
	}
}

func TestOpenMissingFile(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "nope.jsonl"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error = %v, want not-exist", err)
	}
}

// TestMergeReportsTheBadShard: an error in the second file names that file and its line.
func TestMergeReportsTheBadShard(t *testing.T) {
	dir := t.TempDir()
	a := shard(t, dir, "a.jsonl", "r", "ta", []int64{1, 2, 3}, true, 9, true)
	b := filepath.Join(dir, "b.jsonl")
	text := strings.Replace(runLine, `"run_id":"r1"`, `"run_id":"r"`, 1) + "\n" + evLine + "\n" +
		strings.Replace(evLine, `"seq":1`, `"seq":true`, 1) + "\n"
	if err := os.WriteFile(b, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(a, b)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err = r.Next()
		if err != nil {
			break
		}
	}
	var le *LineError
	if !errors.As(err, &le) || le.File != b || le.Line != 3 || le.Field != "seq" {
		t.Fatalf("error = %v, want %s:3 field seq", err, b)
	}
}
