package store

import (
	"fmt"
	"strings"

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
