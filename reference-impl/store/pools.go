package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Pool roles.
const (
	RoleDedicated = "dedicated"
	RoleShared    = "shared"
)

// PoolSpec is one tenant DB as the pools file names it.
type PoolSpec struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	DSN  string `json:"dsn"`
}

type poolsFile struct {
	Pools []PoolSpec `json:"pools"`
}

// LoadPools reads a pools file ({"pools":[{"id","role","dsn"}]}) and checks every entry, naming
// the file and the entry it rejects.
func LoadPools(path string) ([]PoolSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f poolsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := CheckPools(f.Pools); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Pools, nil
}

// DefaultPools is the pool set of a pod started without a pools file: one shared pool,
// database shared_pool on the meta DB's server.
func DefaultPools(metaDSN string) ([]PoolSpec, error) {
	mc, err := mysql.ParseDSN(metaDSN)
	if err != nil {
		return nil, fmt.Errorf("--meta-dsn: %w", err)
	}
	mc.DBName = "shared_pool"
	return []PoolSpec{{ID: "shared_pool", Role: RoleShared, DSN: mc.FormatDSN()}}, nil
}

// CheckPools validates specs: ids unique and non-empty, role dedicated|shared, DSN parseable.
func CheckPools(specs []PoolSpec) error {
	if len(specs) == 0 {
		return fmt.Errorf("pools: at least one pool is required")
	}
	seen := map[string]bool{}
	for i, p := range specs {
		if p.ID == "" || len(p.ID) > 64 {
			return fmt.Errorf("pools[%d].id: must be 1-64 characters, got %q", i, p.ID)
		}
		if seen[p.ID] {
			return fmt.Errorf("pools[%d].id: duplicate %q", i, p.ID)
		}
		seen[p.ID] = true
		if p.Role != RoleDedicated && p.Role != RoleShared {
			return fmt.Errorf("pools[%d].role: %q (allowed: dedicated, shared)", i, p.Role)
		}
		if err := CheckDSN(p.DSN); err != nil {
			return fmt.Errorf("pools[%d].dsn: %v", i, err)
		}
	}
	return nil
}

// PoolOptions tune the connection pools of tenant DBs.
type PoolOptions struct {
	MaxOpen     int           // per tenant DB (0: 32)
	ConnMaxIdle time.Duration // idle connection lifetime (0: 5m)
	IdleClose   time.Duration // close a tenant DB handle unused this long (0: never)
	// StreamMaxOpen bounds the connections event streams may hold on one tenant DB: they read
	// through a handle of their own, so streams (however many one tenant opens) can never take the
	// connections mutations of the pool's tenants need (0: max(1, MaxOpen/4)).
	StreamMaxOpen int
	// StreamTenantMax bounds the stream reads one tenant runs at once on that handle (its ReadGate),
	// so one tenant's many streams cannot take every connection of the handle from the other tenants
	// of the pool (0: max(1, StreamMaxOpen/4); < 0: no per-tenant bound).
	StreamTenantMax int
	// GroupMaxOpen bounds the connections of the write-group handle (AcquireGroup) of one tenant
	// DB, opened under --event-commit grouped only: a tenant's groups commit one at a time on a
	// pod, each on one connection for two round trips (0: max(1, MaxOpen/2)).
	GroupMaxOpen int
}

// Pools opens tenant DBs on demand and may close idle ones; a closed handle is reopened by the
// next Acquire (that is the "store re-resolution" the retry buffer relies on).
type Pools struct {
	opts  PoolOptions
	specs map[string]PoolSpec
	order []PoolSpec

	mu      sync.Mutex
	dbs     map[string]*poolDB
	streams map[string]*sql.DB // stream-read handles (AcquireStream)
	groups  map[string]*sql.DB // write-group handles (AcquireGroup)
	// groupable are the pools whose DSN charset allows interpolation (InterpolationSafe), read
	// once: only they get a group handle.
	groupable map[string]bool
	// charsetUnsafe is, per pool, whether a connection of it was found in a charset not safe for
	// client-side interpolation (checkedConnector); shared by the pool's handles.
	charsetUnsafe map[string]*atomic.Bool
	migrated      map[string]bool
	known         map[string]bool // schema known current (MarkMigrated): open without touching the DB

	gateMu sync.Mutex
	gates  gateMap // pool + tenant -> the tenant's stream read gate (StreamGate)
}

// MarkMigrated tells Pools that these pools' schema is current (recorded in the meta DB by an
// earlier start): Acquire then opens their handles lazily, without a ping or a migration, so the
// DB sees no traffic until a query needs it.
func (p *Pools) MarkMigrated(ids map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, ok := range ids {
		if ok {
			p.known[id] = true
		}
	}
}

type poolDB struct {
	db       *sql.DB
	lastUsed time.Time
}

// NewPools returns a Pools over specs (already checked).
func NewPools(specs []PoolSpec, opts PoolOptions) *Pools {
	if opts.MaxOpen == 0 {
		opts.MaxOpen = 32
	}
	if opts.ConnMaxIdle == 0 {
		opts.ConnMaxIdle = 5 * time.Minute
	}
	if opts.StreamMaxOpen <= 0 {
		opts.StreamMaxOpen = max(1, opts.MaxOpen/4)
	}
	if opts.GroupMaxOpen <= 0 {
		opts.GroupMaxOpen = max(1, opts.MaxOpen/2)
	}
	if opts.StreamTenantMax == 0 {
		opts.StreamTenantMax = max(1, opts.StreamMaxOpen/4)
	}
	p := &Pools{opts: opts, specs: map[string]PoolSpec{}, dbs: map[string]*poolDB{}, streams: map[string]*sql.DB{}, groups: map[string]*sql.DB{},
		migrated: map[string]bool{}, known: map[string]bool{}, order: specs, gates: gateMap{}, groupable: map[string]bool{}}
	p.charsetUnsafe = map[string]*atomic.Bool{}
	for _, s := range specs {
		p.specs[s.ID] = s
		p.charsetUnsafe[s.ID] = new(atomic.Bool)
		p.groupable[s.ID], _ = InterpolationSafe(s.DSN)
	}
	return p
}

// Specs returns the pools in file order.
func (p *Pools) Specs() []PoolSpec { return p.order }

// Spec returns pool id's spec.
func (p *Pools) Spec(id string) (PoolSpec, bool) {
	s, ok := p.specs[id]
	return s, ok
}

// MigrateAll opens every pool once at start and creates its schema (idempotent). A pool that cannot
// be reached is reported, not fatal: a pod restarting during a tenant-DB outage must still come up;
// that pool is migrated by its first successful Acquire.
func (p *Pools) MigrateAll(ctx context.Context, each time.Duration) map[string]error {
	failed := map[string]error{}
	for _, s := range p.order {
		c, cancel := context.WithTimeout(ctx, each)
		_, err := p.Acquire(c, s.ID)
		cancel()
		if err != nil {
			failed[s.ID] = err
		}
	}
	return failed
}

// Acquire returns pool id's open handle, opening it if it is not open.
func (p *Pools) Acquire(ctx context.Context, id string) (*sql.DB, error) {
	spec, ok := p.specs[id]
	if !ok {
		return nil, fmt.Errorf("unknown pool %q", id)
	}
	p.mu.Lock()
	if d := p.dbs[id]; d != nil {
		d.lastUsed = time.Now()
		p.mu.Unlock()
		return d.db, nil
	}
	known := p.known[id]
	p.mu.Unlock()
	var db *sql.DB
	var err error
	if known {
		db, err = openTuned(spec.DSN, nil, p.charsetUnsafe[id])
	} else {
		db, err = openDB(ctx, spec.DSN, p.charsetUnsafe[id])
	}
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	done := p.migrated[id] || known
	p.mu.Unlock()
	if !done {
		if err := MigrateTenant(ctx, db); err != nil {
			db.Close()
			return nil, fmt.Errorf("pool %s: %w", id, err)
		}
		p.mu.Lock()
		p.migrated[id] = true
		p.mu.Unlock()
	}
	db.SetMaxOpenConns(p.opts.MaxOpen)
	db.SetMaxIdleConns(p.opts.MaxOpen)
	db.SetConnMaxIdleTime(p.opts.ConnMaxIdle)
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.dbs[id]; d != nil { // lost a race: keep the first
		db.Close()
		d.lastUsed = time.Now()
		return d.db, nil
	}
	p.dbs[id] = &poolDB{db: db, lastUsed: time.Now()}
	return db, nil
}

// AcquireStream returns pool id's stream-read handle, opening it if it is not open: the same DSN,
// at most StreamMaxOpen connections. Acquire the pool first (it migrates the schema).
func (p *Pools) AcquireStream(ctx context.Context, id string) (*sql.DB, error) {
	return p.acquireSide(ctx, id, p.streams, p.opts.StreamMaxOpen, nil)
}

// AcquireGroup returns pool id's write-group handle (--event-commit grouped), opening it if it is
// not open: the same DSN with multiStatements, at most GroupMaxOpen connections, used by
// TenantStore.CommitGroup only (its statements are built from constants, every value a
// placeholder). A dedicated pool's connections (TCP) read in blocking system calls, so its one
// tenant's committer wakes as soon as its answer arrives (blockingconn_linux.go); a shared pool's
// stay on the poller: its tenants' committers keep the server busy between them, and blocking
// reads there made their groups smaller and each event dearer (one pod, 16 tenants of 16
// writers each: eventlogd/raw 0.23-0.34 against 0.31-0.46, docs/performance.md). Nil, nil when
// the DSN's charset is not known safe for client-side interpolation, or a connection of the pool
// was found in an unsafe charset by the server's own account: the server's prepared statements, which that pool runs instead, take one statement each, and
// its groups commit in a transaction of their own (WriteFilesTx).
func (p *Pools) AcquireGroup(ctx context.Context, id string) (*sql.DB, error) {
	if !p.groupable[id] {
		return nil, nil
	}
	if _, err := p.Acquire(ctx, id); err != nil {
		return nil, err
	}
	if p.charsetUnsafe[id].Load() { // the server said so, whatever the DSN says
		return nil, nil
	}
	return p.acquireSide(ctx, id, p.groups, p.opts.GroupMaxOpen, func(c *mysql.Config) {
		c.MultiStatements = true
		if c.Net == "tcp" && c.DialFunc == nil && p.specs[id].Role == RoleDedicated {
			c.DialFunc = dialBlocking // its one tenant's committer wakes when its answer arrives (blockingconn_linux.go)
		}
	})
}

// acquireSide returns pool id's handle in side (streams, groups), opening it with maxOpen
// connections and tune's settings if it is not open. Acquire the pool first (it migrates the
// schema).
func (p *Pools) acquireSide(ctx context.Context, id string, side map[string]*sql.DB, maxOpen int, tune func(*mysql.Config)) (*sql.DB, error) {
	if _, err := p.Acquire(ctx, id); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if db := side[id]; db != nil {
		p.mu.Unlock()
		return db, nil
	}
	p.mu.Unlock()
	db, err := openTuned(p.specs[id].DSN, tune, p.charsetUnsafe[id])
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(maxOpen)
	db.SetMaxIdleConns(maxOpen)
	db.SetConnMaxIdleTime(p.opts.ConnMaxIdle)
	p.mu.Lock()
	defer p.mu.Unlock()
	if first := side[id]; first != nil { // lost a race: keep the first
		db.Close()
		return first, nil
	}
	side[id] = db
	return db, nil
}

// ClosePool closes pool id's handles (as the idle closer would); the next Acquire reopens them.
func (p *Pools) ClosePool(id string) {
	p.mu.Lock()
	d := p.dbs[id]
	delete(p.dbs, id)
	var sides []*sql.DB
	for _, side := range p.sides() {
		if db := side[id]; db != nil {
			sides = append(sides, db)
		}
		delete(side, id)
	}
	p.mu.Unlock()
	if d != nil {
		d.db.Close()
	}
	for _, db := range sides {
		db.Close()
	}
}

// CloseIdle closes handles unused for the configured IdleClose.
func (p *Pools) CloseIdle() {
	if p.opts.IdleClose <= 0 {
		return
	}
	var idle []string
	p.mu.Lock()
	for id, d := range p.dbs {
		if time.Since(d.lastUsed) > p.opts.IdleClose {
			idle = append(idle, id)
		}
	}
	p.mu.Unlock()
	for _, id := range idle {
		p.ClosePool(id)
	}
}

// Close closes every handle.
func (p *Pools) Close() {
	p.mu.Lock()
	dbs := p.dbs
	p.dbs = map[string]*poolDB{}
	var sides []*sql.DB
	for _, side := range p.sides() {
		for id, db := range side {
			sides = append(sides, db)
			delete(side, id)
		}
	}
	p.mu.Unlock()
	for _, d := range dbs {
		d.db.Close()
	}
	for _, db := range sides {
		db.Close()
	}
}

// sides are the maps of a pool's handles beside its own (callers hold p.mu).
func (p *Pools) sides() []map[string]*sql.DB { return []map[string]*sql.DB{p.streams, p.groups} }
