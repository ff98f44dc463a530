package infra

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/internal/dbserver"
)

func TestPrivateAndDSN(t *testing.T) {
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip("no mariadbd/mysqld on PATH:", err)
	}
	ctx := context.Background()
	d, err := Open(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Kind != Private {
		t.Errorf("kind %s", d.Kind)
	}
	if err := d.Create(ctx, "meta", "tenant_1"); err != nil {
		t.Fatal(err)
	}
	// The same server reached as an existing one: names are prefixed, so two runs do not collide.
	e, err := Open(ctx, Options{DSN: d.DirectDSN(""), Prefix: "sgx_"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Create(ctx, "meta"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", e.ProxiedDSN(e.Addr, "meta"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var name string
	if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&name); err != nil || name != "sgx_meta" {
		t.Errorf("database = %q, %v; want sgx_meta", name, err)
	}
	if err := e.Drop(ctx, "meta"); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"unknown infra", Options{Infra: "k8s"}, "allowed: private, docker"},
		{"bad dsn", Options{DSN: "::nonsense"}, "--dsn"},
		{"unix dsn", Options{DSN: "root@unix(/tmp/x.sock)/"}, "only tcp"},
		{"docker", Options{Infra: Docker}, "--infra docker"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(context.Background(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
