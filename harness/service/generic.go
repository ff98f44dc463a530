package service

import "github.com/seqgate/seqgate/harness/target"

// Generic is any drive9-compatible service, its layout given on the command line.
const Generic = "generic"

// generic speaks drive9's wire, waits on /v1/status only where the service serves it, and takes
// where its tenants' events live from --audit-db and --tenant-column. seqgate starts no pods of it
// (a pod profile file names its own target).
var generic = Def{Name: Generic,
	Target: target.Service{Ready: target.ReadyStatusIfServed, Wire: target.Drive9Wire},
}

func init() { ship(&generic) }
