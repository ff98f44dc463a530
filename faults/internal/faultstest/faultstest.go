// Package faultstest holds the real-resources test doubles the fault tests share (package faults for
// the runner, package faults/kinds for each kind): an Env with in-process toxiproxy proxies in front
// of a private MariaDB, restartable child processes as pods, and consumers holding real TCP
// connections. Nothing in it is a stub: a fault under test acts on a real proxy, process or socket.
package faultstest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	_ "github.com/go-sql-driver/mysql" // the driver the proxies' clients use
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/seqgate/seqgate/faults/fault"
	"github.com/seqgate/seqgate/faults/kinds"
	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/internal/wait"
)

// Database is the schema every DB test uses: one table of marks (ids) a test inserts through a proxy
// and looks for directly.
const Database = "faults_test"

var (
	dbOnce sync.Once
	dbSrv  *dbserver.Server
	dbErr  error
)

// DB returns the test binary's private MariaDB with the Database schema (started on first use; the
// package's TestMain must call StopDB).
func DB(t *testing.T) *dbserver.Server {
	t.Helper()
	dbOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		dbSrv, dbErr = dbserver.Start(ctx, dbserver.Options{})
		if dbErr == nil {
			db, err := sql.Open("mysql", dbSrv.DSN(""))
			if err == nil {
				_, err = db.Exec("CREATE DATABASE " + Database)
				if err == nil {
					_, err = db.Exec("CREATE TABLE " + Database + ".marks (id VARCHAR(64) PRIMARY KEY)")
				}
				db.Close()
			}
			dbErr = err
		}
	})
	if dbErr != nil {
		t.Fatalf("private MariaDB: %v", dbErr)
	}
	return dbSrv
}

// StopDB stops the private MariaDB if a test started it.
func StopDB() {
	if dbSrv != nil {
		_ = dbSrv.Stop()
	}
}

// Direct opens a pool straight to the private MariaDB, bypassing every proxy: the ground truth.
func Direct(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", DB(t).DSN(Database))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Env is a real-resources fault.Env. Tests fill its maps: Pods, Admin (pod -> admin base URL) and
// Consumers (tenant -> consumers); NewEnv fills Proxies.
type Env struct {
	Proxies     map[string]*toxiproxy.Proxy // tenant -> its DB proxy; "meta" for the meta DB
	Pods        map[string]*Pod
	Admin       map[string]string
	Consumers   map[string][]fault.Consumer
	TenantNames []string // what Tenants returns
	PodOrder    []string // what PodNames returns
	Token       string   // the pods' admin token the admin hooks send (AdminToken); "" for none
}

// AdminToken returns Token: the Env is a fault.AdminTokens.
func (e *Env) AdminToken() string { return e.Token }

var _ fault.Env = (*Env)(nil)

// NewEnv returns an Env whose tenants each get a toxiproxy proxy in front of the private MariaDB, and
// so does the meta DB ("meta"); without tenants no database is started.
func NewEnv(t *testing.T, tenants ...string) *Env {
	t.Helper()
	e := &Env{
		Proxies:     map[string]*toxiproxy.Proxy{},
		Pods:        map[string]*Pod{},
		Admin:       map[string]string{},
		Consumers:   map[string][]fault.Consumer{},
		TenantNames: tenants,
	}
	if len(tenants) > 0 {
		s := DB(t)
		srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
		for _, name := range append([]string{"meta"}, tenants...) {
			p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", s.Addr)
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			e.Proxies[name] = p
			t.Cleanup(p.Stop)
		}
	}
	return e
}

// Tenants returns TenantNames.
func (e *Env) Tenants() []string { return e.TenantNames }

// PodNames returns PodOrder.
func (e *Env) PodNames() []string { return e.PodOrder }

// TenantProxy returns the tenant's proxy.
func (e *Env) TenantProxy(tenant string) (fault.ToxicProxy, error) {
	if p, ok := e.Proxies[tenant]; ok && tenant != "meta" {
		return kinds.InProcess(p), nil
	}
	return nil, fmt.Errorf("no proxy for tenant %q", tenant)
}

// MetaProxy returns the meta DB's proxy.
func (e *Env) MetaProxy() (fault.ToxicProxy, error) {
	if p, ok := e.Proxies["meta"]; ok {
		return kinds.InProcess(p), nil
	}
	return nil, errors.New("no meta proxy")
}

// Pod returns the named pod.
func (e *Env) Pod(name string) (fault.Pod, error) {
	if p, ok := e.Pods[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("no pod %q", name)
}

// AdminURL returns the pod's admin base URL from Admin.
func (e *Env) AdminURL(pod string) (string, error) {
	if u, ok := e.Admin[pod]; ok {
		return u, nil
	}
	return "", fmt.Errorf("pod %q has no admin endpoint", pod)
}

// ConsumersOf returns the tenant's consumers from Consumers.
func (e *Env) ConsumersOf(tenant string) []fault.Consumer { return e.Consumers[tenant] }

// DSNAt is the DSN of the test database through a proxy listening on addr, with the server's
// credentials.
func (e *Env) DSNAt(addr string) string { return dbSrv.DSNAt(addr, Database) }

// OpenVia opens a pool through the named proxy (a tenant or "meta").
func (e *Env) OpenVia(t *testing.T, name string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dbSrv.DSNAt(e.Proxies[name].Listen, Database))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ProcState returns the state letter of /proc/PID/stat (R, S, T for stopped, ...).
func ProcState(pid int) (byte, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) S ...: the state follows the last ')'.
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' && i+2 < len(b) {
			return b[i+2], nil
		}
	}
	return 0, fmt.Errorf("unparsable /proc/%d/stat", pid)
}

// WaitProcState waits (up to 5 s) until the pid is in state want.
func WaitProcState(t *testing.T, pid int, want byte) bool {
	t.Helper()
	return wait.Until(5*time.Second, func() bool {
		st, err := ProcState(pid)
		if err != nil {
			t.Fatal(err)
		}
		return st == want
	})
}
