package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// safeCharsets are the connection character sets in which client-side parameter interpolation is
// safe: every byte of a multibyte character is >= 0x80 (or there are no multibyte characters), so
// the backslash the driver puts before a quote can never be swallowed as the trailing byte of a
// character. GBK, Big5, SJIS, CP932 and GB18030 fail that test: with them, "\xBF'" escaped to
// "\xBF\'" reads as one GBK character followed by a real quote, and a tenant path becomes SQL
// (cross-tenant writes and reads in a shared pool).
var safeCharsets = map[string]bool{
	"utf8": true, "utf8mb3": true, "utf8mb4": true, "latin1": true, "ascii": true, "binary": true,
}

// InterpolationSafe reports whether a DSN's connection character set is known safe for the
// driver's client-side interpolation (interpolateParams) and, when it is not, why. It looks at
// every place the DSN can set the connection charset: charset= (each of a comma list: the driver
// may fall back to any of them), collation=, and system variables character_set_* and
// collation_* passed as DSN parameters. A DSN that sets none of them gets the driver's default
// (utf8mb4), which is safe.
func InterpolationSafe(dsn string) (bool, string) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return false, "unparseable DSN"
	}
	for _, cs := range dsnCharsets(dsn) {
		if !safeCharsets[normCharset(cs)] {
			return false, fmt.Sprintf("charset %q", cs)
		}
	}
	if cfg.Collation != "" && !safeCharsets[collationCharset(cfg.Collation)] {
		return false, fmt.Sprintf("collation %q", cfg.Collation)
	}
	for k, v := range cfg.Params {
		lk := strings.ToLower(k)
		switch {
		case strings.HasPrefix(lk, "character_set_"):
			if !safeCharsets[normCharset(v)] {
				return false, fmt.Sprintf("system variable %s=%s", k, v)
			}
		case strings.HasPrefix(lk, "collation_"):
			if !safeCharsets[collationCharset(normCharset(v))] {
				return false, fmt.Sprintf("system variable %s=%s", k, v)
			}
		}
	}
	return true, ""
}

// interpolate sets cfg.InterpolateParams: on (one round trip per statement) when dsn's charset is
// known safe, off (server-side prepared statements, whose parameters are never parsed as SQL)
// otherwise.
func interpolate(cfg *mysql.Config, dsn string) {
	cfg.InterpolateParams, _ = InterpolationSafe(dsn)
}

// dsnCharsets returns the charset= list of dsn, found the way the driver finds its parameters
// (after the first '?' that follows the last '/').
func dsnCharsets(dsn string) []string {
	i := strings.LastIndexByte(dsn, '/')
	if i < 0 {
		return nil
	}
	_, params, ok := strings.Cut(dsn[i+1:], "?")
	if !ok {
		return nil
	}
	var out []string
	for kv := range strings.SplitSeq(params, "&") {
		if v, ok := strings.CutPrefix(kv, "charset="); ok {
			out = append(out, strings.Split(v, ",")...)
		}
	}
	return out
}

// normCharset lower-cases a charset value and strips the quotes a SET value may carry.
func normCharset(s string) string {
	return strings.ToLower(strings.Trim(strings.TrimSpace(s), "'\"`"))
}

// collationCharset is the charset a collation name belongs to (the part before its first '_').
func collationCharset(c string) string {
	c = normCharset(c)
	if i := strings.IndexByte(c, '_'); i > 0 {
		return c[:i]
	}
	return c
}

// dsnOptions are the DSN parameters a pool or meta DSN may carry: the driver's own options that do
// not change what a statement means, and a few session variables. Everything else is refused by
// CheckDSN: the driver sends any unknown parameter to the server as "SET key = value", raw, so a key
// such as "@@character_set_client" or a value with a comma in it can switch the connection to a
// multibyte charset behind the charset check, and multiStatements or allowAllFiles would open
// stacked queries and LOAD DATA LOCAL on the pool.
var dsnOptions = map[string]bool{
	"charset": true, "collation": true, "parseTime": true, "loc": true, "timeTruncate": true,
	"timeout": true, "readTimeout": true, "writeTimeout": true, "tls": true, "serverPubKey": true,
	"maxAllowedPacket": true, "checkConnLiveness": true, "clientFoundRows": true, "columnsWithAlias": true,
	"rejectReadOnly": true, "allowNativePasswords": true, "compress": true, "interpolateParams": true,
	"connectionAttributes": true,
}

// sessionVariables are the system variables a DSN may set (each "SET name = value" on every new
// connection), and the form their value must have: a number, a word, or a quoted time zone.
var sessionVariables = map[string]*regexp.Regexp{
	"innodb_lock_wait_timeout": regexp.MustCompile(`^[0-9]{1,9}$`),
	"lock_wait_timeout":        regexp.MustCompile(`^[0-9]{1,9}$`),
	"wait_timeout":             regexp.MustCompile(`^[0-9]{1,9}$`),
	"max_statement_time":       regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,6})?$`),
	"max_execution_time":       regexp.MustCompile(`^[0-9]{1,9}$`),
	"transaction_isolation":    regexp.MustCompile(`^'(READ-UNCOMMITTED|READ-COMMITTED|REPEATABLE-READ|SERIALIZABLE)'$`),
	"tx_isolation":             regexp.MustCompile(`^'(READ-UNCOMMITTED|READ-COMMITTED|REPEATABLE-READ|SERIALIZABLE)'$`),
	"time_zone":                regexp.MustCompile(`^'([+-][0-9]{2}:[0-9]{2}|[A-Za-z_]+(/[A-Za-z_+-]+)*|SYSTEM)'$`),
}

// charsetName is the form of a charset= (comma list) or collation= value.
var charsetName = regexp.MustCompile(`^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$`)

// CheckDSN refuses a DSN that does not parse or carries a parameter outside dsnOptions and
// sessionVariables (or a session variable whose value is not of its form), naming the parameter
// and what is allowed.
func CheckDSN(dsn string) error {
	if _, err := mysql.ParseDSN(dsn); err != nil {
		return err
	}
	i := strings.LastIndexByte(dsn, '/')
	if i < 0 {
		return nil
	}
	_, params, ok := strings.Cut(dsn[i+1:], "?")
	if !ok {
		return nil
	}
	for kv := range strings.SplitSeq(params, "&") {
		k, raw, found := strings.Cut(kv, "=")
		if !found {
			continue // the driver ignores a piece without '=' too
		}
		v, err := url.QueryUnescape(raw)
		if err != nil {
			return fmt.Errorf("DSN parameter %q: %v", k, err)
		}
		switch {
		case k == "charset" || k == "collation":
			if !charsetName.MatchString(v) {
				return fmt.Errorf("DSN parameter %s=%q: want a charset or collation name", k, v)
			}
		case dsnOptions[k]:
		case sessionVariables[k] != nil:
			if !sessionVariables[k].MatchString(v) {
				return fmt.Errorf("DSN parameter %s=%q: want a value of the form %s", k, v, sessionVariables[k])
			}
		default:
			return fmt.Errorf("DSN parameter %q is not allowed (allowed: %s)", k, allowedParams())
		}
	}
	return nil
}

func allowedParams() string {
	var out []string
	for k := range dsnOptions {
		out = append(out, k)
	}
	for k := range sessionVariables {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// ErrUnsafeCharset is the error of a connection whose server-side charset is not known safe for
// client-side interpolation, on a handle that needs it (the write-group handle, whose statements
// are several per query).
var ErrUnsafeCharset = errors.New("connection charset not known safe for client-side interpolation")

// checkedConnector opens the connections of a handle that interpolates parameters client-side (or
// sends several statements per query) and asks the server, on each new connection, which charset
// the connection really uses (@@character_set_client, @@character_set_connection): the DSN is not
// the only place it can be set (the server's init_connect, skip-character-set-client-handshake). A
// connection in an unsafe charset is closed; with a fallback (the same DSN without interpolation,
// server-side prepared statements) the handle goes on over fallback connections, without one the
// connect fails with ErrUnsafeCharset. unsafe records the finding for the pool (shared by its
// handles), so a pool once seen unsafe gets no write-group handle and no more interpolating
// connections.
type checkedConnector struct {
	c        driver.Connector
	fallback driver.Connector // nil: refuse
	unsafe   *atomic.Bool
	what     string // names the pool in errors
}

func (k *checkedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if k.unsafe.Load() {
		return k.refuseOrFallback(ctx, "")
	}
	conn, err := k.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := connCharsets(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	for _, c := range cs {
		if !safeCharsets[normCharset(c)] {
			conn.Close()
			k.unsafe.Store(true)
			return k.refuseOrFallback(ctx, c)
		}
	}
	return conn, nil
}

func (k *checkedConnector) refuseOrFallback(ctx context.Context, cs string) (driver.Conn, error) {
	if k.fallback != nil {
		return k.fallback.Connect(ctx)
	}
	if cs == "" {
		return nil, fmt.Errorf("%s: %w (seen earlier on this pool)", k.what, ErrUnsafeCharset)
	}
	return nil, fmt.Errorf("%s: the server says the connection charset is %s: %w", k.what, cs, ErrUnsafeCharset)
}

func (k *checkedConnector) Driver() driver.Driver { return k.c.Driver() }

// connCharsets asks the server for the connection's client and connection charsets.
func connCharsets(ctx context.Context, conn driver.Conn) ([]string, error) {
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return nil, errors.New("charset check: the driver's connection cannot query")
	}
	rows, err := q.QueryContext(ctx, "SELECT @@character_set_client, @@character_set_connection", nil)
	if err != nil {
		return nil, fmt.Errorf("charset check: %w", err)
	}
	defer rows.Close()
	vals := make([]driver.Value, 2)
	if err := rows.Next(vals); err != nil {
		return nil, fmt.Errorf("charset check: %w", err)
	}
	out := make([]string, 0, 2)
	for _, v := range vals {
		switch s := v.(type) {
		case []byte:
			out = append(out, string(s))
		case string:
			out = append(out, s)
		default:
			return nil, fmt.Errorf("charset check: unexpected value %v", v)
		}
	}
	return out, nil
}
