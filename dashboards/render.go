package dashboards

//lint:file-ignore SA1019 the v1 dashboard model is what Grafana's file provisioning loads; dashboardv2 needs the v2 (app platform) API

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// All is every dashboard by the file name its JSON is committed under in grafana/.
func All() map[string]*dashboard.DashboardBuilder {
	return map[string]*dashboard.DashboardBuilder{
		"eventlogd.json":   Eventlogd(),
		"seqgate-run.json": Run(),
	}
}

// Render builds every dashboard and returns its JSON (indented, newline-terminated) by file name.
// Panels and rows are numbered 1, 2, ... in order: Grafana wants ids unique within a dashboard.
func Render() (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, b := range All() {
		d, err := b.Build()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for i, p := range d.Panels {
			id := uint32(i + 1)
			switch {
			case p.Panel != nil:
				p.Panel.Id = &id
			case p.RowPanel != nil:
				p.RowPanel.Id = id
			}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(d); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = buf.Bytes()
	}
	return out, nil
}
