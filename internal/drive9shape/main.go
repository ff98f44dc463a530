// Command drive9shape is a small server shaped like drive9 for seqgate's tests of the drive9 pod
// profile: it is configured by drive9's environment variables (DRIVE9_LISTEN_ADDR, DRIVE9_POD_ID,
// DRIVE9_META_DSN, DRIVE9_LOCAL_MYSQL_DSN), provisions a tenant as drive9's local provisioner does
// (202 while provisioning, then "active" on GET /v1/status; one database drive9_<id without dashes>
// on the admin DSN's host:port, its events in fs_events), and serves the fs API the load uses
// (writes), the SSE stream (/v1/events?since=), the listing (GET /v1/fs/<dir>?list=1), /healthz and
// /metrics with drive9's counter names. It is a test double of the wire, not of drive9's behaviour:
// each tenant's seq is allocated under a row lock, so its stream skips nothing.
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// provisioningFor is how long a new tenant says "provisioning".
const provisioningFor = 500 * time.Millisecond

type server struct {
	pod     string
	meta    *sql.DB
	admin   *mysql.Config
	mu      sync.Mutex
	tenants map[string]*tenant // by api key
	resets  atomic.Int64
}

type tenant struct {
	id string
	db *sql.DB
}

func main() {
	env := func(k string) string {
		v := os.Getenv(k)
		if v == "" {
			log.Fatalf("drive9shape: %s is not set", k)
		}
		return v
	}
	admin, err := mysql.ParseDSN(env("DRIVE9_LOCAL_MYSQL_DSN"))
	if err != nil {
		log.Fatalf("drive9shape: DRIVE9_LOCAL_MYSQL_DSN: %v", err)
	}
	meta, err := sql.Open("mysql", env("DRIVE9_META_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := meta.Exec(`CREATE TABLE IF NOT EXISTS tenants (id VARCHAR(64) PRIMARY KEY, api_key VARCHAR(64) NOT NULL UNIQUE,
		db_name VARCHAR(64) NOT NULL, created_at DATETIME(6) NOT NULL)`); err != nil {
		log.Fatalf("drive9shape: meta schema: %v", err)
	}
	s := &server{pod: env("DRIVE9_POD_ID"), meta: meta, admin: admin, tenants: map[string]*tenant{}}
	ln, err := net.Listen("tcp", env("DRIVE9_LISTEN_ADDR"))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("POST /v1/provision", s.provision)
	mux.HandleFunc("GET /v1/status", s.status)
	mux.HandleFunc("GET /v1/events", s.events)
	mux.HandleFunc("PUT /v1/fs/", s.write)
	mux.HandleFunc("GET /v1/fs/", s.list)
	srv := &http.Server{Handler: mux}
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
		<-c
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	log.Printf("drive9shape pod %s serving on %s", s.pod, ln.Addr())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

func token() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func jsonAnswer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// provision creates the tenant's database on the admin DSN's server, as drive9's local provisioner
// does, and answers 202 while it "provisions".
func (s *server) provision(w http.ResponseWriter, r *http.Request) {
	id := token()[:8] + "-" + token()[:8]
	key := "d9k_" + token()
	name := "drive9_" + strings.ReplaceAll(id, "-", "")
	c := s.admin.Clone()
	c.DBName, c.ParseTime = "", true
	root, err := sql.Open("mysql", c.FormatDSN())
	if err == nil {
		defer root.Close()
		_, err = root.ExecContext(r.Context(), "CREATE DATABASE `"+name+"`")
	}
	if err == nil {
		var db *sql.DB
		if db, err = s.tenantDB(name); err == nil {
			defer db.Close()
			for _, q := range []string{
				`CREATE TABLE fs_events (seq BIGINT NOT NULL PRIMARY KEY, path VARBINARY(1024) NOT NULL, op VARCHAR(32) NOT NULL, created_at DATETIME(6) NOT NULL)`,
				`CREATE TABLE files (path VARBINARY(1024) NOT NULL PRIMARY KEY, size BIGINT NOT NULL, revision BIGINT NOT NULL)`,
				`CREATE TABLE counter (id INT PRIMARY KEY, seq BIGINT NOT NULL)`,
				`INSERT INTO counter VALUES (1, 0)`} {
				if _, err = db.ExecContext(r.Context(), q); err != nil {
					break
				}
			}
		}
	}
	if err == nil {
		_, err = s.meta.ExecContext(r.Context(), "INSERT INTO tenants VALUES (?, ?, ?, ?)", id, key, name, time.Now().UTC())
	}
	if err != nil {
		jsonAnswer(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	jsonAnswer(w, http.StatusAccepted, map[string]string{"tenant_id": id, "api_key": key, "status": "provisioning"})
}

// tenantDB opens database name on the admin DSN's host:port: every tenant's connections go there.
func (s *server) tenantDB(name string) (*sql.DB, error) {
	c := s.admin.Clone()
	c.DBName, c.ParseTime = name, true
	return sql.Open("mysql", c.FormatDSN())
}

// auth finds the tenant of the request's key, and how old it is.
func (s *server) auth(r *http.Request) (*tenant, time.Duration, int) {
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	var id, name string
	var created time.Time
	err := s.meta.QueryRowContext(r.Context(), "SELECT id, db_name, created_at FROM tenants WHERE api_key = ?", key).Scan(&id, &name, &created)
	if err == sql.ErrNoRows {
		return nil, 0, http.StatusUnauthorized
	}
	if err != nil {
		return nil, 0, http.StatusServiceUnavailable
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tenants[key]
	if t == nil {
		db, err := s.tenantDB(name)
		if err != nil {
			return nil, 0, http.StatusServiceUnavailable
		}
		t = &tenant{id: id, db: db}
		s.tenants[key] = t
	}
	return t, time.Since(created), 0
}

func (s *server) status(w http.ResponseWriter, r *http.Request) {
	_, age, code := s.auth(r)
	if code != 0 {
		jsonAnswer(w, code, map[string]string{"error": http.StatusText(code)})
		return
	}
	st := "active"
	if age < provisioningFor {
		st = "provisioning"
	}
	jsonAnswer(w, http.StatusOK, map[string]string{"status": st})
}

// write stores a file and its event in one transaction, the seq taken under the tenant's counter lock.
func (s *server) write(w http.ResponseWriter, r *http.Request) {
	t, _, code := s.auth(r)
	if code != 0 {
		jsonAnswer(w, code, map[string]string{"error": http.StatusText(code)})
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1/fs")
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	err := func() error {
		tx, err := t.db.BeginTx(r.Context(), nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var seq int64
		if err := tx.QueryRowContext(r.Context(), "SELECT seq FROM counter WHERE id = 1 FOR UPDATE").Scan(&seq); err != nil {
			return err
		}
		seq++
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"UPDATE counter SET seq = ? WHERE id = 1", []any{seq}},
			{"INSERT INTO files VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE size = VALUES(size), revision = VALUES(revision)", []any{path, len(body), seq}},
			{"INSERT INTO fs_events VALUES (?, ?, 'write', ?)", []any{seq, path, time.Now().UTC()}},
		} {
			if _, err := tx.ExecContext(r.Context(), q.sql, q.args...); err != nil {
				return err
			}
		}
		return tx.Commit()
	}()
	if err != nil {
		jsonAnswer(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	jsonAnswer(w, http.StatusOK, map[string]any{"revision": 1, "status": "ok"})
}

// list answers GET /v1/fs/<dir>?list=1 with the directory's entries, as drive9 does.
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	t, _, code := s.auth(r)
	if code != 0 || r.URL.Query().Get("list") == "" {
		if code == 0 {
			code = http.StatusNotFound
		}
		jsonAnswer(w, code, map[string]string{"error": http.StatusText(code)})
		return
	}
	dir := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/fs"), "/") + "/"
	rows, err := t.db.QueryContext(r.Context(), "SELECT path, size, revision FROM files WHERE path LIKE ? ORDER BY path", dir+"%")
	if err != nil {
		jsonAnswer(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	defer rows.Close()
	type entry struct {
		Name     string `json:"name"`
		Size     int64  `json:"size"`
		IsDir    bool   `json:"isDir"`
		Revision int64  `json:"revision"`
	}
	entries := []entry{}
	seen := map[string]bool{}
	for rows.Next() {
		var p string
		var e entry
		if err := rows.Scan(&p, &e.Size, &e.Revision); err != nil {
			break
		}
		name, rest, sub := strings.Cut(strings.TrimPrefix(p, dir), "/")
		if sub && rest != "" {
			if !seen[name] {
				seen[name] = true
				entries = append(entries, entry{Name: name, IsDir: true})
			}
			continue
		}
		e.Name = name
		entries = append(entries, e)
	}
	jsonAnswer(w, http.StatusOK, map[string]any{"entries": entries})
}

// events streams the tenant's events from since (absent: an initial_sync reset at the head), polling
// fs_events, with a heartbeat every second.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	t, _, code := s.auth(r)
	if code != 0 {
		jsonAnswer(w, code, map[string]string{"error": http.StatusText(code)})
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no streaming", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	var cursor int64
	sinceArg := r.URL.Query().Get("since")
	if sinceArg != "" {
		cursor, _ = strconv.ParseInt(sinceArg, 10, 64)
	} else if err := t.db.QueryRowContext(ctx, "SELECT seq FROM counter WHERE id = 1").Scan(&cursor); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if sinceArg == "" {
		s.resets.Add(1)
		fmt.Fprintf(w, "event: reset\ndata: {\"seq\":%d,\"reason\":\"initial_sync\"}\n\n", cursor)
	}
	fl.Flush()
	beat := time.Now()
	for {
		rows, err := t.db.QueryContext(ctx, "SELECT seq, path, op, created_at FROM fs_events WHERE seq > ? ORDER BY seq LIMIT 500", cursor)
		if err == nil {
			for rows.Next() {
				var seq int64
				var path, op string
				var at time.Time
				if rows.Scan(&seq, &path, &op, &at) != nil {
					break
				}
				b, _ := json.Marshal(map[string]any{"seq": seq, "path": path, "op": op, "ts": at.UnixMilli()})
				fmt.Fprintf(w, "event: file_changed\ndata: %s\n\n", b)
				cursor = seq
			}
			rows.Close()
		}
		if time.Since(beat) >= time.Second {
			fmt.Fprintf(w, "event: heartbeat\ndata: {\"seq\":%d}\n\n", cursor)
			beat = time.Now()
		}
		fl.Flush()
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *server) metrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE drive9_sse_event_retry_dropped_total counter\ndrive9_sse_event_retry_dropped_total 0\n")
	fmt.Fprintf(w, "# TYPE drive9_sse_resets_sent_total counter\ndrive9_sse_resets_sent_total{reason=\"initial_sync\"} %d\n", s.resets.Load())
	fmt.Fprintf(w, "# TYPE drive9_sse_event_retry_buffer_depth gauge\ndrive9_sse_event_retry_buffer_depth 0\n")
	fmt.Fprintf(w, "# TYPE drive9_tenant_outbox_backlog_oldest_age_seconds gauge\ndrive9_tenant_outbox_backlog_oldest_age_seconds 0\n")
}
