package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/provenance"
	"github.com/seqgate/seqgate/ledger"
)

// commandLine is a command's arguments as given: the flags set on the command line, as
// --name=value in the order cobra lists them (a repeated flag once per value), then the positional
// arguments. Secrets are redacted (provenance.Redact).
func commandLine(cmd *cobra.Command, args []string) []string {
	out := []string{cmd.Name()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return provenance.Redact(append(out, args...))
}

// runProvenance is what this run judges, for its run record: seqgate's build, the pods' binary (its
// hash, its --version when it takes eventlogd's flags, its Go build info), the scenario's pod flags and
// defects, the overrides, the command line and the scenario file's hash. The harness adds the machine.
func runProvenance(ctx context.Context, path string, sc *scenario.Scenario, f runFlags, bin string, prof *podprofile.Profile) (*ledger.Provenance, error) {
	p := &ledger.Provenance{Seqgate: provenance.Self(), Args: f.args, ScenarioFile: path, PodFlags: []string{}, Defects: []string{}}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	p.ScenarioSHA256 = hex.EncodeToString(sum[:])
	if f.seed != "" {
		p.Sets = append(p.Sets, "seed="+f.seed)
	}
	if f.duration != "" {
		p.Sets = append(p.Sets, "duration="+f.duration)
	}
	p.Sets = append(p.Sets, f.sets...)
	if bin == "" { // an external target: its pods are not ours to describe
		return p, nil
	}
	eventlogdFlags := prof == nil || prof.EventlogdFlags
	if p.Pods, err = provenance.Describe(ctx, bin, eventlogdFlags); err != nil {
		return nil, fmt.Errorf("the pods' binary: %w", err)
	}
	if !eventlogdFlags {
		return p, nil
	}
	e := sc.Pods.Eventlogd
	for _, d := range strings.Split(e.Defect, ",") {
		if d = strings.TrimSpace(d); d != "" {
			p.Defects = append(p.Defects, d)
		}
	}
	if len(p.Defects) > 0 {
		p.PodFlags = append(p.PodFlags, "--test-defects", "--defect="+strings.Join(p.Defects, ","))
	}
	if e.Retention.D() > 0 {
		p.PodFlags = append(p.PodFlags, "--fs-events-retention="+e.Retention.D().String())
	}
	names := make([]string, 0, len(e.Flags))
	for name := range e.Flags {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p.PodFlags = append(p.PodFlags, "--"+name+"="+e.Flags[name])
	}
	return p, nil
}
