package infra

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

// DockerImage is the server image --infra docker runs (the MariaDB that Debian ships, so runs compare).
const DockerImage, DockerTag = "mariadb", "10.11"

// container is a database server in a Docker container, removed by stop.
type container struct {
	pool *dockertest.Pool
	res  *dockertest.Resource
}

// startDocker runs a throwaway MariaDB container published on a random loopback port and waits until
// it accepts connections. The container also expires on its own after an hour, in case this process
// dies before it can remove it.
func startDocker(ctx context.Context) (*container, *mysql.Config, error) {
	pool, err := dockertest.NewPool("")
	if err == nil {
		err = pool.Client.Ping()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--infra docker: no Docker daemon answers (%v); start one, or use the default private server (mariadbd on PATH) or --dsn", err)
	}
	res, err := pool.RunWithOptions(&dockertest.RunOptions{
		Repository: DockerImage, Tag: DockerTag,
		Env:          []string{"MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1"},
		Cmd:          []string{"--innodb-flush-log-at-trx-commit=2", "--max-connections=2000", "--skip-name-resolve"},
		ExposedPorts: []string{"3306/tcp"},
		PortBindings: map[dc.Port][]dc.PortBinding{"3306/tcp": {{HostIP: "127.0.0.1", HostPort: ""}}},
	}, func(hc *dc.HostConfig) {
		hc.AutoRemove = true
		hc.RestartPolicy = dc.RestartPolicy{Name: "no"}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("--infra docker: run %s:%s: %w", DockerImage, DockerTag, err)
	}
	c := &container{pool: pool, res: res}
	_ = res.Expire(3600)
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", res.GetHostPort("3306/tcp")
	pool.MaxWait = 2 * time.Minute
	err = pool.Retry(func() error {
		if ctx.Err() != nil {
			return nil // stop retrying; reported below
		}
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			return err
		}
		defer db.Close()
		return db.PingContext(ctx)
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		c.stop()
		return nil, nil, fmt.Errorf("--infra docker: %s:%s not ready: %w", DockerImage, DockerTag, err)
	}
	return c, cfg, nil
}

func (c *container) stop() error { return c.pool.Purge(c.res) }
