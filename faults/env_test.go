package faults

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	_ "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/harness/consumer"
	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/internal/dbserver"
)

// The harness's pod and consumer handles must satisfy Pod and Consumer as they are: these lines break
// the build if either side drifts.
var (
	_ Pod      = (*pods.Pod)(nil)
	_ Consumer = (*consumer.Consumer)(nil)
)

var (
	dbOnce sync.Once
	dbSrv  *dbserver.Server
	dbErr  error
)

func TestMain(m *testing.M) {
	if os.Getenv(fakePodEnv) != "" {
		fakePod() // this test binary doubles as a pod for the harness/pods integration test
		return
	}
	code := m.Run()
	if dbSrv != nil {
		_ = dbSrv.Stop()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testDB returns the package's private MariaDB (started on first use, stopped by TestMain).
func testDB(t *testing.T) *dbserver.Server {
	t.Helper()
	dbOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		dbSrv, dbErr = dbserver.Start(ctx, dbserver.Options{})
		if dbErr == nil {
			db, err := sql.Open("mysql", dbSrv.DSN(""))
			if err == nil {
				_, err = db.Exec("CREATE DATABASE faults_test")
				if err == nil {
					_, err = db.Exec("CREATE TABLE faults_test.marks (id VARCHAR(64) PRIMARY KEY)")
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

// testEnv is a real-resources Env: toxiproxy proxies in front of the private MariaDB, real child
// processes as pods, consumers holding real TCP connections.
type testEnv struct {
	srv       *toxiproxy.ApiServer
	proxies   map[string]*toxiproxy.Proxy // tenant -> proxy; "meta" for the meta DB
	pods      map[string]*testPod
	admin     map[string]string
	consumers map[string][]Consumer
	tenants   []string
	podNames  []string
}

func newTestEnv(t *testing.T, tenants ...string) *testEnv {
	t.Helper()
	e := &testEnv{
		srv:       toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop()),
		proxies:   map[string]*toxiproxy.Proxy{},
		pods:      map[string]*testPod{},
		admin:     map[string]string{},
		consumers: map[string][]Consumer{},
		tenants:   tenants,
	}
	if len(tenants) > 0 {
		s := testDB(t)
		for _, name := range append([]string{"meta"}, tenants...) {
			p := toxiproxy.NewProxy(e.srv, name, "127.0.0.1:0", s.Addr)
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			e.proxies[name] = p
			t.Cleanup(p.Stop)
		}
	}
	return e
}

func (e *testEnv) Tenants() []string  { return e.tenants }
func (e *testEnv) PodNames() []string { return e.podNames }

func (e *testEnv) TenantProxy(tenant string) (ToxicProxy, error) {
	if p, ok := e.proxies[tenant]; ok && tenant != "meta" {
		return InProcess(p), nil
	}
	return nil, fmt.Errorf("no proxy for tenant %q", tenant)
}

func (e *testEnv) MetaProxy() (ToxicProxy, error) {
	if p, ok := e.proxies["meta"]; ok {
		return InProcess(p), nil
	}
	return nil, errors.New("no meta proxy")
}

func (e *testEnv) Pod(name string) (Pod, error) {
	if p, ok := e.pods[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("no pod %q", name)
}

func (e *testEnv) AdminURL(pod string) (string, error) {
	if u, ok := e.admin[pod]; ok {
		return u, nil
	}
	return "", fmt.Errorf("pod %q has no admin endpoint", pod)
}

func (e *testEnv) ConsumersOf(tenant string) []Consumer { return e.consumers[tenant] }

// openVia opens a pool through the named proxy (tenant or "meta").
func (e *testEnv) openVia(t *testing.T, name string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dbserver.DSNFor(e.proxies[name].Listen, "faults_test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// direct opens a pool straight to the server, bypassing every proxy: the ground truth.
func direct(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", testDB(t).DSN("faults_test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// testPod is a real child process in its own process group (dies with the test), restartable.
type testPod struct {
	argv []string

	mu          sync.Mutex
	cmd         *exec.Cmd
	done        chan struct{}
	state       *os.ProcessState // of the last process that ended
	failRestart error            // when set, Restart fails with it (heal-failure tests)
	starts      int
}

func newTestPod(t *testing.T, argv ...string) *testPod {
	t.Helper()
	p := &testPod{argv: argv}
	if err := p.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Kill(syscall.SIGKILL)
		_ = p.Wait(context.Background())
	})
	return p
}

func (p *testPod) Kill(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exited() {
		return errors.New("pod is down")
	}
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}

func (p *testPod) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *testPod) Wait(ctx context.Context) error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *testPod) Stop(grace time.Duration) error {
	_ = p.Kill(syscall.SIGCONT)
	if err := p.Kill(syscall.SIGTERM); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if p.Wait(ctx) != nil {
		_ = p.Kill(syscall.SIGKILL)
		return p.Wait(context.Background())
	}
	return nil
}

func (p *testPod) Restart(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err // as harness/pods: a start interrupted before the pod is ready fails
	}
	if p.failRestart != nil {
		return p.failRestart
	}
	if p.cmd != nil && !p.exited() {
		return errors.New("still running")
	}
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	p.starts++
	go func() {
		_ = cmd.Wait()
		p.mu.Lock()
		p.state = cmd.ProcessState
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

func (p *testPod) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

func (p *testPod) lastState() *os.ProcessState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

func (p *testPod) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && !p.exited()
}

// procState returns the state letter of /proc/PID/stat (R, S, T for stopped, ...).
func procState(pid int) (byte, error) {
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

// netConsumer is a consumer holding a real TCP connection to a listener that counts closed conns.
type netConsumer struct {
	name  string
	mu    sync.Mutex
	conn  net.Conn
	delay time.Duration
}

func (c *netConsumer) Name() string { return c.name }

func (c *netConsumer) SetReadDelay(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delay = d
}

func (c *netConsumer) readDelay() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.delay
}

func (c *netConsumer) Disconnect() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return errors.New("not connected")
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

// instance builds a one-target Instance for tests.
func instance(t *testing.T, kind, target string, span time.Duration, params map[string]any) Instance {
	t.Helper()
	k, ok := Lookup(kind)
	if !ok {
		t.Fatalf("no kind %s", kind)
	}
	node, err := mapNode(params)
	if err != nil {
		t.Fatal(err)
	}
	m, err := k.decode(node)
	if err != nil {
		t.Fatal(err)
	}
	return Instance{ID: "f001", Kind: kind, Target: target, Targets: []string{target}, For: span, Params: m}
}
