package dbserver

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStartQueryStop(t *testing.T) {
	s, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE DATABASE t1"); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := db.QueryRow("SELECT VERSION()").Scan(&v); err != nil || v == "" {
		t.Fatalf("version %q: %v", v, err)
	}
	db.Close()
	dir := s.Dir
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("datadir %s survived Stop: %v", dir, err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestStartBadBinary(t *testing.T) {
	_, err := Start(context.Background(), Options{Binary: "/bin/false"})
	if err == nil {
		t.Fatal("expected an error from a binary that exits at once")
	}
}
