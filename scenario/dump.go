package scenario

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/prepl/prepl/mysql"
)

// Package verify compares base tables with SELECT *, which leaves out
// invisible columns, the history of system-versioned tables, sequences and
// table definitions, and does not look at routines, triggers, views or
// events; a scenario compares all of them, so Dump captures a server's
// state as sorted lines.

// systemSchemas are never dumped; prepl's own schema is compared by
// "no-rows" checks instead.
var systemSchemas = map[string]bool{"mysql": true, "information_schema": true,
	"performance_schema": true, "sys": true, "prepl": true}

var autoIncrement = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// Dump returns the state of every non-system schema of db as sorted lines:
// schemas, table definitions (SHOW CREATE TABLE without the AUTO_INCREMENT
// counter, which a row-based replica need not reproduce), every row of
// every table, sequence and system-versioned history, and the
// definitions of views, triggers, routines and events; and the server's
// accounts and roles with their grants (password hashes included), which
// CREATE USER, GRANT and the like replicate as statements.
func Dump(ctx context.Context, db *sql.DB) ([]string, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	d := &dumper{ctx: ctx, c: conn}
	d.lines(`SELECT CONCAT_WS(' ', 'schema', SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME)
		FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN `+notSystem, "")
	d.lines(`SELECT CONCAT_WS(' | ', 'view', TABLE_SCHEMA, TABLE_NAME, DEFINER, SECURITY_TYPE, CHECK_OPTION, VIEW_DEFINITION)
		FROM information_schema.VIEWS WHERE TABLE_SCHEMA NOT IN `+notSystem, "")
	d.lines(`SELECT CONCAT_WS(' | ', 'trigger', TRIGGER_SCHEMA, TRIGGER_NAME, EVENT_OBJECT_TABLE, ACTION_TIMING,
		EVENT_MANIPULATION, ACTION_ORDER, DEFINER, SQL_MODE, ACTION_STATEMENT)
		FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA NOT IN `+notSystem, "")
	d.lines(`SELECT CONCAT_WS(' | ', 'routine', ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE, DEFINER, SECURITY_TYPE,
		SQL_MODE, DTD_IDENTIFIER, ROUTINE_DEFINITION)
		FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA NOT IN `+notSystem, "")
	d.lines(`SELECT CONCAT_WS(' | ', 'event', EVENT_SCHEMA, EVENT_NAME, DEFINER, EVENT_TYPE, EXECUTE_AT, INTERVAL_VALUE,
		INTERVAL_FIELD, STARTS, ENDS, ON_COMPLETION, STATUS, EVENT_DEFINITION)
		FROM information_schema.EVENTS WHERE EVENT_SCHEMA NOT IN `+notSystem, "")
	for _, t := range d.tables() {
		d.table(t)
	}
	d.accounts()
	if d.err != nil {
		return nil, d.err
	}
	sort.Strings(d.out)
	return d.out, nil
}

const notSystem = "('mysql', 'information_schema', 'performance_schema', 'sys', 'prepl')"

type dumper struct {
	ctx context.Context
	c   *sql.Conn
	out []string
	err error
}

type table struct{ schema, name, kind string }

func (t table) quoted() string { return mysql.QuoteIdent(t.schema) + "." + mysql.QuoteIdent(t.name) }

// lines appends the single string column of query's rows, each prefixed.
func (d *dumper) lines(query, prefix string, args ...any) {
	if d.err != nil {
		return
	}
	rows, err := d.c.QueryContext(d.ctx, query, args...)
	if err != nil {
		d.err = fmt.Errorf("%s: %w", strings.Fields(query)[0], err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			d.err = err
			return
		}
		d.out = append(d.out, prefix+s.String)
	}
	if err := rows.Err(); err != nil {
		d.err = err
	}
}

func (d *dumper) tables() []table {
	if d.err != nil {
		return nil
	}
	rows, err := d.c.QueryContext(d.ctx, `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES
		WHERE TABLE_TYPE <> 'VIEW' AND TABLE_SCHEMA NOT IN `+notSystem)
	if err != nil {
		d.err = err
		return nil
	}
	defer rows.Close()
	var out []table
	for rows.Next() {
		var t table
		if err := rows.Scan(&t.schema, &t.name, &t.kind); err != nil {
			d.err = err
			return nil
		}
		out = append(out, t)
	}
	d.err = rows.Err()
	return out
}

// table dumps t's definition and rows; invisible columns included, and a
// system-versioned table's history.
func (d *dumper) table(t table) {
	if d.err != nil {
		return
	}
	var name, create string
	if err := d.c.QueryRowContext(d.ctx, "SHOW CREATE TABLE "+t.quoted()).Scan(&name, &create); err != nil {
		d.err = fmt.Errorf("show create table %s.%s: %w", t.schema, t.name, err)
		return
	}
	id := t.schema + "." + t.name
	d.out = append(d.out, "create "+id+" "+autoIncrement.ReplaceAllString(create, ""))
	cols, err := d.columns(t)
	if err != nil {
		d.err = err
		return
	}
	from := t.quoted()
	if t.kind == "SYSTEM VERSIONED" {
		from += " FOR SYSTEM_TIME ALL"
	}
	order := make([]string, len(cols))
	for i := range cols {
		order[i] = strconv.Itoa(i + 1)
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + from + " ORDER BY " + strings.Join(order, ", ")
	rows, err := d.c.QueryContext(d.ctx, q)
	if err != nil {
		d.err = fmt.Errorf("read %s: %w", id, err)
		return
	}
	defer rows.Close()
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			d.err = err
			return
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = "NULL"
			if v != nil {
				parts[i] = strconv.Quote(string(v))
			}
		}
		// Duplicate rows of a keyless table stay as duplicate lines: Diff
		// compares multisets.
		d.out = append(d.out, "row "+id+" ("+strings.Join(parts, ", ")+")")
	}
	d.err = rows.Err()
}

// columns lists t's columns, invisible ones included (SELECT * omits them).
func (d *dumper) columns(t table) ([]string, error) {
	rows, err := d.c.QueryContext(d.ctx, `SELECT COLUMN_NAME FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, t.schema, t.name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, mysql.QuoteIdent(c))
	}
	return out, rows.Err()
}

// Diff describes how got differs from want (both sorted), or returns "".
func Diff(want, got []string) string {
	var missing, extra []string
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || i < len(want) && want[i] < got[j]:
			missing = append(missing, want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			extra = append(extra, got[j])
			j++
		default:
			i++
			j++
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	var b strings.Builder
	show := func(sign string, ls []string) {
		for k, l := range ls {
			if k == 6 {
				fmt.Fprintf(&b, "%s ... %d more\n", sign, len(ls)-k)
				break
			}
			if len(l) > 300 {
				l = l[:300] + "..."
			}
			fmt.Fprintf(&b, "%s %s\n", sign, l)
		}
	}
	show("- reference:", missing)
	show("+ target:   ", extra)
	return strings.TrimSuffix(b.String(), "\n")
}

// accounts appends SHOW GRANTS of every user and role.
func (d *dumper) accounts() {
	if d.err != nil {
		return
	}
	rows, err := d.c.QueryContext(d.ctx, "SELECT User, Host FROM mysql.global_priv")
	if err != nil {
		d.err = fmt.Errorf("accounts: %w", err)
		return
	}
	var names []string
	for rows.Next() {
		var user, host string
		if err := rows.Scan(&user, &host); err != nil {
			rows.Close()
			d.err = err
			return
		}
		name := mysql.QuoteString(user) // a role has no host
		if host != "" {
			name += "@" + mysql.QuoteString(host)
		}
		names = append(names, name)
	}
	rows.Close()
	if d.err = rows.Err(); d.err != nil {
		return
	}
	for _, n := range names {
		d.lines("SHOW GRANTS FOR "+n, "grants "+n+" | ")
		if d.err != nil && strings.Contains(d.err.Error(), "1141") { // an account with no grant at all
			d.err = nil
			d.out = append(d.out, "grants "+n+" | none")
		}
	}
}
