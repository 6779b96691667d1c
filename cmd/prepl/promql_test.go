package main

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// A hand-written extractor rather than Prometheus' own parser
// (github.com/prometheus/prometheus/promql/parser): that module pulls in
// the whole Prometheus server's dependency tree for a test, and it cannot
// read Grafana's queries anyway ($__rate_interval, $instance are not
// PromQL). The dashboard and the alert rules use plain selectors,
// functions, aggregations and binary operators; this covers them, and the
// promtool run in TestAlertRulesParse checks the rules' PromQL for real.

// selector is a metric a PromQL expression reads: its name, and the label
// values its equality matchers require (regex matchers and matchers on
// Grafana variables are left out: they match what is there).
type selector struct {
	name   string
	labels map[string]string
}

func (s selector) String() string {
	if len(s.labels) == 0 {
		return s.name
	}
	var parts []string
	for k, v := range s.labels {
		parts = append(parts, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(parts)
	return s.name + "{" + strings.Join(parts, ",") + "}"
}

// aggregations are PromQL's aggregation operators: followed by by/without,
// they are not metric names.
var aggregations = map[string]bool{"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true,
	"stdvar": true, "count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true}

// labelLists are the keywords followed by a parenthesized list of label names.
var labelLists = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// operators are the keywords that are binary operators or modifiers.
var operators = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"inf": true, "nan": true}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdent(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

// promSelectors returns the selectors of a PromQL expression, in order.
func promSelectors(expr string) ([]selector, error) {
	var out []selector
	i := 0
	skipSpace := func(j int) int {
		for j < len(expr) && strings.IndexByte(" \t\r\n", expr[j]) >= 0 {
			j++
		}
		return j
	}
	for i < len(expr) {
		c := expr[i]
		switch {
		case strings.IndexByte(" \t\r\n", c) >= 0:
			i++
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			_, end, err := readString(expr, i)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '$':
			i = skipVariable(expr, i)
		case c == '[':
			end := strings.IndexByte(expr[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [ at %d in %q", i, expr)
			}
			i += end + 1
		case '0' <= c && c <= '9' || c == '.':
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++
			}
		case c == '{':
			labels, end, err := readMatchers(expr, i)
			if err != nil {
				return nil, err
			}
			if name, ok := labels["__name__"]; ok {
				delete(labels, "__name__")
				out = append(out, selector{name: name, labels: labels})
			}
			i = end
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			word, next := expr[i:j], skipSpace(j)
			lower := strings.ToLower(word)
			switch {
			case labelLists[lower]:
				if next < len(expr) && expr[next] == '(' {
					end := strings.IndexByte(expr[next:], ')')
					if end < 0 {
						return nil, fmt.Errorf("unclosed %s ( in %q", word, expr)
					}
					j = next + end + 1
				}
			case operators[lower]:
			case next < len(expr) && expr[next] == '(': // a function or aggregation
			case aggregations[lower] && next < len(expr) && isIdentStart(expr[next]): // sum by (...)
			default:
				s := selector{name: word, labels: map[string]string{}}
				if next < len(expr) && expr[next] == '{' {
					labels, end, err := readMatchers(expr, next)
					if err != nil {
						return nil, err
					}
					s.labels, j = labels, end
				}
				out = append(out, s)
			}
			i = j
		default: // operators, parentheses, commas
			i++
		}
	}
	return out, nil
}

// skipVariable skips a Grafana variable: $name or ${name...}.
func skipVariable(expr string, i int) int {
	i++
	if i < len(expr) && expr[i] == '{' {
		if end := strings.IndexByte(expr[i:], '}'); end >= 0 {
			return i + end + 1
		}
		return len(expr)
	}
	for i < len(expr) && isIdent(expr[i]) {
		i++
	}
	return i
}

// readString reads the string literal at expr[i]; it returns its value
// and the index past it.
func readString(expr string, i int) (string, int, error) {
	q := expr[i]
	var b strings.Builder
	for j := i + 1; j < len(expr); j++ {
		switch c := expr[j]; {
		case c == q:
			return b.String(), j + 1, nil
		case c == '\\' && q != '`' && j+1 < len(expr):
			j++
			b.WriteByte(expr[j])
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unclosed string at %d in %q", i, expr)
}

// readMatchers reads the label matchers {a="x", b=~"y"} at expr[i]; it
// returns the equality matchers on literal values and the index past '}'.
func readMatchers(expr string, i int) (map[string]string, int, error) {
	labels := map[string]string{}
	j := i + 1
	for {
		for j < len(expr) && strings.IndexByte(" \t\r\n,", expr[j]) >= 0 {
			j++
		}
		if j >= len(expr) {
			return nil, 0, fmt.Errorf("unclosed { at %d in %q", i, expr)
		}
		if expr[j] == '}' {
			return labels, j + 1, nil
		}
		k := j
		for k < len(expr) && isIdent(expr[k]) {
			k++
		}
		name := expr[j:k]
		for k < len(expr) && expr[k] == ' ' {
			k++
		}
		o := k
		for k < len(expr) && strings.IndexByte("=!~", expr[k]) >= 0 {
			k++
		}
		op := expr[o:k]
		for k < len(expr) && expr[k] == ' ' {
			k++
		}
		if name == "" || op == "" || k >= len(expr) || strings.IndexByte("\"'`", expr[k]) < 0 {
			return nil, 0, fmt.Errorf("bad label matcher at %d in %q", j, expr)
		}
		value, end, err := readString(expr, k)
		if err != nil {
			return nil, 0, err
		}
		if op == "=" && !strings.Contains(value, "$") {
			labels[name] = value
		}
		j = end
	}
}

func TestPromSelectors(t *testing.T) {
	sel := func(name string, kv ...string) selector {
		s := selector{name: name, labels: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			s.labels[kv[i]] = kv[i+1]
		}
		return s
	}
	cases := []struct {
		expr string
		want []selector
	}{
		{"up == 0", []selector{sel("up")}},
		{`prepl_lag_seconds{job="prepl"} > 60`, []selector{sel("prepl_lag_seconds", "job", "prepl")}},
		{`deriv(prepl_source_behind_bytes[10m]) > 0`, []selector{sel("prepl_source_behind_bytes")}},
		{`max_over_time(prepl_errors_total{job="prepl", class="fatal"}[15m]) > 0`,
			[]selector{sel("prepl_errors_total", "job", "prepl", "class", "fatal")}},
		{`sum by (job, instance, peer) (increase(prepl_reconnects_total{job="prepl"}[15m])) > 5`,
			[]selector{sel("prepl_reconnects_total", "job", "prepl")}},
		{`sum(rate(x_total[5m])) without (instance) / on (job) group_left (version) y_info`,
			[]selector{sel("x_total"), sel("y_info")}},
		{`histogram_quantile(0.9, sum by (job, instance, le) (rate(h_bucket{job=~"$job", instance=~"$instance"}[$__rate_interval])))`,
			[]selector{sel("h_bucket")}},
		{`rate(a_sum{instance="$instance"}[${__rate_interval}]) / rate(a_count[5m] offset 1h)`,
			[]selector{sel("a_sum"), sel("a_count")}},
		{`time() - t_seconds{job="a,b}", x!="y"}`, []selector{sel("t_seconds", "job", "a,b}")}},
		{`{__name__="by_name", peer='source'} or vector(0) and bool 1e3 unless Inf`,
			[]selector{sel("by_name", "peer", "source")}},
		{"count_values(\"v\", m1) # comment: not_a_metric\n+ m2", []selector{sel("m1"), sel("m2")}},
		{`topk(3, m3) and on() m4`, []selector{sel("m3"), sel("m4")}},
	}
	for _, c := range cases {
		got, err := promSelectors(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got  %v\n want %v", c.expr, got, c.want)
		}
	}
	for _, bad := range []string{`m{job="x"`, `m{job=}`, `rate(m[5m)`, `m{job="x}`} {
		if got, err := promSelectors(bad); err == nil {
			t.Errorf("%s: no error, got %v", bad, got)
		}
	}
}
