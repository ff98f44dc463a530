package service

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/target"
)

// Drive9 is mem9-ai/drive9, the service eventlogd is wire-compatible with.
const Drive9 = "drive9"

// drive9 answers provisioning 202 and says "active" on /v1/status once the tenant's database
// (drive9_<id>, made by its local provisioner on the admin DSN's server) is ready. drive9-server is
// configured by its environment only: DRIVE9_LOCAL_MYSQL_DSN is the admin DSN whose host:port its
// local provisioner hands every tenant. A fresh tenant took 30 s to 2.5 min to become active on a
// loaded machine (docs/external.md), hence its 3 minutes.
var drive9 = Def{Name: Drive9,
	Target: target.Service{Ready: target.ReadyStatus, Wire: target.Drive9Wire,
		Database: drive9Database, DatabaseDoc: "drive9_<tenant id without dashes>"},
	Pods: &podprofile.Profile{Binary: "drive9-server",
		Env: map[string]string{"DRIVE9_TENANT_PROVIDER": "local", "DRIVE9_LISTEN_ADDR": podprofile.PhListen, "DRIVE9_POD_ID": podprofile.PhPod,
			"DRIVE9_META_DSN": podprofile.PhMetaDSN, "DRIVE9_LOCAL_DSN": podprofile.PhMetaDSN, "DRIVE9_LOCAL_MYSQL_DSN": podprofile.PhTenantDSN,
			"DRIVE9_S3_DIR": podprofile.PhDataDir, "DRIVE9_FS_EVENTS_RETENTION": podprofile.PhRetention},
		Ready:        podprofile.Ready{Health: "/healthz", Tenants: 3 * time.Minute},
		Metrics:      "/metrics",
		LossCounters: []string{"drive9_sse_event_retry_dropped_total"},
		Layout:       podprofile.LayoutAdminDSN,
	},
}

// drive9Database is drive9's local provisioner's name for a tenant's database
// (pkg/tenant/local/provisioner.go, databaseName): "drive9_" + the tenant id lower-cased with
// everything but letters, digits and _ removed, cut to 64 characters.
func drive9Database(t target.Tenant) (string, error) {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(t.ID)) {
		if r == '-' {
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("tenant id %q gives no drive9 database name", t.ID)
	}
	name := "drive9_" + b.String()
	if len(name) > 64 {
		name = name[:64]
	}
	return name, nil
}

func init() { ship(&drive9) }
