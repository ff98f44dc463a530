package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/harness/run"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
)

// podProfileOf is the pod profile a run without --target starts its pods by: --pods-profile FILE, or
// the built-in one --target-profile names (default eventlogd).
func podProfileOf(f runFlags) (*podprofile.Profile, error) {
	if f.podsProf != "" {
		if f.profile != "" && f.profile != service.Eventlogd {
			return nil, fmt.Errorf("--pods-profile %s and --target-profile %s both name the pods' profile: give one", f.podsProf, f.profile)
		}
		return service.Shipped.ReadPods(f.podsProf)
	}
	return service.Shipped.Pods(f.profile)
}

// checkPods resolves the pods' profile and checks, before any run directory is made, that every
// fault kind of the scenario can be had on its pods and that its pod flags suit the profile.
func checkPods(path string, sc *scenario.Scenario, f runFlags) (*podprofile.Profile, error) {
	prof, err := podProfileOf(f)
	if err != nil {
		return nil, err
	}
	if f.eventlogd != "" && f.podsBin != "" {
		return nil, errors.New("--eventlogd and --pods-bin both name the pods' binary: give one")
	}
	if err := checkProfileFaults(path, readSource(path), sc, prof); err != nil {
		return nil, err
	}
	if bin := cmp.Or(f.podsBin, prof.Binary); bin != "" {
		if err := pods.CheckBinary(bin); err != nil {
			return nil, fmt.Errorf("--pods-bin: %w", err)
		}
	}
	if e := sc.Pods.Eventlogd; !prof.EventlogdFlags && (e.Defect != "" || len(e.Flags) > 0) {
		return nil, scenario.FieldError(path, readSource(path), "pods.eventlogd", fmt.Sprintf("a seeded defect and eventlogd flags are for eventlogd pods, and the pod profile %s does not take them (eventlogd_flags: false)", prof.Name), nil)
	}
	return prof, nil
}

// podsBinary finds the pods' binary and checks that it is an executable file (and, for eventlogd,
// that it accepts the scenario's pod flags).
func podsBinary(ctx context.Context, stderr io.Writer, path string, sc *scenario.Scenario, f runFlags, prof *podprofile.Profile, dir string) (string, error) {
	var bin string
	switch {
	case f.podsBin != "":
		bin = f.podsBin
	case prof.Binary != "":
		bin = prof.Binary
	case prof.EventlogdFlags:
		b, how, err := run.FindEventlogd(f.eventlogd)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(stderr, "seqgate: eventlogd %s (%s)\n", b, how)
		bin = b
	default:
		return "", fmt.Errorf("--pods-bin: the pod profile %s names no binary: give --pods-bin PATH", prof.Name)
	}
	if err := pods.CheckBinary(bin); err != nil {
		return "", fmt.Errorf("--pods-bin: %w", err)
	}
	if prof.EventlogdFlags {
		if err := checkPodFlags(ctx, bin, path, readSource(path), sc); err != nil {
			return "", err
		}
	}
	if f.podsBin != "" || prof.Name != service.Eventlogd {
		fmt.Fprintf(stderr, "seqgate: pods by profile %s, binary %s\n", prof.Name, bin)
	}
	return bin, nil
}

// checkProfileFaults refuses a fault kind, in the timeline or the nemesis, that the profile's pods
// cannot take, naming the scenario's field.
func checkProfileFaults(path string, data []byte, sc *scenario.Scenario, prof *podprofile.Profile) error {
	for i, fs := range sc.Faults {
		if why := prof.Refuses(fs.Kind); why != "" {
			return scenario.FieldError(path, data, fmt.Sprintf("faults[%d].kind", i), why, nil)
		}
	}
	if sc.Nemesis != nil {
		for i, k := range sc.Nemesis.Kinds {
			if why := prof.Refuses(k); why != "" {
				return scenario.FieldError(path, data, fmt.Sprintf("nemesis.kinds[%d]", i), why, nil)
			}
		}
	}
	return nil
}
