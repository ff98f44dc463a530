package dbserver

import (
	"context"
	"database/sql"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
	// Temporary tables go to the server's own directory (removed with it), not the shared /tmp.
	var tmp string
	if err := db.QueryRow("SELECT @@tmpdir").Scan(&tmp); err != nil || tmp != filepath.Join(s.Dir, "tmp") {
		t.Fatalf("tmpdir %q (%v), want %s", tmp, err, filepath.Join(s.Dir, "tmp"))
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

// A directory left by a process that died before Stop (its owner pid is gone) is removed by the next
// Start; one whose owner lives, or that has no owner file, is kept.
func TestRemoveStale(t *testing.T) {
	tmp := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name, owner string) string {
		d := filepath.Join(tmp, dirPrefix+name)
		if err := os.MkdirAll(filepath.Join(d, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(owner), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	gone := mk("gone", strconv.Itoa(dead.ProcessState.Pid()))
	alive := mk("alive", strconv.Itoa(os.Getpid()))
	unowned := mk("unowned", "")
	removeStale(tmp)
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("%s of a dead owner survived: %v", gone, err)
	}
	for _, d := range []string{alive, unowned} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

// TestStartRefusesLogLink: a server log path that is a symbolic link is refused, named, before any
// server starts, and the file it points to is untouched; the temp directory is removed. The control,
// a regular log file, gets past the log (the stand-in binary then fails the readiness wait).
func TestStartRefusesLogLink(t *testing.T) {
	for _, link := range []bool{true, false} {
		dir := t.TempDir()
		victim, logPath := filepath.Join(dir, "victim"), filepath.Join(dir, "db.log")
		if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
		if link {
			if err := os.Symlink(victim, logPath); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Start(context.Background(), Options{Binary: "/bin/false", LogPath: logPath, ReadyTimeout: 2 * time.Second})
		if b, _ := os.ReadFile(victim); string(b) != "precious" {
			t.Fatalf("link %v: the file the log link pointed to was written: %q", link, b)
		}
		isLinkErr := err != nil && strings.Contains(err.Error(), logPath+" is a symbolic link")
		if isLinkErr != link || err == nil {
			t.Errorf("link %v: Start = %v, want the link refused exactly when there is one (and /bin/false to fail anyway)", link, err)
		}
		if fi, err := os.Lstat(logPath); !link && (err != nil || !fi.Mode().IsRegular()) {
			t.Errorf("control: log %s not created as a regular file: %v", logPath, err)
		}
	}
}

// TestStartRetriesATakenPort: the port Start picked is bound by someone else before the server binds
// it (here: on purpose, every time for the first pick); Start tries another port instead of failing.
// The control: with every pick taken, Start gives up after portAttempts and names the cause.
func TestStartRetriesATakenPort(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	takenPort := held.Addr().(*net.TCPAddr).Port
	defer func() { pickPort = FreePort }()

	for _, tc := range []struct {
		name   string
		taken  int // how many picks return the held port
		wantOK bool
	}{
		{"first pick taken", 1, true},
		{"every pick taken", portAttempts, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			picks := 0
			pickPort = func() (int, error) {
				picks++
				if picks <= tc.taken {
					return takenPort, nil
				}
				return FreePort()
			}
			s, err := Start(context.Background(), Options{})
			if !tc.wantOK {
				if err == nil {
					s.Stop()
					t.Fatal("Start succeeded with every port taken")
				}
				if !strings.Contains(err.Error(), "port taken") || picks != portAttempts {
					t.Fatalf("err %v after %d picks, want a port-taken error after %d", err, picks, portAttempts)
				}
				return
			}
			if err != nil {
				t.Fatalf("Start: %v (picks %d)", err, picks)
			}
			defer s.Stop()
			if s.Port == takenPort || picks != tc.taken+1 {
				t.Fatalf("server on port %d after %d picks (taken %d)", s.Port, picks, takenPort)
			}
			db, err := sql.Open("mysql", s.DSN(""))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Ping(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
