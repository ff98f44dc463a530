// Command gen writes the dashboards of package dashboards as Grafana JSON into dashboards/grafana/
// (run by `go generate ./dashboards`, from the dashboards directory).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/seqgate/seqgate/dashboards"
)

func main() {
	files, err := dashboards.Render()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join("grafana", name), b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
