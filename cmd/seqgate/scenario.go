package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/seqgate/seqgate/harness/scenario"
)

func newScenarioCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scenario",
		Short: "Work with scenario files (see docs/scenarios.md)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "lint FILE...",
		Short: "Validate scenario files without running them",
		Long: `lint parses and validates each scenario exactly as run does before anything starts: unknown
fields, bad durations and impossible combinations are reported with file, line, field and the
allowed values. Exit code 0 when every file is valid, 1 otherwise.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return lint(cmd.OutOrStdout(), args)
		},
	})
	return cmd
}

func lint(w io.Writer, files []string) error {
	bad := 0
	for _, f := range files {
		s, err := scenario.ReadFile(f)
		if err != nil {
			fmt.Fprintln(w, err)
			bad++
			continue
		}
		consumers := 0
		tenants := s.Expand()
		for _, c := range s.Consumers {
			for _, t := range tenants {
				if c.Tenants == "" || c.Tenants == t.Group {
					consumers += c.Count
				}
			}
		}
		fmt.Fprintf(w, "%s: ok (%d tenants, %d pods, %d load blocks, %d consumers, %d fault entries, duration %v)\n",
			f, len(tenants), s.Pods.Count, len(s.Load), consumers, len(s.Faults), s.Duration.D())
	}
	if bad > 0 {
		return &exitError{code: exitFail, err: fmt.Errorf("%d of %d scenario files invalid", bad, len(files))}
	}
	return nil
}
