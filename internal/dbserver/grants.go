package dbserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// newPassword returns root's password for one server: 128 random bits in hex (no character that a
// DSN or SQL string would need escaped).
func newPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// initialize creates the grant tables in the empty datadir: mariadb-install-db for MariaDB (with
// root's normal password authentication, so that the init file can set a password), mysqld
// --initialize-insecure for MySQL 8. Root has no password until the server runs the init file,
// which it does before it accepts any connection.
func initialize(ctx context.Context, bin, datadir string, isMySQL bool) error {
	var cmd *exec.Cmd
	if isMySQL {
		cmd = exec.CommandContext(ctx, bin, "--no-defaults", "--initialize-insecure", "--datadir="+datadir, "--user=root")
	} else {
		inst, err := findInstallDB(bin)
		if err != nil {
			return err
		}
		cmd = exec.CommandContext(ctx, inst, "--no-defaults", "--datadir="+datadir, "--user=root",
			"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("dbserver: %s: %v\n%s", cmd.Path, err, lastLines(string(out), 15))
	}
	return nil
}

// findInstallDB finds mariadb-install-db (or its old name mysql_install_db): beside the server
// binary, on PATH, or in /usr/bin.
func findInstallDB(bin string) (string, error) {
	for _, name := range []string{"mariadb-install-db", "mysql_install_db"} {
		for _, dir := range []string{filepath.Dir(bin), filepath.Join(filepath.Dir(bin), "..", "scripts"), "/usr/bin"} {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("dbserver: no mariadb-install-db beside %s or on PATH: it creates the grant tables the private server checks (Debian: apt-get install -y mariadb-server)", bin)
}

// grantSQL is the init file: only root remains, at localhost (the socket) and 127.0.0.1 (TCP:
// clients and proxies), both with password pw. Every other account the install made (anonymous
// users, root at the host's name) is removed, so that no account without the password is left.
// It runs at every start of the server, so each statement may run twice.
func grantSQL(pw string, isMySQL bool) string {
	drop := "DELETE FROM mysql.global_priv WHERE NOT ((User = 'root' AND Host = 'localhost') OR User = 'mariadb.sys');\nFLUSH PRIVILEGES;\n"
	if isMySQL {
		drop = "DELETE FROM mysql.user WHERE NOT ((User = 'root' AND Host = 'localhost') OR User LIKE 'mysql.%');\nFLUSH PRIVILEGES;\n"
	}
	return drop +
		fmt.Sprintf("ALTER USER 'root'@'localhost' IDENTIFIED BY '%s';\n", pw) +
		fmt.Sprintf("CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '%s';\n", pw) +
		fmt.Sprintf("ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '%s';\n", pw) +
		"GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n"
}
