// Package verify compares a target with its source: every table, row by
// row or by checksum. It is how tests, the demo and the benchmark prove a
// run correct.
package verify

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// systemSchemas are never compared (prepl's own position table included).
var systemSchemas = map[string]bool{"mysql": true, "information_schema": true,
	"performance_schema": true, "sys": true, "prepl": true}

// Tables lists schema.table of every base table outside the system schemas.
func Tables(ctx context.Context, db *sql.DB) ([]string, error) {
	ts, err := tables(ctx, db)
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out, err
}

// table is a schema and a table name: either may hold a dot.
type table struct{ schema, name string }

func (t table) String() string { return t.schema + "." + t.name }

func (t table) quoted() string { return ident(t.schema) + "." + ident(t.name) }

func ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func tables(ctx context.Context, db *sql.DB) ([]table, error) {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_TYPE = 'BASE TABLE'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []table
	for rows.Next() {
		var t table
		if err := rows.Scan(&t.schema, &t.name); err != nil {
			return nil, err
		}
		if !systemSchemas[strings.ToLower(t.schema)] {
			out = append(out, t)
		}
	}
	// Sorted here, by bytes: the server's collation can tie on t and T.
	sort.Slice(out, func(i, j int) bool {
		if out[i].schema != out[j].schema {
			return out[i].schema < out[j].schema
		}
		return out[i].name < out[j].name
	})
	return out, rows.Err()
}

// column is a column's name and DATA_TYPE.
type column struct{ name, typ string }

// columns lists t's columns in their order.
func columns(ctx context.Context, db *sql.DB, t table) ([]column, error) {
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, t.schema, t.name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []column
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.typ); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func names(cs []column) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// Diff is a difference found between source and target.
type Diff struct {
	Table  string
	Detail string
}

func (d Diff) Error() string { return d.Table + ": " + d.Detail }

// Rows compares every table row by row (both sides ordered by all
// columns, then by a hash of each string column, so tables without a
// key, duplicate rows and rows that tie under a collation compare too).
// Values compare as bytes: 'a' and 'A' differ under any collation, as do
// NULL and the empty string. Column names compare too; column types do not. It returns
// nil when the target equals the source, a Diff at the first difference,
// another error when a side cannot be read.
func Rows(ctx context.Context, src, dst *sql.DB) error {
	return compare(ctx, src, dst, compareRows)
}

// Checksums compares every table with CHECKSUM TABLE, for large tables,
// after the column names (CHECKSUM TABLE skips NULLs, so a column more
// that is NULL everywhere would not show). A column type held
// differently shows as a difference.
func Checksums(ctx context.Context, src, dst *sql.DB) error {
	return compare(ctx, src, dst, compareChecksum)
}

func compare(ctx context.Context, src, dst *sql.DB, one func(context.Context, *sql.DB, *sql.DB, table, []column) error) error {
	st, err := tables(ctx, src)
	if err != nil {
		return fmt.Errorf("list source tables: %w", err)
	}
	dt, err := tables(ctx, dst)
	if err != nil {
		return fmt.Errorf("list target tables: %w", err)
	}
	if !slices.Equal(st, dt) {
		a, b := make([]string, len(st)), make([]string, len(dt))
		for i, t := range st {
			a[i] = t.String()
		}
		for i, t := range dt {
			b[i] = t.String()
		}
		return Diff{Table: "*", Detail: fmt.Sprintf("tables differ: source has %v, target has %v", missing(a, b), missing(b, a))}
	}
	for _, t := range st {
		sc, err := columns(ctx, src, t)
		if err != nil {
			return fmt.Errorf("list columns of %s on source: %w", t, err)
		}
		dc, err := columns(ctx, dst, t)
		if err != nil {
			return fmt.Errorf("list columns of %s on target: %w", t, err)
		}
		// Names only: a type the target holds differently still compares by value in Rows.
		if a, b := names(sc), names(dc); !slices.Equal(a, b) {
			return Diff{Table: t.String(), Detail: fmt.Sprintf("columns differ: source has %v, target has %v", a, b)}
		}
		if err := one(ctx, src, dst, t, sc); err != nil {
			return err
		}
	}
	return nil
}

func missing(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func compareChecksum(ctx context.Context, src, dst *sql.DB, t table, _ []column) error {
	var a, b sql.NullInt64
	var name string
	if err := src.QueryRowContext(ctx, "CHECKSUM TABLE "+t.quoted()).Scan(&name, &a); err != nil {
		return fmt.Errorf("checksum %s on source: %w", t, err)
	}
	if err := dst.QueryRowContext(ctx, "CHECKSUM TABLE "+t.quoted()).Scan(&name, &b); err != nil {
		return fmt.Errorf("checksum %s on target: %w", t, err)
	}
	if a != b {
		return Diff{Table: t.String(), Detail: fmt.Sprintf("checksum %d on source, %d on target", a.Int64, b.Int64)}
	}
	return nil
}

// tieTypes are the column types whose ORDER BY can tie on values that
// differ in bytes: strings under a collation ('a' = 'A', 'a' = 'a ' with
// PAD SPACE) and values past max_sort_length (1 KiB by default). Ordering
// by a hash of their bytes too makes the order of a table's rows a
// function of their bytes, so that equal tables read back alike. (MariaDB
// stores -0e0 as 0, so floats need none.)
var tieTypes = map[string]bool{"char": true, "varchar": true, "tinytext": true, "text": true,
	"mediumtext": true, "longtext": true, "varbinary": true, "tinyblob": true,
	"blob": true, "mediumblob": true, "longblob": true, "json": true}

func compareRows(ctx context.Context, src, dst *sql.DB, t table, cols []column) error {
	var order, ties []string
	for i, c := range cols {
		order = append(order, fmt.Sprint(i+1))
		if tieTypes[strings.ToLower(c.typ)] {
			ties = append(ties, "MD5("+ident(c.name)+")")
		}
	}
	q := "SELECT * FROM " + t.quoted() + " ORDER BY " + strings.Join(append(order, ties...), ",")
	sr, err := src.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("read %s on source: %w", t, err)
	}
	defer sr.Close()
	dr, err := dst.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("read %s on target: %w", t, err)
	}
	defer dr.Close()
	a, b := scanArgs(len(cols)), scanArgs(len(cols))
	for row := 1; ; row++ {
		sn, dn := sr.Next(), dr.Next()
		if !sn || !dn {
			// A read that failed is no missing row.
			if err := sr.Err(); err != nil {
				return fmt.Errorf("read %s on source: %w", t, err)
			}
			if err := dr.Err(); err != nil {
				return fmt.Errorf("read %s on target: %w", t, err)
			}
			if sn != dn {
				side := "target"
				if dn {
					side = "source"
				}
				return Diff{Table: t.String(), Detail: fmt.Sprintf("%s has fewer rows (first missing is row %d in order)", side, row)}
			}
			break
		}
		if err := sr.Scan(a...); err != nil {
			return err
		}
		if err := dr.Scan(b...); err != nil {
			return err
		}
		for i := range cols {
			x, y := *(a[i].(*sql.RawBytes)), *(b[i].(*sql.RawBytes))
			if !bytes.Equal(x, y) || (x == nil) != (y == nil) {
				return Diff{Table: t.String(), Detail: fmt.Sprintf("row %d column %s: source %s, target %s", row, cols[i].name, show(x), show(y))}
			}
		}
	}
	return nil
}

func scanArgs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = new(sql.RawBytes)
	}
	return out
}

func show(b []byte) string {
	if b == nil {
		return "NULL"
	}
	if len(b) > 64 {
		return fmt.Sprintf("%q...", b[:64])
	}
	return fmt.Sprintf("%q", b)
}
