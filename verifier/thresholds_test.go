package verifier

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/threshold"
)

// TestValidPathsFollowSummary: every valid path resolves in a real summary's JSON, and the list holds
// the spec's headline numbers.
func TestValidPathsFollowSummary(t *testing.T) {
	doc := summaryDoc(verifyText(t, edit{}.build(), Options{}))
	for _, p := range threshold.Paths() {
		if strings.HasSuffix(p, ".<key>") {
			continue
		}
		cur := any(doc)
		for _, part := range strings.Split(p, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("path %s: %v is not an object", p, cur)
			}
			if cur, ok = m[part]; !ok {
				t.Fatalf("path %s: no field %q in the summary JSON", p, part)
			}
		}
		if _, ok := cur.(float64); !ok {
			t.Errorf("path %s is not a number: %v", p, cur)
		}
	}
	for _, p := range []string{"acked", "lost", "skipped", "latency_ms.p99", "latency_ms.p999", "reorder.max_ms", "reconnects.max_per_s", "projection.fraction", "loss_upper_95"} {
		if !slices.Contains(threshold.Paths(), p) {
			t.Errorf("ValidPaths lacks %s", p)
		}
	}
}

// TestThresholdDocListsEveryPath keeps docs/thresholds.md in step with the Summary type.
func TestThresholdDocListsEveryPath(t *testing.T) {
	b, err := os.ReadFile("../docs/thresholds.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range threshold.Paths() {
		if !strings.Contains(string(b), p) {
			t.Errorf("docs/thresholds.md does not list %s", p)
		}
	}
}

// TestPathsMatchSummary: the contract's list of threshold paths is exactly the numeric leaves of the
// Summary type, so a field added to the summary is addressable and no listed path is stale.
func TestPathsMatchSummary(t *testing.T) {
	var derived []string
	walkPaths(reflect.TypeFor[Summary](), "", &derived)
	slices.Sort(derived)
	if got := threshold.Paths(); !slices.Equal(got, derived) {
		t.Errorf("threshold.Paths() = %v\nSummary's numeric leaves = %v", got, derived)
	}
}

// TestStatAndWindowPathsMatchTypes: per-tenant/per-consumer fields are exactly Stats' numeric
// leaves, windowed fields exactly WindowStats'.
func TestStatAndWindowPathsMatchTypes(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		list []string
	}{{reflect.TypeFor[Stats](), threshold.StatPaths()}, {reflect.TypeFor[WindowStats](), threshold.WindowPaths()}} {
		var derived []string
		walkPaths(c.typ, "", &derived)
		slices.Sort(derived)
		if !slices.Equal(c.list, derived) {
			t.Errorf("%s: threshold lists %v\nthe type's numeric leaves are %v", c.typ, c.list, derived)
		}
	}
}

// notPaths are summary numbers that are not threshold paths: how many tenants and consumers were
// idle (no per_tenant or per_consumer entry) says what the summary holds, not how the run went.
var notPaths = []string{"per_tenant_idle", "per_consumer_idle"}

func walkPaths(t reflect.Type, prefix string, out *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			walkPaths(f.Type, prefix, out)
			continue
		}
		if name == "" || name == "-" || slices.Contains(notPaths, prefix+name) {
			continue
		}
		switch ft := f.Type; ft.Kind() {
		case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint64, reflect.Float64:
			*out = append(*out, prefix+name)
		case reflect.Struct:
			if name != "run" {
				walkPaths(ft, prefix+name+".", out)
			}
		case reflect.Map:
			if k := ft.Elem().Kind(); k == reflect.Int64 || k == reflect.Float64 {
				*out = append(*out, prefix+name+".<key>")
			}
		}
	}
}
