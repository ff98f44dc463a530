// Package dashboards holds eventlogd's Grafana dashboards as code (typed builders from
// github.com/grafana/grafana-foundation-sdk/go) and, in rules/, the Prometheus recording and alert
// rules for the durability SLIs of design 000. The generated JSON is committed in grafana/ for
// provisioning (docker-compose.yml); `go generate ./dashboards` rewrites it, and the package tests
// fail when the committed JSON differs from what the code builds, when a query names a metric
// eventlogd does not register, or when promtool rejects the rules. See docs/stack.md.
package dashboards

//go:generate go run ./gen
