package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(placeholder): replaced by the real command.
func newVerifyCmd() *cobra.Command {
	return &cobra.Command{Use: "verify", Short: "(not built yet)", RunE: func(*cobra.Command, []string) error {
		return errors.New("verify: not built yet")
	}}
}
