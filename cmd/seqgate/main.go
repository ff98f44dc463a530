// Command seqgate is a load-test and chaos harness with an SLI verifier for event-log delivery systems.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/seqgate/seqgate/internal/printable"
)

// exitError carries a process exit code out of a subcommand (the verdict codes of docs/ledger-v1.md).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// Exit codes shared by verify and run.
const (
	exitPass         = 0
	exitFail         = 1
	exitInconclusive = 2
	exitUnusable     = 3
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "seqgate",
		Short:         "Load-test and chaos harness with an SLI verifier for event-log delivery systems",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// An explicit list, not init() side effects: every subcommand is visible here.
	root.AddCommand(
		newVerifyCmd(),
		newReportCmd(),
		newGenLedgerCmd(),
		newRunCmd(),
		newScenarioCmd(),
		newFaultsCmd(),
		newPowerCmd(),
		newSweepCmd(),
	)
	return root
}

func main() {
	err := newRootCmd().Execute()
	if err == nil {
		return
	}
	var xe *exitError
	if errors.As(err, &xe) {
		if xe.err != nil {
			fmt.Fprintln(os.Stderr, "seqgate:", printable.Text(xe.err.Error())) // errors quote input, which may be a ledger's
		}
		os.Exit(xe.code)
	}
	fmt.Fprintln(os.Stderr, "seqgate:", printable.Text(err.Error()))
	os.Exit(exitUnusable)
}
