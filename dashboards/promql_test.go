package dashboards

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// promqlWords are PromQL keywords and aggregation operators: identifiers that are never metric names.
var promqlWords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"offset": true, "bool": true, "and": true, "or": true, "unless": true, "atan2": true, "inf": true, "nan": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true, "count": true,
	"count_values": true, "bottomk": true, "topk": true, "quantile": true, "limitk": true, "limit_ratio": true,
}

// labelLists are the keywords followed by a parenthesized list of label names.
var labelLists = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdent(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// metricNames returns the metric names a PromQL expression (with Grafana's $variables) selects, in
// order of appearance: identifiers that are not functions, keywords, label names or durations. It is
// a lexer, not a parser: it finds names, it does not validate the expression (promtool does that).
func metricNames(expr string) ([]string, error) {
	var names []string
	i := 0
	// skipTo skips a bracketed block that opened at i (expr[i] == open), strings inside included.
	skipTo := func(open, close byte) error {
		start, depth := i, 0
		for i < len(expr) {
			switch c := expr[i]; {
			case c == '"' || c == '\'' || c == '`':
				if err := skipString(expr, &i); err != nil {
					return err
				}
				continue
			case c == open:
				depth++
			case c == close:
				depth--
				if depth == 0 {
					i++
					return nil
				}
			}
			i++
		}
		return fmt.Errorf("unclosed %q at offset %d in %q", open, start, expr)
	}
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if err := skipString(expr, &i); err != nil {
				return nil, err
			}
		case c == '{':
			if err := skipTo('{', '}'); err != nil {
				return nil, err
			}
		case c == '[':
			if err := skipTo('[', ']'); err != nil {
				return nil, err
			}
		case c == '$': // a Grafana variable: $name or ${name}
			i++
			if i < len(expr) && expr[i] == '{' {
				if err := skipTo('{', '}'); err != nil {
					return nil, err
				}
				continue
			}
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(expr) && expr[i+1] >= '0' && expr[i+1] <= '9':
			// A number or a duration (1e-4, 0.99, 5m, 1h30m, 0x1f): digits, dots, letters, and a sign
			// right after an exponent.
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.' ||
				(expr[i] == '-' || expr[i] == '+') && (expr[i-1] == 'e' || expr[i-1] == 'E')) {
				i++
			}
		case isIdentStart(c):
			start := i
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
			word := expr[start:i]
			j := i
			for j < len(expr) && (expr[j] == ' ' || expr[j] == '\n' || expr[j] == '\t' || expr[j] == '\r') {
				j++
			}
			switch {
			case labelLists[strings.ToLower(word)]:
				if j < len(expr) && expr[j] == '(' {
					i = j
					if err := skipTo('(', ')'); err != nil {
						return nil, err
					}
				}
			case promqlWords[strings.ToLower(word)]:
			case j < len(expr) && expr[j] == '(': // a function call
			default:
				names = append(names, word)
			}
		default:
			i++
		}
	}
	return names, nil
}

// skipString moves *i past the string literal that starts there.
func skipString(expr string, i *int) error {
	q, start := expr[*i], *i
	*i++
	for *i < len(expr) {
		switch expr[*i] {
		case '\\':
			if q != '`' {
				*i++
			}
		case q:
			*i++
			return nil
		}
		*i++
	}
	return fmt.Errorf("unterminated string at offset %d in %q", start, expr)
}

func TestMetricNames(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`sum by (tenant_id, reason) (increase(drive9_sse_event_retry_dropped_total{job="e",instance=~"$instance"}[$__rate_interval])) > 0`,
			[]string{"drive9_sse_event_retry_dropped_total"}},
		{`a unless a offset 5m`, []string{"a", "a"}},
		{`(sum(rate(x_total[1h])) or vector(0)) / sum(rate(y_total{path="hot"}[1h])) > 14.4 * 1e-4`, []string{"x_total", "y_total"}},
		{`histogram_quantile(0.99, sum by (le) (rate(h_bucket{l="a}b"}[5m])))`, []string{"h_bucket"}},
		{`eventlogd:event_loss_ratio:rate1h / 1e-4`, []string{"eventlogd:event_loss_ratio:rate1h"}},
		{`a * on (pod) group_left (x) b`, []string{"a", "b"}},
		{`max(m{l='it\'s'}) > 2 * 3600 and bool c`, []string{"m", "c"}},
		{`${datasource} + d`, []string{"d"}},
	}
	for _, c := range cases {
		got, err := metricNames(c.expr)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("metricNames(%q) = %v, %v; want %v", c.expr, got, err, c.want)
		}
	}
	for _, bad := range []string{`a{l="x}`, `rate(a[5m)`, `"open`} {
		if _, err := metricNames(bad); err == nil {
			t.Errorf("metricNames(%q): no error", bad)
		}
	}
}

func FuzzMetricNames(f *testing.F) {
	for _, s := range []string{`up`, `sum by (a) (rate(x{y="z"}[5m]))`, `a offset 5m`, `1e-4 * b`, `${v} $w c`, `"\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		names, err := metricNames(expr)
		if err != nil {
			return
		}
		for _, n := range names {
			if n == "" || !isIdentStart(n[0]) || !strings.Contains(expr, n) {
				t.Fatalf("metricNames(%q) returned %q", expr, n)
			}
		}
	})
}
