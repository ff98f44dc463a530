package verifier

import (
	"encoding/json"
	"strings"
)

// measure reads the value at path from the summary as the JSON shows it (a missing map key is 0).
func measure(doc map[string]any, path string) float64 {
	var cur any = doc
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0
		}
		cur = m[part]
	}
	v, _ := cur.(float64)
	return v
}

// summaryDoc is the summary as generic JSON, the form threshold paths address.
func summaryDoc(s *Summary) map[string]any {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Summary only holds marshalable values
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(err)
	}
	return doc
}
