package pgmigrate

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// sameRows compares every table of the source database DB with the table
// of the same name in the PostgreSQL schema DB, row by row in id order,
// every column as text: the same check for both systems' targets. The
// benchmark's tables (sysbench's and the end marker) have integer and
// character columns only, whose text is the same on both sides.
func sameRows(ctx context.Context, src, pg *sql.DB) error {
	tables, err := columns(ctx, src)
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		return fmt.Errorf("no table in %s on the source", DB)
	}
	for _, t := range tables {
		if err := sameTable(ctx, src, pg, t.name, t.cols); err != nil {
			return fmt.Errorf("%s.%s: %w", DB, t.name, err)
		}
	}
	return nil
}

type tableCols struct {
	name string
	cols []string
}

// columns lists the source's tables of DB and their columns in order.
func columns(ctx context.Context, src *sql.DB) ([]tableCols, error) {
	rows, err := src.QueryContext(ctx, "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION", DB)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tableCols
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].name != t {
			out = append(out, tableCols{name: t})
		}
		out[len(out)-1].cols = append(out[len(out)-1].cols, c)
	}
	return out, rows.Err()
}

func sameTable(ctx context.Context, src, pg *sql.DB, table string, cols []string) error {
	my := make([]string, len(cols))
	pq := make([]string, len(cols))
	for i, c := range cols {
		// Aliased: PostgreSQL's ORDER BY id would take the text column.
		my[i] = fmt.Sprintf("CAST(`%s` AS CHAR) AS c%d", c, i)
		pq[i] = fmt.Sprintf(`"%s"::text AS c%d`, c, i)
	}
	a, err := src.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM `%s`.`%s` ORDER BY id", strings.Join(my, ", "), DB, table))
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer a.Close()
	b, err := pg.QueryContext(ctx, fmt.Sprintf(`SELECT %s FROM "%s"."%s" ORDER BY id`, strings.Join(pq, ", "), DB, table))
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer b.Close()
	va, vb := make([]sql.NullString, len(cols)), make([]sql.NullString, len(cols))
	pa, pb := make([]any, len(cols)), make([]any, len(cols))
	for i := range cols {
		pa[i], pb[i] = &va[i], &vb[i]
	}
	n := 0
	for {
		na, nb := a.Next(), b.Next()
		if !na || !nb {
			if err := a.Err(); err != nil {
				return fmt.Errorf("source: %w", err)
			}
			if err := b.Err(); err != nil {
				return fmt.Errorf("target: %w", err)
			}
			if na != nb {
				return fmt.Errorf("after %d equal rows, only the %s has more", n, map[bool]string{true: "source", false: "target"}[na])
			}
			return nil
		}
		if err := a.Scan(pa...); err != nil {
			return err
		}
		if err := b.Scan(pb...); err != nil {
			return err
		}
		for i, c := range cols {
			if va[i] != vb[i] {
				return fmt.Errorf("row %d (id %s): column %s is %q on the source, %q on the target", n+1, va[0].String, c, va[i].String, vb[i].String)
			}
		}
		n++
	}
}
