package fault

import (
	"context"
	"syscall"
	"time"
)

// Env is everything a fault needs from the harness. The harness implements it; tests implement it with
// real proxies and real processes. It is composed of small interfaces so each fault kind asks only for
// what it uses.
type Env interface {
	Targets
	Proxies
	Pods
	Consumers
}

// Targets names what faults can hit. Names are the ledger's ids (tenant ids from provision, pod names).
type Targets interface {
	// Tenants returns the run's tenant ids in a stable order.
	Tenants() []string
	// PodNames returns the run's pod names in a stable order.
	PodNames() []string
}

// Proxies hands out the toxiproxy proxies that sit in front of every database connection.
type Proxies interface {
	// TenantProxy returns the proxy in front of the tenant's DB (for shared-mode tenants: the shared
	// pool's proxy, which therefore hits every tenant of that pool).
	TenantProxy(tenant string) (ToxicProxy, error)
	// MetaProxy returns the proxy in front of the meta DB.
	MetaProxy() (ToxicProxy, error)
}

// ToxicProxy is one toxiproxy proxy a DB fault acts on: in-process (kinds.InProcess, harness/proxy) or on a
// toxiproxy server driven over its HTTP API (harness/proxy with seqgate run --toxiproxy).
type ToxicProxy interface {
	// ProxyName names the proxy in errors.
	ProxyName() string
	// AddToxic adds one toxic, given as toxiproxy's JSON toxic object.
	AddToxic(ctx context.Context, toxicJSON []byte) error
	// RemoveToxic removes the named toxic; one that is already gone is not an error.
	RemoveToxic(ctx context.Context, name string) error
	// SetEnabled(false) refuses new connections and breaks the open ones; SetEnabled(true) listens
	// again on the same address. Both are idempotent.
	SetEnabled(ctx context.Context, on bool) error
}

// Pods hands out pod process handles and their admin endpoints.
type Pods interface {
	// Pod returns the handle of the named pod.
	Pod(name string) (Pod, error)
	// AdminURL returns the pod's base URL (e.g. http://127.0.0.1:PORT) where eventlogd serves its
	// --admin endpoints; an error when the target has no admin hook (an external service).
	AdminURL(pod string) (string, error)
}

// Consumers hands out the SSE consumers of a tenant.
type Consumers interface {
	// ConsumersOf returns the tenant's consumers in a stable order (may be empty).
	ConsumersOf(tenant string) []Consumer
}

// TenantIDs is optionally implemented by an Env whose tenant names (tenant_<N>) are not the service's
// tenant ids: it maps a name to the tenant_id the service returned from provision. An Env without it
// names its tenants by their service ids.
type TenantIDs interface {
	TenantID(tenant string) (string, error)
}

// SharedProxies is optionally implemented by an Env whose tenants may share a DB proxy (a shared
// pool, or pods that hand every tenant one DB address): ProxyTenants names every tenant behind
// tenant's DB proxy, tenant included. A tenant-DB fault's start record lists the tenants it reached
// from it.
type SharedProxies interface {
	ProxyTenants(tenant string) []string
}

// Pod is one service process (one eventlogd) as the harness runs it: in its own process group, killed
// with its parent. The harness records the `pod` ledger records (start, ready, crash, exit) itself.
// *harness/pods.Pod satisfies it as is.
type Pod interface {
	// Kill sends sig to the pod's whole process group; an error when the pod is not running. A pod
	// that dies of it is recorded as a crash.
	Kill(sig syscall.Signal) error
	// Wait blocks until the current process has exited or ctx is done (then it returns ctx.Err()).
	Wait(ctx context.Context) error
	// Stop shuts the pod down gracefully (SIGTERM, SIGKILL after grace) and waits; its end is recorded
	// as an exit, not a crash.
	Stop(grace time.Duration) error
	// Restart starts a down pod again (same name, flags and listen address) and returns once it is
	// serving or ctx is done. It fails when the pod is still running.
	Restart(ctx context.Context) error
}

// Consumer is one SSE subscriber run by the harness.
type Consumer interface {
	// Name returns the consumer's ledger id.
	Name() string
	// SetReadDelay makes the consumer wait d before reading each frame (0 = read at full speed), so it
	// reads slower than events arrive and the server's per-connection queue fills.
	SetReadDelay(d time.Duration)
	// Disconnect closes the consumer's current connection at once, as a client-side network failure;
	// the consumer then reconnects by its own policy (resume with ?since=).
	Disconnect() error
}

// GoneTenants is optionally implemented by an Env that wants to know which tenants a fault deleted
// (tenant_delete): the harness stops waiting for their consumers to reach a head they can no longer
// read. Names are the Env's tenant names.
type GoneTenants interface {
	TenantDeleted(tenant string)
}

// AdminTokens is optionally implemented by an Env whose pods guard their admin endpoints with a
// token (eventlogd --admin-token): the admin hooks send it on every call.
type AdminTokens interface {
	AdminToken() string
}

// PodMetaProxies is optionally implemented by an Env whose pods each reach the meta DB through a
// proxy of their own (chained in front of MetaProxy's): a fault on one of them slows or breaks one
// pod's meta connections only.
type PodMetaProxies interface {
	PodMetaProxy(pod string) (ToxicProxy, error)
}
