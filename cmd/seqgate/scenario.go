package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(placeholder): replaced by the real command.
func newScenarioCmd() *cobra.Command {
	return &cobra.Command{Use: "scenario", Short: "(not built yet)", RunE: func(*cobra.Command, []string) error {
		return errors.New("scenario: not built yet")
	}}
}
