package run

import (
	"fmt"
	"sync"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/consumer"
	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/harness/proxy"
)

// env is the harness's side of faults.Env: the run's tenants, proxies, pods and consumers by name.
// Tenants are named tenant_<index> (stable across runs, docs/faults.md), not by their provisioned id.
type env struct {
	tenants   []string          // tenant_<index>
	pool      map[string]string // tenant name -> pool (proxy name)
	ids       map[string]string // tenant name -> the service's tenant_id
	proxies   *proxy.Set
	fleet     *pods.Fleet
	consumers map[string][]*consumer.Consumer // by tenant name
	token     string                          // the pods' admin token ("": an external target)

	goneMu sync.Mutex
	gone   map[string]bool // tenant ids a tenant_delete fault deleted
}

var (
	_ faults.Env            = (*env)(nil)
	_ faults.TenantIDs      = (*env)(nil)
	_ faults.GoneTenants    = (*env)(nil)
	_ faults.AdminTokens    = (*env)(nil)
	_ faults.PodMetaProxies = (*env)(nil)
	_ faults.SharedProxies  = (*env)(nil)
)

// ProxyTenants names every tenant whose DB proxy is tenant's (a shared pool; with a pod profile of
// layout admin_dsn, every tenant), in the run's order.
func (e *env) ProxyTenants(tenant string) []string {
	pool, ok := e.pool[tenant]
	if !ok {
		return nil
	}
	var out []string
	for _, t := range e.tenants {
		if e.pool[t] == pool {
			out = append(out, t)
		}
	}
	return out
}

// TenantDeleted notes a tenant a fault deleted: the drain stops waiting for its consumers, whose
// key no longer works.
func (e *env) TenantDeleted(tenant string) {
	e.goneMu.Lock()
	defer e.goneMu.Unlock()
	if e.gone == nil {
		e.gone = map[string]bool{}
	}
	e.gone[e.ids[tenant]] = true
}

// deleted reports whether the tenant with service id id was deleted by a fault.
func (e *env) deleted(id string) bool {
	if e == nil {
		return false
	}
	e.goneMu.Lock()
	defer e.goneMu.Unlock()
	return e.gone[id]
}

// TenantID returns the service's tenant_id of the tenant named tenant_<index>.
func (e *env) TenantID(tenant string) (string, error) {
	id, ok := e.ids[tenant]
	if !ok {
		return "", fmt.Errorf("no tenant %q (tenants: %v)", tenant, e.tenants)
	}
	return id, nil
}

func (e *env) Tenants() []string { return append([]string(nil), e.tenants...) }

func (e *env) PodNames() []string {
	if e.fleet == nil {
		return nil
	}
	return e.fleet.Names()
}

func (e *env) TenantProxy(tenant string) (faults.ToxicProxy, error) {
	pool, ok := e.pool[tenant]
	if !ok || e.proxies == nil {
		return nil, fmt.Errorf("no DB proxy for tenant %q (tenants: %v)", tenant, e.tenants)
	}
	p := e.proxies.Get(pool)
	if p == nil {
		return nil, fmt.Errorf("no proxy named %q", pool)
	}
	return p, nil
}

func (e *env) MetaProxy() (faults.ToxicProxy, error) {
	if e.proxies == nil || e.proxies.Get("meta") == nil {
		return nil, fmt.Errorf("no meta DB proxy (an external target has none)")
	}
	return e.proxies.Get("meta"), nil
}

// PodMetaProxy returns the proxy in front of one pod's meta DB connections.
func (e *env) PodMetaProxy(pod string) (faults.ToxicProxy, error) {
	if e.proxies == nil || e.proxies.Get(PodMetaProxyName(pod)) == nil {
		return nil, fmt.Errorf("no meta DB proxy of pod %q (pods: %v; an external target has none)", pod, e.PodNames())
	}
	return e.proxies.Get(PodMetaProxyName(pod)), nil
}

func (e *env) Pod(name string) (faults.Pod, error) {
	if e.fleet == nil {
		return nil, fmt.Errorf("no pods: the target is external")
	}
	p := e.fleet.Get(name)
	if p == nil {
		return nil, fmt.Errorf("no pod %q (pods: %v)", name, e.fleet.Names())
	}
	return p, nil
}

// AdminToken is the run's pods' admin token, sent by the admin hooks (fault.AdminTokens).
func (e *env) AdminToken() string { return e.token }

func (e *env) AdminURL(pod string) (string, error) {
	if e.fleet == nil {
		return "", fmt.Errorf("no admin endpoint: the target is external")
	}
	p := e.fleet.Get(pod)
	if p == nil {
		return "", fmt.Errorf("no pod %q", pod)
	}
	return p.URL(), nil
}

func (e *env) ConsumersOf(tenant string) []faults.Consumer {
	var out []faults.Consumer
	for _, c := range e.consumers[tenant] {
		out = append(out, c)
	}
	return out
}
