package api_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"
	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/internal/dbserver"
)

// db is the one private MariaDB of this test package; every test makes its own databases on it.
var db *dbserver.Server

func TestMain(m *testing.M) {
	s, err := dbserver.Start(context.Background(), dbserver.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "api tests need a MySQL-compatible server binary:", err)
		os.Exit(1)
	}
	db = s
	_ = mysql.SetLogger(log.New(io.Discard, "", 0)) // proxies break connections on purpose
	code := m.Run()
	_ = s.Stop()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/go-sql-driver/mysql.(*mysqlConn).startWatcher.func1")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
