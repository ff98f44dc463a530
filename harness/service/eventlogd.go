package service

import (
	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/target"
)

// Eventlogd is seqgate's reference service (cmd/eventlogd), the default.
const Eventlogd = "eventlogd"

// eventlogd speaks drive9's wire, puts each tenant in a pool of the operator's (seqgate's own pods:
// the scenario's), one database per pool with a tenant_id column, and answers provisioning only
// once the tenant is usable. Its pods take the run's pools file, admin hooks and the scenario's
// seeded defect and flags.
var eventlogd = Def{Name: Eventlogd,
	Target: target.Service{Ready: target.ReadyAtOnce, Wire: target.Drive9Wire, AuditDB: "{pool}", TenantColumn: "tenant_id"},
	Pods: &podprofile.Profile{
		Args: []string{"--listen", podprofile.PhListen, "--pod", podprofile.PhPod, "--pools", podprofile.PhPoolsFile,
			"--fs-events-retention", podprofile.PhRetention, "--admin"},
		Env: map[string]string{"EVENTLOGD_META_DSN": podprofile.PhMetaDSN, "EVENTLOGD_ADMIN_TOKEN": podprofile.PhAdminToken,
			"EVENTLOGD_PROVISION_TOKEN": podprofile.PhProvisionToken},
		Ready:        podprofile.Ready{AddressLine: "listening on ", Health: "/healthz"},
		Metrics:      "/metrics",
		LossCounters: []string{"drive9_sse_event_retry_dropped_total"},
		Layout:       podprofile.LayoutPools, AdminHooks: true, EventlogdFlags: true,
	},
}

func init() { ship(&eventlogd) }
