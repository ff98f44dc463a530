package report

import (
	"encoding/json"
	"testing"
)

// FuzzOrderedObject: the witness decoder never panics, and on a JSON object it finds the keys
// encoding/json finds.
func FuzzOrderedObject(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":"x","c_ms":1.25}`, `{}`, `[1,2]`, `"s"`, `{"a":{"b":[1]},"a":2}`, `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, vals, err := orderedObject(b)
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil || m == nil {
			return
		}
		if err != nil {
			t.Fatalf("valid object %q: %v", b, err)
		}
		for k := range m {
			if _, ok := vals[k]; !ok {
				t.Errorf("key %q of %q not found (keys %v)", k, b, keys)
			}
		}
	})
}
