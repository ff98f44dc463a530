package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(placeholder): replaced by the real command.
func newGenLedgerCmd() *cobra.Command {
	return &cobra.Command{Use: "gen-ledger", Short: "(not built yet)", RunE: func(*cobra.Command, []string) error {
		return errors.New("genledger: not built yet")
	}}
}
