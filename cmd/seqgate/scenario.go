package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/run"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
)

func newScenarioCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scenario",
		Short: "Work with scenario files (see docs/scenarios.md)",
	}
	var eventlogd, podsProfile, targetProfile string
	lintCmd := &cobra.Command{
		Use:   "lint FILE...",
		Short: "Validate scenario files without running them",
		Long: `lint parses and validates each scenario exactly as run does before anything starts: unknown
fields, bad durations and impossible combinations are reported with file, line, field and the
allowed values. A scenario's seeded defect and pod flags (pods.eventlogd.defect, .flags) are checked
against what the eventlogd binary accepts ('eventlogd check-flags'; the binary is found as run finds
it, see --eventlogd). With --target-profile or --pods-profile, each file is also checked against that
pod profile, as run checks it: a fault kind its pods cannot take (an admin hook the service has not
got) and eventlogd flags for a profile that does not start eventlogd are refused. Exit code 0 when
every file is valid, 1 otherwise.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var prof *podprofile.Profile
			if podsProfile != "" || targetProfile != "" {
				p, err := podProfileOf(runFlags{podsProf: podsProfile, profile: targetProfile})
				if err != nil {
					return &exitError{code: exitUnusable, err: err}
				}
				prof = p
			}
			return lintProfile(cmd.Context(), cmd.OutOrStdout(), args, eventlogd, prof)
		},
	}
	lintCmd.Flags().StringVar(&eventlogd, "eventlogd", "", "the eventlogd binary the pod flags are checked against (default: as seqgate run finds it)")
	lintCmd.Flags().StringVar(&targetProfile, "target-profile", "", "also check each file against this built-in pod profile ("+strings.Join(service.Shipped.PodNames(), ", ")+")")
	lintCmd.Flags().StringVar(&podsProfile, "pods-profile", "", "also check each file against the pod profile in this YAML file")
	cmd.AddCommand(lintCmd)
	return cmd
}

// lint validates files, finding the eventlogd binary as run does when a file gives pod flags.
func lint(w io.Writer, files []string) error { return lintWith(context.Background(), w, files, "") }

func lintWith(ctx context.Context, w io.Writer, files []string, eventlogd string) error {
	return lintProfile(ctx, w, files, eventlogd, nil)
}

// lintProfile is lintWith checking each file against the pod profile prof too (nil: eventlogd's).
func lintProfile(ctx context.Context, w io.Writer, files []string, eventlogd string, prof *podprofile.Profile) error {
	if ctx == nil {
		ctx = context.Background()
	}
	bad := 0
	bin := ""
	for _, f := range files {
		s, err := scenario.ReadFile(f)
		if err == nil && prof != nil {
			err = checkProfileFaults(f, readSource(f), s, prof)
			if e := s.Pods.Eventlogd; err == nil && !prof.EventlogdFlags && (e.Defect != "" || len(e.Flags) > 0) {
				err = scenario.FieldError(f, readSource(f), "pods.eventlogd", fmt.Sprintf("a seeded defect and eventlogd flags are for eventlogd pods, and the pod profile %s does not take them (eventlogd_flags: false)", prof.Name), nil)
			}
		}
		if err == nil && (prof == nil || prof.EventlogdFlags) && (s.Pods.Eventlogd.Defect != "" || len(s.Pods.Eventlogd.Flags) > 0) {
			if bin == "" {
				if bin, _, err = run.FindEventlogd(eventlogd); err != nil {
					err = fmt.Errorf("%s: pods.eventlogd: cannot check the pod flags: %w", f, err)
				}
			}
			if err == nil {
				err = checkPodFlags(ctx, bin, f, readSource(f), s)
			}
		}
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
