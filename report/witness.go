package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seqgate/seqgate/verifier"
)

// witnessTable is one check's witnesses as a table; each row may link to its run time.
type witnessTable struct {
	Check   string
	Plot    string // the id of the plot its links jump to
	Failed  bool
	Count   int64 // how many instances the summary counts (0 when it has no such number)
	Columns []string
	Rows    []witnessRow
}

type witnessRow struct {
	Cells []string
	T     float64 // seconds
	HasT  bool
	TKey  string
}

// timeKeys are the witness fields that place it on the timeline, best first.
var timeKeys = []string{"frame_ms", "ack_ms", "t_ms", "reset_ms", "from_ms", "first_rise_from_ms",
	"last_seq_too_old_ms", "delivered_ms", "done_ms", "sent_ms", "intended_ms"}

// rawWitnesses returns the summary's witnesses as JSON objects in their field order.
func rawWitnesses(s *verifier.Summary) (map[string][]json.RawMessage, error) {
	out := make(map[string][]json.RawMessage, len(s.Witnesses))
	for check, ws := range s.Witnesses {
		for _, w := range ws {
			b, err := json.Marshal(w)
			if err != nil {
				return nil, fmt.Errorf("witness of %s: %w", check, err)
			}
			out[check] = append(out[check], b)
		}
	}
	return out, nil
}

// witnessTables builds one table per check that has witnesses: failed checks first, then by name.
func witnessTables(s *verifier.Summary, raw map[string][]json.RawMessage) ([]witnessTable, error) {
	failed := map[string]bool{}
	for _, c := range s.FailedChecks {
		failed[c] = true
	}
	// A failed loss budget or silent check is witnessed by the lost list.
	if failed[verifier.CheckLossBudget] {
		failed["lost"] = true
	}
	checks := make([]string, 0, len(raw))
	for c := range raw {
		checks = append(checks, c)
	}
	slices.SortFunc(checks, func(a, b string) int {
		if failed[a] != failed[b] {
			if failed[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var out []witnessTable
	for _, check := range checks {
		wt := witnessTable{Check: check, Plot: plotOf(check), Failed: failed[check], Count: countOf(s, check)}
		colIx := map[string]int{}
		var rows []map[string]string
		for _, r := range raw[check] {
			keys, vals, err := orderedObject(r)
			if err != nil {
				return nil, fmt.Errorf("witness of %s: %w", check, err)
			}
			row := map[string]string{}
			for _, k := range keys {
				if _, ok := colIx[k]; !ok {
					colIx[k] = len(wt.Columns)
					wt.Columns = append(wt.Columns, k)
				}
				row[k] = vals[k]
			}
			rows = append(rows, row)
		}
		for _, row := range rows {
			wr := witnessRow{}
			for _, c := range wt.Columns {
				wr.Cells = append(wr.Cells, row[c])
			}
			for _, k := range timeKeys {
				if v, ok := row[k]; ok {
					if f, err := strconv.ParseFloat(v, 64); err == nil {
						wr.T, wr.HasT, wr.TKey = f/1e3, true, k
						break
					}
				}
			}
			wt.Rows = append(wt.Rows, wr)
		}
		out = append(out, wt)
	}
	return out, nil
}

// countOf is the summary's total for a check's witnesses, so a table can say "first 20 of 31"; 0
// for a list whose witnesses are not one per instance of a number (the busiest reconnect second).
func countOf(s *verifier.Summary, check string) int64 {
	n, _ := verifier.WitnessCount(s, verifier.WitnessKey(check))
	return n
}

// orderedObject decodes one JSON object keeping its key order; values are rendered as text (numbers
// rounded for reading, nested values as compact JSON).
func orderedObject(b []byte) ([]string, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		// Not an object: one column holding the value.
		return []string{"value"}, map[string]string{"value": string(b)}, nil
	}
	var keys []string
	vals := map[string]string{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		vals[k] = cellText(k, v)
	}
	return keys, vals, nil
}

func cellText(key string, v json.RawMessage) string {
	s := string(bytes.TrimSpace(v))
	if len(s) > 0 && s[0] == '"' {
		var str string
		if json.Unmarshal(v, &str) == nil {
			return str
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && strings.HasSuffix(key, "_ms") {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return s
}

// plotOf is the plot a check's witnesses are best seen on.
func plotOf(check string) string {
	switch verifier.WitnessKey(check) {
	case verifier.WitnessReconnects, verifier.WitnessSpurious:
		return "plot-resets"
	case verifier.WitnessDuplicates, verifier.WitnessUnexpected, verifier.WitnessLeaks, verifier.WitnessReorder, verifier.WitnessRecovered:
		return "plot-delivered"
	case verifier.WitnessColdWakeups, verifier.WitnessDrops, verifier.WitnessDropsByTenant:
		return "plot-mutations"
	case verifier.WitnessResetCovered, verifier.WitnessResyncMissed, verifier.WitnessResyncUnproven, verifier.WitnessStructural:
		return "plot-resets"
	}
	return "plot-anomalies"
}
