// Package verify compares a target with its source: every table, row by
// row or by checksum. It is how tests, the demo and the benchmark prove a
// run correct.
package verify

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// systemSchemas are never compared (prepl's own position table included).
var systemSchemas = map[string]bool{"mysql": true, "information_schema": true,
	"performance_schema": true, "sys": true, "prepl": true}

// Tables lists schema.table of every base table outside the system schemas.
func Tables(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s, t string
		if err := rows.Scan(&s, &t); err != nil {
			return nil, err
		}
		if !systemSchemas[strings.ToLower(s)] {
			out = append(out, s+"."+t)
		}
	}
	return out, rows.Err()
}

// Diff is a difference found between source and target.
type Diff struct {
	Table  string
	Detail string
}

func (d Diff) Error() string { return d.Table + ": " + d.Detail }

// Rows compares every table row by row (both sides ordered by all
// columns, so tables without a key and duplicate rows compare too). It
// returns nil when the target equals the source.
func Rows(ctx context.Context, src, dst *sql.DB) error {
	return compare(ctx, src, dst, compareRows)
}

// Checksums compares every table with CHECKSUM TABLE, for large tables.
func Checksums(ctx context.Context, src, dst *sql.DB) error {
	return compare(ctx, src, dst, compareChecksum)
}

func compare(ctx context.Context, src, dst *sql.DB, one func(context.Context, *sql.DB, *sql.DB, string) error) error {
	st, err := Tables(ctx, src)
	if err != nil {
		return fmt.Errorf("list source tables: %w", err)
	}
	dt, err := Tables(ctx, dst)
	if err != nil {
		return fmt.Errorf("list target tables: %w", err)
	}
	if a, b := strings.Join(st, ","), strings.Join(dt, ","); a != b {
		return Diff{Table: "*", Detail: fmt.Sprintf("tables differ: source has %v, target has %v", missing(st, dt), missing(dt, st))}
	}
	for _, t := range st {
		if err := one(ctx, src, dst, t); err != nil {
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

func quote(t string) string {
	s, n, _ := strings.Cut(t, ".")
	return "`" + strings.ReplaceAll(s, "`", "``") + "`.`" + strings.ReplaceAll(n, "`", "``") + "`"
}

func compareChecksum(ctx context.Context, src, dst *sql.DB, t string) error {
	var a, b sql.NullInt64
	var name string
	if err := src.QueryRowContext(ctx, "CHECKSUM TABLE "+quote(t)).Scan(&name, &a); err != nil {
		return fmt.Errorf("checksum %s on source: %w", t, err)
	}
	if err := dst.QueryRowContext(ctx, "CHECKSUM TABLE "+quote(t)).Scan(&name, &b); err != nil {
		return fmt.Errorf("checksum %s on target: %w", t, err)
	}
	if a != b {
		return Diff{Table: t, Detail: fmt.Sprintf("checksum %d on source, %d on target", a.Int64, b.Int64)}
	}
	return nil
}

// tieTypes are the column types whose ORDER BY can tie on values that
// differ in bytes: strings under a collation ('a' = 'A', 'a' = 'a ' with
// PAD SPACE), values past max_sort_length (1 KiB by default), -0 = 0.
// Ordering by a hash of their bytes too makes the order of a table's rows
// a function of their bytes, so that equal tables read back alike.
var tieTypes = map[string]bool{"char": true, "varchar": true, "tinytext": true, "text": true,
	"mediumtext": true, "longtext": true, "binary": true, "varbinary": true, "tinyblob": true,
	"blob": true, "mediumblob": true, "longblob": true, "json": true, "float": true, "double": true}

func compareRows(ctx context.Context, src, dst *sql.DB, t string) error {
	rows, err := src.QueryContext(ctx, `SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS
		WHERE CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) = ? ORDER BY ORDINAL_POSITION`, t)
	if err != nil {
		return err
	}
	var order, ties []string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return err
		}
		order = append(order, fmt.Sprint(len(order)+1))
		if tieTypes[strings.ToLower(typ)] {
			ties = append(ties, "MD5(`"+strings.ReplaceAll(name, "`", "``")+"`)")
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	q := "SELECT * FROM " + quote(t) + " ORDER BY " + strings.Join(append(order, ties...), ",")
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
	cols, _ := sr.Columns()
	a, b := scanArgs(len(cols)), scanArgs(len(cols))
	for row := 1; ; row++ {
		sn, dn := sr.Next(), dr.Next()
		if !sn || !dn {
			if sn != dn {
				side := "target"
				if dn {
					side = "source"
				}
				return Diff{Table: t, Detail: fmt.Sprintf("%s has fewer rows (first missing is row %d in order)", side, row)}
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
				return Diff{Table: t, Detail: fmt.Sprintf("row %d column %s: source %s, target %s", row, cols[i], show(x), show(y))}
			}
		}
	}
	if err := sr.Err(); err != nil {
		return err
	}
	return dr.Err()
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
