package verifier

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/seqgate/seqgate/internal/printable"
)

// tenantLabel is how the human summary names a tenant: its name, with the service's id beside it
// when the two differ (tenant_2 (t9e57d43a2ba6a66d)).
func tenantLabel(name, id string) string {
	if id == "" || id == name {
		return printable.String(name)
	}
	return printable.String(name + " (" + id + ")")
}

// msText formats milliseconds to a tenth (the JSON keeps every digit).
func msText(ms float64) string { return strconv.FormatFloat(ms, 'f', 1, 64) + " ms" }

// secs formats run-relative milliseconds as seconds.
func secs(ms float64) string { return fmt.Sprintf("%.3fs", ms/1000) }

// maxFaultRows bounds the fault timeline of the text summary (a nemesis may inject hundreds).
const maxFaultRows = 30

// writeFaults prints the fault timeline right under the verdict: what was injected, where, when it
// started and healed (seconds since the run started, the ledger's clock) and how long the consumers
// of the affected tenants took to catch up.
func writeFaults(b *strings.Builder, s *Summary) {
	if len(s.Faults) == 0 {
		b.WriteString("faults: none\n")
		return
	}
	origin := "times since the run started"
	if l := s.Run.LoadStartMs; l != nil {
		origin = fmt.Sprintf("times since the run started, and in brackets since the load began (at %s: a scenario's at: counts from there)", secs(*l))
	}
	fmt.Fprintf(b, "faults (%d; %s; recovery max %s, unrecovered %d):\n", len(s.Faults), origin, msText(s.RecoveryMaxMs), s.UnrecoveredFaults)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for i, f := range s.Faults {
		if i == maxFaultRows {
			_ = tw.Flush()
			fmt.Fprintf(b, "  ... and %d more faults (all in summary.json faults)\n", len(s.Faults)-maxFaultRows)
			return
		}
		stop, span := "never healed", ""
		if f.StopMs != nil {
			stop, span = "healed "+secs(*f.StopMs), " ("+secs(*f.StopMs-f.StartMs)+")"
		}
		rec := "-"
		switch {
		case f.RecoveryMs != nil && f.Recovered:
			rec = "recovered in " + msText(*f.RecoveryMs)
		case f.RecoveryMs != nil:
			rec = fmt.Sprintf("NOT recovered (%s to the end of the run)", msText(*f.RecoveryMs))
		}
		start := secs(f.StartMs)
		if l := s.Run.LoadStartMs; l != nil {
			start += " (load " + secs(f.StartMs-*l) + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\tstart %s\t%s%s\t%s\n", printable.String(f.ID), printable.String(f.Kind), printable.String(f.Target), start, stop, span, rec)
	}
	_ = tw.Flush()
}

// writeTenants prints every tenant's write outcomes (offered = sent + dropped by the open model; sent
// = ok + err + timeout) with its acked events, losses and p99 delivery latency, and the total.
func writeTenants(b *strings.Builder, s *Summary) {
	if len(s.Tenants) == 0 {
		return
	}
	b.WriteString("writes per tenant (offered = sent + dropped; sent = ok + err + timeout; acked = ok event-producing writes):\n")
	width := len("tenant")
	for _, t := range s.Tenants {
		width = max(width, len(tenantLabel(t.Name, t.ID)))
	}
	// Numbers align right; the first column is padded here so that it stays left-aligned.
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  %-*s\toffered\tsent\tok\terr\ttimeout\tdropped\tacked\tlost\tp99 ms\t\n", width, "tenant")
	row := func(label string, st *Stats) {
		fmt.Fprintf(tw, "  %-*s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%g\t\n", width, label, st.Offered, st.Mutations, st.OK, st.Err, st.Timeout,
			st.Drops, st.Acked, st.Lost, st.LatencyMs.P99)
	}
	shown := tenantRows(s)
	for _, t := range shown {
		row(tenantLabel(t.Name, t.ID), s.TenantStats(t.Name))
	}
	if len(s.Tenants) > 1 {
		row("all", &s.Stats)
	}
	_ = tw.Flush()
	if n := len(s.Tenants) - len(shown); n > 0 {
		where := "all in summary.json per_tenant"
		if s.PerTenantIdle > 0 {
			where = fmt.Sprintf("the others with any number in summary.json per_tenant; the %d idle ones, every number 0, counted in per_tenant_idle", s.PerTenantIdle)
		}
		fmt.Fprintf(b, "  ... and %d more tenants (shown: the %d with the most lost, then failed, then dropped writes; %s)\n", n, len(shown), where)
	}
}

// maxTenantRows bounds the writes table of the text summary (a run may have 1,000 tenants).
const maxTenantRows = 20

// tenantRows are the tenants the writes table shows, in the scenario's order: all of them, or, past
// maxTenantRows, the ones with the most lost writes, then the most failed (err + timeout), then the
// most dropped: the tenants a reader is looking for.
func tenantRows(s *Summary) []TenantInfo {
	rows := s.Tenants // idle tenants (no per_tenant entry) too: their numbers are 0
	if len(rows) <= maxTenantRows {
		return rows
	}
	key := func(i int) [3]int64 {
		st := s.TenantStats(rows[i].Name)
		return [3]int64{st.Lost, st.Err + st.Timeout, st.Drops}
	}
	// A stable sort of every row by key, descending, puts the rows with a key first and the rest
	// (key 0: most tenants of a large run) after them in the scenario's order: sorting only the
	// former and filling up with the latter picks the same rows without sorting them all.
	var order, zero []int
	for i := range rows {
		if key(i) != [3]int64{} {
			order = append(order, i)
		} else if len(zero) < maxTenantRows {
			zero = append(zero, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ka, kb := key(a), key(b)
		for j := range ka {
			if ka[j] != kb[j] {
				if ka[j] > kb[j] {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	keep := append(order, zero...)[:maxTenantRows]
	slices.Sort(keep)
	out := make([]TenantInfo, 0, maxTenantRows)
	for _, i := range keep {
		out = append(out, rows[i])
	}
	return out
}

// writeSlowest prints the slowest deliveries, slowest first: which write, which consumer, which pod
// acked it and which delivered it, when, and the faults active in between.
func writeSlowest(b *strings.Builder, s *Summary) {
	if len(s.SlowestDeliveries) == 0 {
		return
	}
	fmt.Fprintf(b, "slowest deliveries (%d of %d; times since the run started):\n", len(s.SlowestDeliveries), s.Deliveries)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, d := range s.SlowestDeliveries {
		faults := "no fault"
		if len(d.Faults) > 0 {
			faults = "during " + strings.Join(d.Faults, ", ")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s -> %s\tacked by %s at %s\tdelivered by %s at %s\t%s\t%s\n", msText(d.LatencyMs), printable.String(d.MID), printable.String(d.Tenant), printable.String(d.Consumer),
			printable.String(d.AckPod), secs(d.AckMs), printable.String(d.DeliveryPod), secs(d.DeliveredMs), printable.String(faults), printable.String(d.Path))
	}
	_ = tw.Flush()
}

// writeMetrics prints each scraped family the way its kind is read: a gauge by its max and last
// level, a counter by its increase; and the named families no pod exported.
func writeMetrics(b *strings.Builder, s *Summary) {
	m := s.Metrics
	if len(m.Types) == 0 && len(m.Missing) == 0 {
		return
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(m.Types)) {
		if m.Types[name] == MetricCounter {
			parts = append(parts, fmt.Sprintf("%s (counter) increase %g", name, m.Increase[name]))
		} else {
			parts = append(parts, fmt.Sprintf("%s (gauge) max %g last %g", name, m.Max[name], m.Last[name]))
		}
	}
	for _, name := range m.Missing {
		parts = append(parts, name+" NOT EXPORTED by any pod")
	}
	fmt.Fprintf(b, "metrics: %s\n", printable.String(strings.Join(parts, "; ")))
}
