package dbserver

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestGrantsRefuseOthers: the private server lets in only the Server's own DSNs. Without the password
// (what another local user who finds the port would try), with a wrong one, as another user, or
// over the socket without it, the server answers access denied (1045); the Server's DSN works (the
// honest case), and the password is neither on the server's command line nor readable by others.
func TestGrantsRefuseOthers(t *testing.T) {
	s, err := Start(context.Background(), Options{})
	if errors.Is(err, ErrNoServerBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	wrong, _ := mysql.ParseDSN(s.DSN(""))
	wrong.Passwd = "guess"
	other, _ := mysql.ParseDSN(DSNFor(s.Addr, ""))
	other.User = "nobody"
	sock := mysql.NewConfig()
	sock.User, sock.Net, sock.Addr = "root", "unix", filepath.Join(s.Dir, "sock")
	cases := []struct {
		name   string
		dsn    string
		denied bool
	}{
		{"the Server's DSN", s.DSN(""), false},
		{"the Server's DSN for a database", s.DSNAt(s.Addr, "mysql"), false},
		{"root without a password", DSNFor(s.Addr, ""), true},
		{"root with a wrong password", wrong.FormatDSN(), true},
		{"another user without a password", other.FormatDSN(), true},
		{"root on the socket without a password", sock.FormatDSN(), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, err := sql.Open("mysql", tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var n int
			err = db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA").Scan(&n)
			var me *mysql.MySQLError
			switch {
			case tc.denied && !(errors.As(err, &me) && me.Number == 1045):
				t.Errorf("listed %d databases (err %v), want access denied (1045)", n, err)
			case !tc.denied && (err != nil || n == 0):
				t.Errorf("listed %d databases: %v", n, err)
			}
		})
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(s.Pid()) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), s.password) {
		t.Errorf("the server's command line carries the password: %q", cmdline)
	}
	for path, want := range map[string]os.FileMode{s.Dir: 0o700, filepath.Join(s.Dir, initFile): 0o600} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, st.Mode().Perm(), err, want)
		}
	}
}
