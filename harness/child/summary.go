package child

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Summary is what a child run's summary.json says, read as generic JSON: the commands made of runs
// need its verdict, failed checks and a few numbers, not the verifier's types.
type Summary struct {
	Verdict string
	Failed  []string
	doc     map[string]any
}

// ReadSummary reads dir/summary.json. A missing file means the run did not complete; a summary
// without a verdict is an error too.
func ReadSummary(dir string) (*Summary, error) {
	path := filepath.Join(dir, "summary.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no summary (the run did not complete): %w", err)
	}
	s := &Summary{}
	if err := json.Unmarshal(b, &s.doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Verdict, _ = s.doc["verdict"].(string)
	if fc, ok := s.doc["failed_checks"].([]any); ok {
		for _, c := range fc {
			if f, ok := c.(string); ok {
				s.Failed = append(s.Failed, f)
			}
		}
	}
	if s.Verdict == "" {
		return s, fmt.Errorf("%s: %w", path, errors.New("summary has no verdict"))
	}
	return s, nil
}

// Number reads the number at a dotted summary path (e.g. "latency_ms.p99"); ok is false when the
// path is absent or not a number. Map keys such as metric names contain no dots.
func (s *Summary) Number(path string) (float64, bool) {
	var cur any = s.doc
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false
		}
		if cur, ok = m[part]; !ok {
			return 0, false
		}
	}
	v, ok := cur.(float64)
	return v, ok
}

// Numbers returns the non-zero numbers of the map at path (e.g. "lost_by_reason"), nil when absent.
func (s *Summary) Numbers(path string) map[string]float64 {
	m, ok := s.doc[path].(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]float64{}
	for k, v := range m {
		if f, ok := v.(float64); ok && f != 0 {
			out[k] = f
		}
	}
	return out
}
