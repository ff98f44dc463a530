package pods

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"time"
)

// FlagCheck is what an eventlogd binary answers about flags (`eventlogd check-flags`): every flag and
// seeded defect it accepts, and the problems of the flags it was asked about.
type FlagCheck struct {
	Flags    []string      `json:"flags"`
	Defects  []string      `json:"defects"`
	Problems []FlagProblem `json:"problems"`
}

// FlagProblem is one flag the binary would refuse: the flag's name ("defect" for a seeded defect it
// does not know) and why.
type FlagProblem struct {
	Flag  string `json:"flag"`
	Error string `json:"error"`
}

// checkFlagsTimeout bounds one `eventlogd check-flags`: it starts nothing, so it answers at once.
const checkFlagsTimeout = 30 * time.Second

// CheckFlags asks the pod binary bin whether it accepts the seeded defect (empty: none) and the
// flags (name without -- to value) a scenario gives its pods, without starting a pod.
func CheckFlags(ctx context.Context, bin, defect string, flags map[string]string) (*FlagCheck, error) {
	args := []string{"check-flags"}
	if defect != "" {
		args = append(args, "--defect="+defect)
	}
	names := make([]string, 0, len(flags))
	for k := range flags {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "--"+k+"="+flags[k])
	}
	ctx, cancel := context.WithTimeout(ctx, checkFlagsTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s check-flags: %v (a binary older than check-flags cannot be asked: rebuild it with make build) %s", bin, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var fc FlagCheck
	if err := json.Unmarshal(stdout.Bytes(), &fc); err != nil || len(fc.Flags) == 0 {
		return nil, fmt.Errorf("%s check-flags: not the answer of an eventlogd (%v): %.200q", bin, err, stdout.String())
	}
	return &fc, nil
}
