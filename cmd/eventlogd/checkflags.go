package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/seqgate/seqgate/reference-impl/defect"
)

// flagCheck is the answer of `eventlogd check-flags`: every flag this binary accepts, every seeded
// defect it knows (from reference-impl/defect), and what is wrong with the flags it was asked about.
// A harness checks a scenario's pod flags with it before it starts a pod, so a misspelt flag is named
// with what is allowed instead of a pod that exits at start-up.
type flagCheck struct {
	Flags    []string      `json:"flags"`
	Defects  []string      `json:"defects"`
	Problems []flagProblem `json:"problems"`
}

// flagProblem is one flag the binary would refuse: its name as given and why.
type flagProblem struct {
	Flag  string `json:"flag"`
	Error string `json:"error"`
}

// runCheckFlags parses each argument (`--name=value`, or `--name` for a boolean) with the real flag
// set, without starting anything, and prints the answer as JSON. The values are checked as the flag
// set parses them, and --defect against the defect list; the checks of a whole configuration that
// need a database or a file are left to the start-up itself.
func runCheckFlags(args []string, stdout io.Writer) error {
	var o options
	fs := flags(&o, io.Discard)
	out := flagCheck{Problems: []flagProblem{}}
	fs.VisitAll(func(f *flag.Flag) { out.Flags = append(out.Flags, f.Name) })
	for _, d := range defect.All {
		out.Defects = append(out.Defects, string(d))
	}
	for _, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || name == "" {
			out.Problems = append(out.Problems, flagProblem{Flag: a, Error: "not a flag: want --name=value"})
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			out.Problems = append(out.Problems, flagProblem{Flag: name, Error: "unknown flag"})
			continue
		}
		if !hasValue {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				out.Problems = append(out.Problems, flagProblem{Flag: name, Error: "needs a value (--" + name + "=VALUE)"})
				continue
			}
			value = "true"
		}
		if err := fs.Set(name, value); err != nil {
			out.Problems = append(out.Problems, flagProblem{Flag: name, Error: fmt.Sprintf("value %q: %v", value, err)})
		}
	}
	for _, d := range o.defects {
		if _, err := defect.Parse(d); err != nil {
			out.Problems = append(out.Problems, flagProblem{Flag: "defect", Error: fmt.Sprintf("%q is not a seeded defect of this build", d)})
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
