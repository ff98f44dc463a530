package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// metaSchema is the meta DB: tenants and their hashed keys, dedicated-pool claims, the signal plane
// (outbox, per-tenant head hints, per-pod cursors, pod registry) and the shared-pool maintenance claims. Only portable
// MySQL 8 / MariaDB / TiDB DDL: CREATE TABLE IF NOT EXISTS, no engine- or vendor-specific options.
var metaSchema = []string{
	`CREATE TABLE IF NOT EXISTS tenants (
		tenant_id VARCHAR(64) NOT NULL PRIMARY KEY,
		api_key_hash CHAR(64) NOT NULL,
		pool_id VARCHAR(64) NOT NULL,
		status VARCHAR(16) NOT NULL,
		created_at DATETIME(6) NOT NULL,
		UNIQUE KEY uk_tenants_key (api_key_hash)
	)`,
	`CREATE TABLE IF NOT EXISTS dedicated_pool_claims (
		pool_id VARCHAR(64) NOT NULL PRIMARY KEY,
		tenant_id VARCHAR(64) NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS tenant_notify_outbox (
		id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		tenant_id VARCHAR(64) NOT NULL,
		work VARCHAR(16) NOT NULL,
		pod_id VARCHAR(64) NOT NULL DEFAULT '',
		created_at DATETIME(6) NOT NULL,
		KEY idx_outbox_created (created_at)
	) /*T![auto_id_cache] AUTO_ID_CACHE=1 */`,
	// The one row every outbox transaction locks first, so outbox ids commit in id order (see
	// InsertNotifyHeadsTx); created here so that lock is a plain row lock, never a gap lock.
	`CREATE TABLE IF NOT EXISTS tenant_notify_outbox_order (
		id TINYINT NOT NULL PRIMARY KEY,
		n BIGINT NOT NULL
	)`,
	`INSERT IGNORE INTO tenant_notify_outbox_order (id, n) VALUES (1, 0)`,
	// The highest outbox id the prune gate may have deleted, raised before each delete: a poller
	// whose cursor is below it may have lost wakes (it was stalled past the cursor age bound, or swept
	// as a stale pod) and wakes every local stream to re-read (signal.Poller).
	`CREATE TABLE IF NOT EXISTS tenant_notify_outbox_prune_mark (
		id TINYINT NOT NULL PRIMARY KEY,
		pruned_through BIGINT NOT NULL
	)`,
	`INSERT IGNORE INTO tenant_notify_outbox_prune_mark (id, pruned_through) VALUES (1, 0)`,
	`CREATE TABLE IF NOT EXISTS tenant_seq_head (
		tenant_id VARCHAR(64) NOT NULL PRIMARY KEY,
		head BIGINT NOT NULL,
		updated_at DATETIME(6) NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS tenant_outbox_cursor (
		pod_id VARCHAR(64) NOT NULL PRIMARY KEY,
		last_id BIGINT NOT NULL,
		updated_at DATETIME(6) NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS pods (
		pod_id VARCHAR(64) NOT NULL PRIMARY KEY,
		started_at DATETIME(6) NOT NULL,
		heartbeat_at DATETIME(6) NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS pool_schema (
		pool_id VARCHAR(64) NOT NULL PRIMARY KEY,
		dsn_hash CHAR(64) NOT NULL,
		version INT NOT NULL,
		updated_at DATETIME(6) NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS shared_maintenance_state (
		name VARCHAR(128) NOT NULL PRIMARY KEY,
		last_run_at DATETIME(6) NOT NULL
	)`,
}

// TenantSchemaVersion names the tenant schema below; bump it whenever tenantSchema changes, so pods
// migrate pools that an older eventlogd recorded in pool_schema.
const TenantSchemaVersion = 4

// Version 2: fs_events.path is VARBINARY like files.path (it was a VARCHAR in the server's default
// charset, which refused non-ASCII paths the files table had accepted).
// Version 3: fs_events.src_path, the source of a rename or copy (the structural payload's old path).
// Version 4: fs_events.batch, the batch write an event belongs to (POST /v1/fs:batch-write).

// tenantSchema is the same in a dedicated and a shared tenant DB: every row is keyed by tenant_id.
// fs_event_seq_lock is the per-tenant row an event insert locks before it takes its AUTO_INCREMENT
// seq under --late-commit-guard lock, so a tenant's events commit in seq order (see InsertEvent and
// EventsPageLocked; the horizon guard leaves it unused). fs_events_sweep_mark remembers the
// highest seq a sweep deleted, which is what makes seq_too_old exact even though seq has holes.
// The /*T![auto_id_cache] ...*/ comment is TiDB's feature-gated syntax (an ordinary comment to MySQL
// and MariaDB): TiDB then hands out fs_events ids from one counter, in order, across TiDB servers,
// which the in-order commit argument needs.
var tenantSchema = []string{
	`CREATE TABLE IF NOT EXISTS fs_events (
		seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		tenant_id VARCHAR(64) NOT NULL,
		path VARBINARY(1024) NOT NULL,
		op VARCHAR(32) NOT NULL,
		actor VARCHAR(64) NOT NULL DEFAULT '',
		created_at DATETIME(6) NOT NULL,
		src_path VARBINARY(1024) NOT NULL DEFAULT '',
		batch VARCHAR(64) NOT NULL DEFAULT '',
		KEY idx_fs_events_tenant_seq (tenant_id, seq),
		KEY idx_fs_events_created (created_at)
	) /*T![auto_id_cache] AUTO_ID_CACHE=1 */`,
	`CREATE TABLE IF NOT EXISTS fs_event_seq_lock (
		tenant_id VARCHAR(64) NOT NULL PRIMARY KEY,
		n BIGINT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS fs_events_sweep_mark (
		tenant_id VARCHAR(64) NOT NULL PRIMARY KEY,
		swept_through BIGINT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS files (
		tenant_id VARCHAR(64) NOT NULL,
		path VARBINARY(1024) NOT NULL,
		is_dir TINYINT NOT NULL,
		mode INT NOT NULL,
		revision BIGINT NOT NULL,
		content MEDIUMBLOB,
		updated_at DATETIME(6) NOT NULL,
		PRIMARY KEY (tenant_id, path)
	)`,
}

// metaColumns are columns added after a table's first version: MigrateMeta adds them to tables
// created by an older eventlogd.
var metaColumns = []column{
	{"tenant_notify_outbox", "pod_id", "VARCHAR(64) NOT NULL DEFAULT ''"},
}

// MigrateMeta creates the meta schema if it is missing and adds missing columns; it is idempotent
// and safe to run from several pods at once.
func MigrateMeta(ctx context.Context, db *sql.DB) error {
	if err := migrate(ctx, db, metaSchema); err != nil {
		return err
	}
	return addColumns(ctx, db, metaColumns)
}

// column is one column added to an existing table: its table, name and definition.
type column struct{ table, column, def string }

// addColumns adds every missing column of cols; safe from several pods at once.
func addColumns(ctx context.Context, db *sql.DB, cols []column) error {
	for _, c := range cols {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?`,
			c.table, c.column).Scan(&n); err != nil {
			return fmt.Errorf("schema: %w", err)
		}
		if n > 0 {
			continue
		}
		_, err := db.ExecContext(ctx, "ALTER TABLE "+c.table+" ADD COLUMN "+c.column+" "+c.def)
		var me *mysql.MySQLError
		if err != nil && !(errors.As(err, &me) && me.Number == 1060) { // another pod added it first
			return fmt.Errorf("schema: add %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}

// tenantColumns are columns added after a table's first version: MigrateTenant adds them to tables
// created by an older eventlogd.
var tenantColumns = []column{
	{"fs_events", "src_path", "VARBINARY(1024) NOT NULL DEFAULT ''"},
	{"fs_events", "batch", "VARCHAR(64) NOT NULL DEFAULT ''"}, // the batch write that produced the event
}

// tenantColumnTypes are column types changed after a table's first version: MigrateTenant
// modifies a column whose DATA_TYPE differs.
var tenantColumnTypes = []struct{ table, column, dataType, def string }{
	// Both path columns binary-safe: an event path is byte for byte the file's path.
	{"fs_events", "path", "varbinary", "VARBINARY(1024) NOT NULL"},
}

// MigrateTenant creates the tenant schema if it is missing and brings changed column types up to
// date; it is idempotent and safe to run from several pods at once.
func MigrateTenant(ctx context.Context, db *sql.DB) error {
	if err := migrate(ctx, db, tenantSchema); err != nil {
		return err
	}
	if err := addColumns(ctx, db, tenantColumns); err != nil {
		return err
	}
	for _, c := range tenantColumnTypes {
		var typ string
		if err := db.QueryRowContext(ctx, `SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?`,
			c.table, c.column).Scan(&typ); err != nil {
			return fmt.Errorf("schema: %s.%s: %w", c.table, c.column, err)
		}
		if strings.EqualFold(typ, c.dataType) {
			continue
		}
		if _, err := db.ExecContext(ctx, "ALTER TABLE "+c.table+" MODIFY COLUMN "+c.column+" "+c.def); err != nil {
			return fmt.Errorf("schema: change %s.%s to %s: %w", c.table, c.column, c.def, err)
		}
	}
	return nil
}

func migrate(ctx context.Context, db *sql.DB, stmts []string) error {
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("schema: %w", err)
		}
	}
	return nil
}

// OpenDB opens dsn, creating its database first when the server says it does not exist, and
// checks it with a ping. The DSN names the database; its settings are kept except parseTime, which
// is always on, and interpolateParams, which is on exactly when the DSN's connection charset is
// known safe for it (InterpolationSafe).
func OpenDB(ctx context.Context, dsn string) (*sql.DB, error) {
	return openDB(ctx, dsn, nil)
}

// openDB is OpenDB with the pool's charset finding (unsafe: see checkedConnector; nil: a flag of
// its own).
func openDB(ctx context.Context, dsn string, unsafe *atomic.Bool) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("bad DSN %q: %w", redact(dsn), err)
	}
	db, err := openTuned(dsn, nil, unsafe)
	if err != nil {
		return nil, err
	}
	err = db.PingContext(ctx)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1049 && cfg.DBName != "" { // ER_BAD_DB_ERROR
		if cerr := createDatabase(ctx, cfg); cerr != nil {
			db.Close()
			return nil, cerr
		}
		err = db.PingContext(ctx)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("connect %s: %w", redact(dsn), err)
	}
	return db, nil
}

// OpenExisting opens dsn like OpenDB and pings it, but never creates its database: for an operator
// command that must not leave an empty database behind a typo.
func OpenExisting(ctx context.Context, dsn string) (*sql.DB, error) {
	db, err := openTuned(dsn, nil, nil)
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect %s: %w", redact(dsn), err)
	}
	return db, nil
}

// openTuned opens dsn without a ping (no connection is made until the first query) with tune's
// changes to the driver's settings (nil: none). Times are scanned into time.Time (parseTime);
// interpolated parameters make each statement one round trip, but only where the charset cannot
// turn an escaped quote into a real one: the DSN's (InterpolationSafe) and then each connection's
// as the server reports it (checkedConnector, which falls back to server-side prepared statements,
// or refuses the connection on a handle that sends several statements per query). unsafe is the
// pool's finding, shared by its handles (nil: a flag of this handle's own).
func openTuned(dsn string, tune func(*mysql.Config), unsafe *atomic.Bool) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("bad DSN %q: %w", redact(dsn), err)
	}
	cfg.ParseTime = true
	interpolate(cfg, dsn)
	if tune != nil {
		tune(cfg)
	}
	if unsafe == nil {
		unsafe = new(atomic.Bool)
	}
	safe := cfg.Clone()
	safe.InterpolateParams, safe.MultiStatements = false, false
	plain, err := mysql.NewConnector(safe)
	if err != nil {
		return nil, fmt.Errorf("bad DSN %q: %w", redact(dsn), err)
	}
	if !cfg.InterpolateParams && !cfg.MultiStatements {
		return sql.OpenDB(plain), nil
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("bad DSN %q: %w", redact(dsn), err)
	}
	k := &checkedConnector{c: c, unsafe: unsafe, what: "database " + cfg.DBName}
	if !cfg.MultiStatements {
		k.fallback = plain
	}
	return sql.OpenDB(k), nil
}

func createDatabase(ctx context.Context, cfg *mysql.Config) error {
	name := cfg.DBName
	c := cfg.Clone()
	c.DBName = ""
	db, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+escapeIdent(name)+"`"); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

func escapeIdent(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			out = append(out, '`')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// redact hides a DSN's password in messages. A DSN the driver cannot parse keeps only what follows
// its last '@' (the address and database): whatever came before may hold a password.
func redact(dsn string) string {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		if i := strings.LastIndexByte(dsn, '@'); i >= 0 {
			return "xxx" + dsn[i:]
		}
		if strings.ContainsRune(dsn, ':') {
			return "xxx (unparsable, hidden)" // no '@': a credential typed without one may still be here
		}
		return dsn
	}
	if cfg.Passwd == "" {
		return dsn
	}
	cfg.Passwd = "xxx"
	return cfg.FormatDSN()
}
