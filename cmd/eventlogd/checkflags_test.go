package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/reference-impl/defect"
)

func TestCheckFlags(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []flagProblem
	}{
		{name: "clean flags and a defect", args: []string{"--retry-tenant-cap=20", "--admin", "--defect=late-commit-skip", "--sse-heartbeat=1s", "--late-commit-guard=lock"}, want: []flagProblem{}},
		{name: "misspelt flag", args: []string{"--retry-tenat-cap=20"}, want: []flagProblem{{Flag: "retry-tenat-cap", Error: "unknown flag"}}},
		{name: "bad value", args: []string{"--retry-tenant-cap=many"}, want: []flagProblem{{Flag: "retry-tenant-cap", Error: `value "many": parse error`}}},
		{name: "bad guard", args: []string{"--late-commit-guard=none"}, want: []flagProblem{{Flag: "late-commit-guard", Error: `value "none": "none" is not a guard (allowed: horizon, lock)`}}},
		{name: "misspelt defect", args: []string{"--defect=late-commit-skp"}, want: []flagProblem{{Flag: "defect", Error: `"late-commit-skp" is not a seeded defect of this build`}}},
		{name: "value missing", args: []string{"--sse-heartbeat"}, want: []flagProblem{{Flag: "sse-heartbeat", Error: "needs a value (--sse-heartbeat=VALUE)"}}},
		{name: "not a flag", args: []string{"retry"}, want: []flagProblem{{Flag: "retry", Error: "not a flag: want --name=value"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := runCheckFlags(c.args, &out); err != nil {
				t.Fatal(err)
			}
			var got flagCheck
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Problems, c.want) {
				t.Errorf("problems %+v, want %+v", got.Problems, c.want)
			}
			if !slices.Contains(got.Flags, "retry-tenant-cap") || len(got.Defects) != len(defect.All) || got.Defects[0] != string(defect.All[0]) {
				t.Errorf("flags %v defects %v: want every flag and every defect of reference-impl/defect", got.Flags, got.Defects)
			}
		})
	}
}

// FuzzCheckFlags: any argument list gets a JSON answer listing every flag, with each problem naming
// the flag it is about; nothing panics and nothing starts.
func FuzzCheckFlags(f *testing.F) {
	for _, s := range []string{"--retry-tenant-cap=20", "--defect=late-commit-skp", "--admin", "-sse-heartbeat", "x", "--=", "--late-commit-guard=lock\x00--defect=a,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		var out bytes.Buffer
		if err := runCheckFlags(strings.Split(joined, "\x00"), &out); err != nil {
			t.Fatal(err)
		}
		var got flagCheck
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Flags) == 0 {
			t.Fatalf("answer %q: %v", out.String(), err)
		}
		for _, p := range got.Problems {
			if p.Flag == "" && p.Error != "not a flag: want --name=value" || p.Error == "" {
				t.Errorf("problem %+v names no flag or no reason", p)
			}
		}
	})
}
