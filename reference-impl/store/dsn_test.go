package store_test

import (
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/reference-impl/store"
)

func TestInterpolationSafe(t *testing.T) {
	base := srvDSN("x")
	for _, tc := range []struct {
		name, dsn string
		safe      bool
	}{
		{"driver default", base, true},
		{"utf8mb4", base + "&charset=utf8mb4", true},
		{"utf8 then latin1", base + "&charset=utf8,latin1", true},
		{"safe collation", base + "&collation=utf8mb4_unicode_ci", true},
		{"gbk", base + "&charset=gbk", false},
		{"GBK upper", base + "&charset=GBK", false},
		{"big5", base + "&charset=big5", false},
		{"sjis", base + "&charset=sjis", false},
		{"fallback list with gbk", base + "&charset=utf8mb4,gbk", false},
		{"gbk collation", base + "&collation=gbk_chinese_ci", false},
		{"cp932 collation", base + "&collation=cp932_japanese_ci", false},
		{"system variable", base + "&character_set_client=gbk", false},
		{"quoted system variable", base + "&character_set_connection=%27big5%27", false},
		{"collation variable", base + "&collation_connection=sjis_japanese_ci", false},
		{"safe system variable", base + "&character_set_client=utf8mb4", true},
		{"password with a slash and charset text", "root:p/a?charset=gbk@tcp(127.0.0.1:1)/db", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := store.InterpolationSafe(tc.dsn)
			if got != tc.safe {
				t.Fatalf("InterpolationSafe(%q) = %v (%s), want %v", tc.dsn, got, why, tc.safe)
			}
			if !got && why == "" {
				t.Fatalf("InterpolationSafe(%q): unsafe without a reason", tc.dsn)
			}
		})
	}
}

// srvDSN is the test server's DSN for database db, with parameters (so "&k=v" can be appended).
func srvDSN(db string) string { return srv.DSN(db) }

// TestGBKPoolNoCrossTenantInjection, on a real MariaDB: in a shared pool whose DSN
// says charset=gbk, tenant A's path "\xBF'..." must stay a path. The negative control opens the same
// pool with the driver's interpolation forced on (what eventlogd did before): there the very same
// calls write a file into tenant B's space and read B's file, so the test can see the attack.
func TestGBKPoolNoCrossTenantInjection(t *testing.T) {
	ctx := testCtx(t)
	hx := func(s string) string { return "0x" + hex.EncodeToString([]byte(s)) }
	// insertNew: VALUES ('A', '<path>', ...); \xBF' is escaped to \xBF\' and \xBF\ is one GBK char.
	writePayload := fmt.Sprintf("/x\xBF', 0, 420, 1, NULL, NOW()), (%s, %s, 0, 420, 1, %s, NOW()) -- ", hx("B"), hx("/planted"), hx("pwn"))
	// ReadFile: WHERE tenant_id = 'A' AND path = '<path>'.
	readPayload := fmt.Sprintf("/y\xBF' OR tenant_id = %s AND path = %s -- ", hx("B"), hx("/secret"))
	for _, tc := range []struct {
		name     string
		open     func(t *testing.T, dsn string) *sql.DB
		wantLeak bool
	}{
		{"store.OpenDB", func(t *testing.T, dsn string) *sql.DB {
			db, err := store.OpenDB(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			return db
		}, false},
		{"negative control: interpolation forced on", func(t *testing.T, dsn string) *sql.DB {
			db, err := sql.Open("mysql", dsn+"&interpolateParams=true&parseTime=true")
			if err != nil {
				t.Fatal(err)
			}
			return db
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("gbk%d", n.Add(1))
			dsn := srv.DSN(name) + "&charset=gbk"
			setup, err := store.OpenDB(ctx, dsn) // creates the database
			if err != nil {
				t.Fatal(err)
			}
			defer setup.Close()
			if err := store.MigrateTenant(ctx, setup); err != nil {
				t.Fatal(err)
			}
			var cs string
			db := tc.open(t, dsn)
			defer db.Close()
			if err := db.QueryRowContext(ctx, "SELECT @@character_set_client").Scan(&cs); err != nil || cs != "gbk" {
				t.Fatalf("connection charset = %q, %v; want gbk (the test needs a GBK pool)", cs, err)
			}
			a := &store.TenantStore{DB: db, TenantID: "A", Shared: true}
			b := &store.TenantStore{DB: setup, TenantID: "B", Shared: true}
			if _, err := b.WriteFile(ctx, "/secret", []byte("b-secret")); err != nil {
				t.Fatal(err)
			}
			werr := a.Create(ctx, writePayload)
			_, perr := b.ReadFile(ctx, "/planted")
			planted := perr == nil
			if !planted && !errors.Is(perr, store.ErrNoSuchPath) {
				t.Fatal(perr)
			}
			f, rerr := a.ReadFile(ctx, readPayload)
			read := rerr == nil && string(f.Content) == "b-secret"
			if planted != tc.wantLeak || read != tc.wantLeak {
				t.Fatalf("tenant A wrote into B: %v (create err %v); A read B's file: %v (read err %v); want %v", planted, werr, read, rerr, tc.wantLeak)
			}
			if !tc.wantLeak {
				// The path is data: A's own file exists under exactly that name, and A reads it back.
				if werr != nil {
					t.Fatalf("create %q: %v", writePayload, werr)
				}
				if _, err := a.ReadFile(ctx, writePayload); err != nil {
					t.Fatalf("A cannot read back its own path %q: %v", writePayload, err)
				}
				if !errors.Is(rerr, store.ErrNoSuchPath) {
					t.Fatalf("read %q: %v, want no such path", readPayload, rerr)
				}
			}
		})
	}
}

// FuzzInterpolationSafe: the decision never panics and survives the driver's own round trip of the
// DSN (ParseDSN then FormatDSN), so it judges the charset the driver will actually use.
func FuzzInterpolationSafe(f *testing.F) {
	for _, s := range []string{"root@tcp(127.0.0.1:3306)/db?charset=gbk", "u:p@tcp(h)/d?collation=big5_chinese_ci&x=1",
		"/d?character_set_client=sjis", "u@/d?charset=utf8mb4,latin1", "a/b?c/d?charset=gbk"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		safe, why := store.InterpolationSafe(dsn)
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			if safe {
				t.Fatalf("unparseable DSN %q judged safe", dsn)
			}
			return
		}
		if again, why2 := store.InterpolationSafe(cfg.FormatDSN()); again != safe {
			t.Fatalf("%q: %v (%s) but its canonical form %q: %v (%s)", dsn, safe, why, cfg.FormatDSN(), again, why2)
		}
	})
}
