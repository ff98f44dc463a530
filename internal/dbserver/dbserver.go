// Package dbserver starts a private, throwaway MySQL-compatible server (mariadbd or mysqld from PATH)
// on an empty temp datadir and a free loopback port, for tests and runs that must never touch a shared
// server. The server dies with its parent (Pdeathsig) and Stop removes every file it made.
//
// The server checks grants: its root account has a password generated at Start, which only the DSNs
// of the Server carry (DSN, DSNAt). Another local user can reach the loopback port, but not log in;
// the socket and the datadir are in a 0700 directory.
package dbserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ErrNoServerBinary is returned by Start when neither mariadbd nor mysqld can be found.
var ErrNoServerBinary = errors.New("no MySQL-compatible server binary found: install one (Debian: apt-get install -y mariadb-server) or point seqgate at an existing server with --dsn")

// Options tune Start; the zero value is fine.
type Options struct {
	// Binary is the server binary; empty means mariadbd, then mysqld, from PATH or /usr/sbin.
	Binary string
	// ReadyTimeout bounds the wait for the first successful connection (default 30s).
	ReadyTimeout time.Duration
	// LogPath, when set, receives the server's stdout and stderr; otherwise they go to datadir/server.log.
	LogPath string
	// ExtraArgs are appended to the server's command line.
	ExtraArgs []string
}

// Server is a running private server.
type Server struct {
	Addr     string // 127.0.0.1:port
	Port     int
	Dir      string // temp dir holding datadir, socket and log
	password string // root's, generated at Start
	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error
	once     sync.Once
	stopErr  error
}

const (
	dirPrefix = "seqgate-db-"
	ownerFile = "owner.pid"
	initFile  = "init.sql" // the grants the server runs at start (0600: it holds the password)
)

// removeStale removes the directories of servers whose owning process is gone (it was killed before
// Stop could run). A directory without an owner file, or whose owner lives, is left alone.
func removeStale(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, dirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}

// FindBinary returns the path of the server binary Start would use.
func FindBinary() (string, error) {
	for _, name := range []string{"mariadbd", "mysqld"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"} {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	return "", ErrNoServerBinary
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start launches a private server and waits until it accepts connections.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin := opts.Binary
	if bin == "" {
		var err error
		if bin, err = FindBinary(); err != nil {
			return nil, err
		}
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 30 * time.Second
	}
	removeStale(os.TempDir())
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("dbserver: temp dir: %w", err)
	}
	// The owner file lets a later Start remove this directory if our process dies by SIGKILL (the
	// server dies with us through Pdeathsig, but nothing else would remove its files).
	if err := writeNew(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid()))); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("dbserver: temp dir: %w", err)
	}
	pw, err := newPassword()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("dbserver: password: %w", err)
	}
	s := &Server{Dir: dir, password: pw, done: make(chan struct{})}
	fail := func(err error) (*Server, error) {
		_ = s.Stop()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	datadir := filepath.Join(dir, "data")
	if err := os.Mkdir(datadir, 0o700); err != nil {
		return fail(err)
	}
	// The server's own tmpdir: a large query's on-disk temporary table (a sweep's select of a big
	// backlog) must not sit in the shared /tmp, where another process's cleanup deleted it under a
	// running statement here (Error 6, "Error on delete of '/tmp/#sql-temptable-...'").
	tmpdir := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmpdir, 0o700); err != nil {
		return fail(err)
	}
	isMySQL := strings.HasSuffix(filepath.Base(bin), "mysqld")
	if err := initialize(ctx, bin, datadir, isMySQL); err != nil {
		return fail(err)
	}
	if err := writeNew(filepath.Join(dir, initFile), []byte(grantSQL(pw, isMySQL))); err != nil {
		return fail(fmt.Errorf("dbserver: init file: %w", err))
	}
	logPath := opts.LogPath
	if logPath == "" {
		logPath = filepath.Join(dir, "server.log")
	}
	// The port is free when FreePort returns but anything on the machine may bind it before the
	// server does; a server that exits on "Address already in use" is started again on another port.
	for attempt := 1; ; attempt++ {
		err := s.launch(ctx, bin, datadir, tmpdir, logPath, isMySQL, opts)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errPortTaken) || attempt == portAttempts {
			return fail(err)
		}
		s.cmd, s.done, s.waitErr = nil, make(chan struct{}), nil
	}
}

// portAttempts bounds how many ports Start tries when the one it picked is taken before the
// server binds it.
const portAttempts = 3

// pickPort is FreePort; a test replaces it to hand out a port that is already bound.
var pickPort = FreePort

// errPortTaken marks a server that exited because its port was bound by someone else first.
var errPortTaken = errors.New("port taken")

// launch starts the server on a fresh free port and waits until it is ready. A server that exits
// because the port was taken returns an error wrapping errPortTaken.
func (s *Server) launch(ctx context.Context, bin, datadir, tmpdir, logPath string, isMySQL bool, opts Options) error {
	port, err := pickPort()
	if err != nil {
		return err
	}
	s.Port = port
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := []string{
		"--no-defaults",
		"--datadir=" + datadir,
		"--port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		"--socket=" + filepath.Join(s.Dir, "sock"),
		"--tmpdir=" + tmpdir,
		"--user=root",
		"--init-file=" + filepath.Join(s.Dir, initFile), // root's password, set before any connection
		"--innodb-flush-log-at-trx-commit=2",
		"--max-connections=10000", // a run of a thousand dedicated tenants holds a few per tenant DB and pod
		"--skip-name-resolve",
	}
	if isMySQL {
		args = append(args, "--mysqlx=OFF", "--pid-file="+filepath.Join(s.Dir, "pid"))
	}
	args = append(args, opts.ExtraArgs...)
	// The log may be in a run directory other local users can write to: never append through a link.
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("dbserver: log %s is a symbolic link; the server's log is not written through links", logPath)
	}
	if err != nil {
		return err
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, io.SeekEnd)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("dbserver: start %s: %w", bin, err)
	}
	s.cmd = cmd
	done := s.done
	go func() { s.waitErr = cmd.Wait(); close(done) }()

	deadline := time.Now().Add(opts.ReadyTimeout)
	for {
		err := s.ping(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-done:
			all, _ := os.ReadFile(logPath)
			if int64(len(all)) >= logStart {
				all = all[logStart:]
			}
			tail := lastLines(string(all), 15)
			if strings.Contains(tail, "Address already in use") {
				return fmt.Errorf("dbserver: %s: port %d: %w", bin, port, errPortTaken)
			}
			return fmt.Errorf("dbserver: %s exited before it was ready: %v\n%s", bin, s.waitErr, tail)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dbserver: %s not ready after %v: %v (log %s)", bin, opts.ReadyTimeout, err, logPath)
		}
	}
}

func (s *Server) ping(ctx context.Context) error {
	db, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		return err
	}
	defer db.Close()
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return db.PingContext(pctx)
}

// DSN returns a go-sql-driver DSN for database db (empty: none) on this server, with root's password.
func (s *Server) DSN(db string) string { return s.DSNAt(s.Addr, db) }

// UserDSN is the server as a user would type it for seqgate run --dsn: root, its password and the
// address, no database and no driver settings.
func (s *Server) UserDSN() string { return "root:" + s.password + "@tcp(" + s.Addr + ")/" }

// DSNAt is DSN for a proxy listening on addr in front of this server (toxiproxy): the same
// credentials, another address.
func (s *Server) DSNAt(addr, db string) string {
	c, _ := mysql.ParseDSN(DSNFor(addr, db)) // DSNFor's output always parses
	c.Passwd = s.password
	return c.FormatDSN()
}

// Pid returns the server process's id (benchmarks read its CPU time from /proc).
func (s *Server) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// DSNFor returns a go-sql-driver DSN for root without a password on addr with the settings seqgate
// relies on (interpolated parameters: one round trip per statement). A Server of this package
// refuses it: use Server.DSN or Server.DSNAt, which carry root's password.
func DSNFor(addr, db string) string {
	c := mysql.NewConfig()
	c.User = "root"
	c.Net = "tcp"
	c.Addr = addr
	c.DBName = db
	c.InterpolateParams = true
	c.ParseTime = true
	c.Timeout = 5 * time.Second
	return c.FormatDSN()
}

// Stop terminates the server (SIGTERM, then SIGKILL after 10 s) and removes its directory.
// It is safe to call more than once.
func (s *Server) Stop() error {
	s.once.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
				<-s.done
			}
		}
		if s.Dir != "" {
			s.stopErr = os.RemoveAll(s.Dir)
		}
	})
	return s.stopErr
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// writeNew creates path, which must not exist (not even as a symbolic link), and writes data to it.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
