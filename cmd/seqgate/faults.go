package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(placeholder): replaced by the real command.
func newFaultsCmd() *cobra.Command {
	return &cobra.Command{Use: "faults", Short: "(not built yet)", RunE: func(*cobra.Command, []string) error {
		return errors.New("faults: not built yet")
	}}
}
