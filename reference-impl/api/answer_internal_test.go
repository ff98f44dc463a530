package api

import (
	"math"
	"net/http/httptest"
	"testing"
)

// TestWriteRevisionMatchesWriteJSON: the write answer appended by hand is byte for byte what
// writeJSON writes for the same map, headers included. Negative control: another revision differs.
func TestWriteRevisionMatchesWriteJSON(t *testing.T) {
	for _, rev := range []int64{0, 1, 42, -1, math.MaxInt64, math.MinInt64} {
		got, want := httptest.NewRecorder(), httptest.NewRecorder()
		writeRevision(got, rev)
		writeJSON(want, 200, map[string]any{"revision": rev, "status": "ok"})
		if got.Code != want.Code || got.Body.String() != want.Body.String() || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Fatalf("rev %d: %d %q %q, want %d %q %q", rev, got.Code, got.Body, got.Header(), want.Code, want.Body, want.Header())
		}
		other := httptest.NewRecorder()
		writeRevision(other, rev^1)
		if other.Body.String() == want.Body.String() {
			t.Fatalf("control: rev %d answers as rev %d", rev^1, rev)
		}
	}
}
