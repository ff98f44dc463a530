package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/scenario"
)

// newFaultsCmd lists every fault kind from the faults registry (no second, hand-written list), and
// previews a scenario's expanded fault schedule.
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
	cmd.AddCommand(newFaultsScheduleCmd())
	return cmd
}

// newFaultsScheduleCmd prints the schedule `seqgate run` would write to schedule.json, without running.
func newFaultsScheduleCmd() *cobra.Command {
	var seed int64
	cmd := &cobra.Command{
		Use:   "schedule SCENARIO",
		Short: "Print the fault schedule a scenario expands to (what run writes to schedule.json), without running it",
		Long: `schedule expands the scenario's faults: timeline and nemesis: block with its seed (or --seed) over
its tenants (tenant_1..tenant_N in declaration order) and pods (pod-1..pod-N), exactly as seqgate run
does before it starts, and prints the result as schedule.json. Same scenario and seed, same schedule.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := scenario.ReadFile(args[0])
			if err != nil {
				return &exitError{code: exitUnusable, err: err}
			}
			if cmd.Flags().Changed("seed") {
				sc.Seed = seed
			}
			var ts faults.TargetSet
			for i := range sc.Expand() {
				ts.Tenants = append(ts.Tenants, faults.TenantSlot(i+1))
			}
			for i := 1; i <= sc.Pods.Count; i++ {
				ts.Pods = append(ts.Pods, fmt.Sprintf("pod-%d", i))
			}
			inst, err := faults.Expand(sc.Faults, sc.Nemesis, sc.Seed, sc.Duration.D(), ts)
			if err != nil {
				return &exitError{code: exitUnusable, err: fmt.Errorf("%s: %w", args[0], err)}
			}
			if inst == nil {
				inst = []faults.Instance{}
			}
			out := faults.Schedule{Version: faults.ScheduleVersion, Scenario: sc.Name, Seed: sc.Seed, RunDuration: sc.Duration.D().String(), Faults: inst}
			b, err := json.MarshalIndent(out, "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return err
		},
	}
	cmd.Flags().Int64Var(&seed, "seed", 0, "use this seed instead of the scenario's")
	return cmd
}
