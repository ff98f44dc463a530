// Package infra provides the MySQL-compatible server a run keeps its databases on: a private,
// throwaway server started from mariadbd/mysqld on PATH (the default), a throwaway MariaDB container
// (dockertest, when a Docker daemon answers), or an existing one given by a DSN. It creates the run's databases (meta, tenant_<n>, shared_pool) and hands out DSNs for them,
// direct (for the harness's own audit) or through a proxy address (for the pods).
package infra

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/internal/dbserver"
)

// Kinds of infrastructure.
const (
	Private = "private" // a private server started from the binary on PATH
	Docker  = "docker"  // a server in a Docker container
	DSN     = "dsn"     // an existing server
)

// Options choose the server.
type Options struct {
	Infra   string // Private (default) or Docker; ignored when DSN is set
	DSN     string // an existing server (any database name in it is ignored)
	LogPath string // the private server's log
	// Prefix is prepended to every database name, so runs against a shared server do not collide.
	Prefix string
}

// DB is the run's server.
type DB struct {
	Kind   string
	Addr   string // host:port of the server itself
	prefix string
	base   *mysql.Config
	srv    *dbserver.Server
	docker *container
	admin  *sql.DB
}

// ErrNoServer explains how to get a server when there is none.
var ErrNoServer = errors.New("no database server: install a MySQL-compatible server binary (Debian/Ubuntu: apt-get install -y mariadb-server; it provides mariadbd) or pass --dsn 'user:pass@tcp(host:3306)/' for an existing MySQL 8 / MariaDB / TiDB")

// ServerPID is the process id of the private server this run started (0 for any other kind).
func (d *DB) ServerPID() int {
	if d.srv == nil {
		return 0
	}
	return d.srv.Pid()
}

// ParseDSN parses an existing server's DSN as --dsn takes it: a go-sql-driver DSN of a tcp(host:port)
// server (the run puts proxies in front of it). The error names the flag and the DSN.
func ParseDSN(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("--dsn %q: %w", dsn, err)
	}
	if cfg.Net != "tcp" {
		return nil, fmt.Errorf("--dsn %q: only tcp(host:port) servers can be proxied, not %s", dsn, cfg.Net)
	}
	return cfg, nil
}

// Open starts or connects to the server.
func Open(ctx context.Context, o Options) (*DB, error) {
	d := &DB{prefix: o.Prefix}
	switch {
	case o.DSN != "":
		cfg, err := ParseDSN(o.DSN)
		if err != nil {
			return nil, err
		}
		d.Kind, d.Addr, d.base = DSN, cfg.Addr, cfg
	case o.Infra == Docker:
		c, cfg, err := startDocker(ctx)
		if err != nil {
			return nil, err
		}
		d.Kind, d.Addr, d.base, d.docker = Docker, cfg.Addr, cfg, c
	case o.Infra == "" || o.Infra == Private:
		if _, err := dbserver.FindBinary(); err != nil {
			return nil, ErrNoServer
		}
		srv, err := dbserver.Start(ctx, dbserver.Options{LogPath: o.LogPath})
		if err != nil {
			return nil, err
		}
		cfg, _ := mysql.ParseDSN(srv.DSN(""))
		d.Kind, d.Addr, d.base, d.srv = Private, srv.Addr, cfg, srv
	default:
		return nil, fmt.Errorf("--infra %q: unknown (allowed: private, docker)", o.Infra)
	}
	admin, err := sql.Open("mysql", d.DirectDSN(""))
	if err != nil {
		d.Close()
		return nil, err
	}
	d.admin = admin
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := admin.PingContext(pctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("database server %s: %w", d.Addr, err)
	}
	return d, nil
}

// Name returns the real database name for a logical one (meta, tenant_3, shared_pool).
func (d *DB) Name(logical string) string { return d.prefix + logical }

// DirectDSN is a DSN for the logical database on the server itself (no proxy).
func (d *DB) DirectDSN(logical string) string { return d.dsnAt(d.Addr, logical) }

// ProxiedDSN is a DSN for the logical database through the proxy listening on addr.
func (d *DB) ProxiedDSN(addr, logical string) string { return d.dsnAt(addr, logical) }

func (d *DB) dsnAt(addr, logical string) string {
	c := d.base.Clone()
	c.Addr = addr
	c.DBName = ""
	if logical != "" {
		c.DBName = d.Name(logical)
	}
	c.InterpolateParams = true
	c.ParseTime = true
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Second
	}
	return c.FormatDSN()
}

// Create creates the logical databases (IF NOT EXISTS).
func (d *DB) Create(ctx context.Context, logical ...string) error {
	for _, l := range logical {
		if _, err := d.admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+d.Name(l)+"`"); err != nil {
			return fmt.Errorf("create database %s: %w", d.Name(l), err)
		}
	}
	return nil
}

// Drop drops the logical databases (used for runs on an existing server; a private one is removed whole).
func (d *DB) Drop(ctx context.Context, logical ...string) error {
	var errs []error
	for _, l := range logical {
		if _, err := d.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+d.Name(l)+"`"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// DropNamed drops databases by their real names (ones a service the run started created for the
// run's tenants), IF EXISTS.
func (d *DB) DropNamed(ctx context.Context, names ...string) error {
	var errs []error
	for _, n := range names {
		if strings.ContainsAny(n, "`\x00") {
			errs = append(errs, fmt.Errorf("drop database %q: not a database name", n))
			continue
		}
		if _, err := d.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+n+"`"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close disconnects and, for a private server, stops it and removes its files.
func (d *DB) Close() error {
	if d.admin != nil {
		d.admin.Close()
	}
	if d.srv != nil {
		return d.srv.Stop()
	}
	if d.docker != nil {
		return d.docker.stop()
	}
	return nil
}

// LogPath is where the private server logs (empty for other kinds).
func (d *DB) LogPath() string {
	if d.srv == nil {
		return ""
	}
	return filepath.Join(d.srv.Dir, "server.log")
}
