package store_test

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// The two ways a DSN slipped a multibyte charset past the DSN-level check: a key the check did not
// look at, and a SET hidden in another variable's value (the driver sends "SET k = v" raw).
const (
	bypassAtAt   = "&@@character_set_client=gbk"
	bypassHidden = "&time_zone=%27%2B00%3A00%27%2C%20character_set_client%3Dgbk"
)

func TestCheckDSN(t *testing.T) {
	base := srvDSN("x")
	for _, tc := range []struct {
		name, dsn string
		wantParam string // "" = accepted; else the parameter the error must name
	}{
		{"test server's own DSN", base, ""},
		{"session variable", base + "&innodb_lock_wait_timeout=1", ""},
		{"quoted time zone", base + "&time_zone=%27%2B00%3A00%27", ""},
		{"named time zone", base + "&time_zone=%27Europe%2FBerlin%27", ""},
		{"gbk charset (served by prepared statements)", base + "&charset=gbk", ""},
		{"collation", base + "&collation=utf8mb4_unicode_ci", ""},
		{"@@ key", base + bypassAtAt, "@@character_set_client"},
		{"SET hidden in a value", base + bypassHidden, "time_zone"},
		{"unlisted variable", base + "&sql_mode=ANSI_QUOTES", "sql_mode"},
		{"multiStatements", base + "&multiStatements=true", "multiStatements"},
		{"allowAllFiles", base + "&allowAllFiles=true", "allowAllFiles"},
		{"charset with a SET in it", base + "&charset=gbk%3Bx", "charset"},
		{"number with a comma", base + "&innodb_lock_wait_timeout=1%2Ccharacter_set_client%3Dgbk", "innodb_lock_wait_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := store.CheckDSN(tc.dsn)
			if tc.wantParam == "" {
				if err != nil {
					t.Fatalf("CheckDSN(%q): %v, want accepted", tc.dsn, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantParam) {
				t.Fatalf("CheckDSN(%q) = %v, want a refusal naming %q", tc.dsn, err, tc.wantParam)
			}
			specs := []store.PoolSpec{{ID: "p", Role: store.RoleShared, DSN: tc.dsn}}
			if err := store.CheckPools(specs); err == nil || !strings.Contains(err.Error(), "pools[0].dsn") {
				t.Fatalf("CheckPools accepted the pool: %v", err)
			}
		})
	}
}

// FuzzCheckDSN: a DSN CheckDSN accepts parses, and every parameter the driver would send to the
// server as "SET k = v" is an allowed session variable whose value holds no separator a second SET
// could hide behind.
func FuzzCheckDSN(f *testing.F) {
	for _, s := range []string{srvDSNForFuzz + bypassAtAt, srvDSNForFuzz + bypassHidden, srvDSNForFuzz + "&time_zone=%27%2B00%3A00%27",
		"u:p@tcp(h:1)/d?innodb_lock_wait_timeout=5", "u@/d?charset=gbk,utf8", "a/b?c/d?x=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		if store.CheckDSN(dsn) != nil {
			return
		}
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("accepted an unparseable DSN %q: %v", dsn, err)
		}
		if cfg.MultiStatements || cfg.AllowAllFiles {
			t.Fatalf("accepted %q with multiStatements or allowAllFiles", dsn)
		}
		for k, v := range cfg.Params {
			if strings.ContainsAny(k, "@ ,;=()'\"`\\") || strings.ContainsAny(v, ",; =()\"`\\") {
				t.Fatalf("accepted %q: the driver would send SET %s = %s", dsn, k, v)
			}
		}
		if strings.ContainsAny(cfg.Collation, ",; ='\"") {
			t.Fatalf("accepted collation %q", cfg.Collation)
		}
	})
}

const srvDSNForFuzz = "root@tcp(127.0.0.1:3306)/db?parseTime=true"

// injects runs the cross-tenant attack of TestGBKPoolNoCrossTenantInjection through db (tenant A)
// against tenant B (on setup, a handle without interpolation) and reports whether A wrote into B's
// tree or read B's file.
func injects(t *testing.T, ctx context.Context, db, setup *sql.DB) bool {
	t.Helper()
	hx := func(s string) string { return "0x" + hex.EncodeToString([]byte(s)) }
	writePayload := fmt.Sprintf("/x\xBF', 0, 420, 1, NULL, NOW()), (%s, %s, 0, 420, 1, %s, NOW()) -- ", hx("B"), hx("/planted"), hx("pwn"))
	readPayload := fmt.Sprintf("/y\xBF' OR tenant_id = %s AND path = %s -- ", hx("B"), hx("/secret"))
	a := &store.TenantStore{DB: db, TenantID: "A", Shared: true}
	b := &store.TenantStore{DB: setup, TenantID: "B", Shared: true}
	if _, err := b.WriteFile(ctx, "/secret", []byte("b-secret")); err != nil {
		t.Fatal(err)
	}
	_ = a.Create(ctx, writePayload)
	_, perr := b.ReadFile(ctx, "/planted")
	f, rerr := a.ReadFile(ctx, readPayload)
	return perr == nil || (rerr == nil && string(f.Content) == "b-secret")
}

// gbkDatabase creates a migrated database for a shared pool and returns its DSN (parameters
// appendable) and a setup handle without interpolation.
func gbkDatabase(t *testing.T, ctx context.Context) (string, *sql.DB) {
	t.Helper()
	dsn := srv.DSN(fmt.Sprintf("cs%d", n.Add(1)))
	setup, err := store.OpenDB(ctx, dsn+"&charset=gbk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { setup.Close() })
	if err := store.MigrateTenant(ctx, setup); err != nil {
		t.Fatal(err)
	}
	return dsn, setup
}

// TestConnectionCharsetDecides: each bypass DSN really puts the connection in GBK (the control: the
// driver opened as before, with interpolation, lets tenant A write into B's tree and read B's file).
// Opened by the pools, whose DSN-level check it fools, the server's answer on the connection decides:
// the handle falls back to server-side prepared statements and the attack fails, and the write-group
// handle (several statements per query) refuses the connection. An honest utf8mb4 DSN keeps its
// interpolation and its group handle; a charset=gbk pool keeps the prepared-statement path.
func TestConnectionCharsetDecides(t *testing.T) {
	ctx := testCtx(t)
	for _, bypass := range []string{bypassAtAt, bypassHidden} {
		t.Run(strings.TrimPrefix(bypass, "&")[:12], func(t *testing.T) {
			dsn, setup := gbkDatabase(t, ctx)
			bad := dsn + bypass
			if err := store.CheckDSN(bad); err == nil {
				t.Fatalf("CheckDSN accepted %q", bad)
			}
			if ok, why := store.InterpolationSafe(bad); !ok {
				t.Fatalf("the DSN-level check sees the bypass (%s): the test no longer needs the connection check", why)
			}
			raw, err := sql.Open("mysql", bad)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			var cs string
			if err := raw.QueryRowContext(ctx, "SELECT @@character_set_client").Scan(&cs); err != nil || cs != "gbk" {
				t.Fatalf("control: the bypass DSN gives character_set_client %q (%v), want gbk", cs, err)
			}
			if !injects(t, ctx, raw, setup) {
				t.Fatal("control: the attack fails through the driver's interpolation; the test cannot see it")
			}

			dsn, setup = gbkDatabase(t, ctx) // a fresh pair of tenants: the control planted a file in B
			bad = dsn + bypass
			var unsafe atomic.Bool
			db, err := store.OpenTunedForTest(bad, false, &unsafe)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if injects(t, ctx, db, setup) {
				t.Fatal("the pools' handle let tenant A into B's rows")
			}
			if !unsafe.Load() {
				t.Fatal("the connection check did not record the GBK connection")
			}
			g, err := store.OpenTunedForTest(bad, true, &atomic.Bool{})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if err := g.PingContext(ctx); !errors.Is(err, store.ErrUnsafeCharset) {
				t.Fatalf("the group handle connected in GBK: %v, want ErrUnsafeCharset", err)
			}
		})
	}
	t.Run("honest DSNs", func(t *testing.T) {
		for _, tc := range []struct {
			suffix    string
			wantGroup bool
		}{
			{"&innodb_lock_wait_timeout=5&time_zone=" + url.QueryEscape("'+00:00'"), true},
			{"&charset=gbk", false},
		} {
			dsn, setup := gbkDatabase(t, ctx)
			id := "p"
			pools := store.NewPools([]store.PoolSpec{{ID: id, Role: store.RoleShared, DSN: dsn + tc.suffix}}, store.PoolOptions{})
			if err := store.CheckPools(pools.Specs()); err != nil {
				t.Fatalf("%s: %v", tc.suffix, err)
			}
			db, err := pools.Acquire(ctx, id)
			if err != nil {
				t.Fatalf("%s: %v", tc.suffix, err)
			}
			if injects(t, ctx, db, setup) {
				t.Fatalf("%s: tenant A reached B's rows", tc.suffix)
			}
			a := &store.TenantStore{DB: db, TenantID: "A", Shared: true}
			if _, err := a.WriteFile(ctx, "/honest", []byte("ok")); err != nil {
				t.Fatalf("%s: write: %v", tc.suffix, err)
			}
			g, err := pools.AcquireGroup(ctx, id)
			if err != nil || (g != nil) != tc.wantGroup {
				t.Fatalf("%s: group handle %v (%v), want one: %v", tc.suffix, g != nil, err, tc.wantGroup)
			}
			if g != nil {
				if err := g.PingContext(ctx); err != nil {
					t.Fatalf("%s: the group handle refuses an honest connection: %v", tc.suffix, err)
				}
			}
			pools.Close()
		}
	})
}
