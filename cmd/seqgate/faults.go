package main

import (
	"github.com/spf13/cobra"

	"github.com/seqgate/seqgate/faults"
)

// newFaultsCmd lists every fault kind from the faults registry (no second, hand-written list).
func newFaultsCmd() *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "faults",
		Short: "List every fault kind: what it simulates, its target, timing, parameters and mechanism",
		Long: `List every fault kind a scenario's faults: timeline or nemesis: block can use, generated from
the registry in package faults: what each simulates, what it targets (a name, random, all), whether it
spans a duration (for) or is instant, its parameters (type, default, allowed values, meaning) and how it
is made (toxiproxy toxic, signal, admin hook). --markdown prints the catalog section of docs/faults.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if markdown {
				return faults.WriteCatalogMarkdown(cmd.OutOrStdout())
			}
			return faults.WriteCatalog(cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the catalog as Markdown (docs/faults.md)")
	return cmd
}
