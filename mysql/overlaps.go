package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/prepl/prepl/txn"
)

// markWithoutOverlaps sets IndexDef.WithoutOverlaps on d's unique keys
// declared with a period WITHOUT OVERLAPS (MariaDB 10.5+). information_schema
// lists such a key as its columns and the period's end and start columns,
// like a plain unique key over them, and MariaDB 10.11 has no view of
// periods: only SHOW CREATE TABLE tells them apart, asked only for a table
// with a candidate (a key ending in two NOT NULL temporal columns).
func markWithoutOverlaps(ctx context.Context, db *sql.DB, d *txn.TableDef) error {
	candidate := false
	for _, ix := range d.Indexes {
		if n := len(ix.Columns); n >= 2 && periodColumn(d, ix.Columns[n-1]) && periodColumn(d, ix.Columns[n-2]) {
			candidate = true
		}
	}
	if !candidate {
		return nil
	}
	var name, create string
	if err := db.QueryRowContext(ctx, "SHOW CREATE TABLE "+QuoteIdent(d.Schema)+"."+QuoteIdent(d.Name)).Scan(&name, &create); err != nil {
		return fmt.Errorf("read the keys WITHOUT OVERLAPS of %s: %w", d.QualifiedName(), err)
	}
	for _, k := range keysWithoutOverlaps(create) {
		for i := range d.Indexes {
			if strings.EqualFold(d.Indexes[i].Name, k) {
				d.Indexes[i].WithoutOverlaps = true
			}
		}
	}
	return nil
}

// periodColumn: column c can bound an application-time period.
func periodColumn(d *txn.TableDef, c int) bool {
	if c < 0 || c >= len(d.Columns) || d.Columns[c].Nullable {
		return false
	}
	switch d.Columns[c].DataType {
	case "date", "datetime", "timestamp":
		return true
	}
	return false
}

// keysWithoutOverlaps returns the names of the keys a SHOW CREATE TABLE
// text declares WITHOUT OVERLAPS ("PRIMARY" for the primary key). A key
// whose comment holds the words is taken too: that only costs
// parallelism and compaction.
func keysWithoutOverlaps(create string) []string {
	var keys []string
	for _, line := range strings.Split(create, "\n") {
		line = strings.TrimSpace(line)
		if !strings.Contains(line, " WITHOUT OVERLAPS)") {
			continue
		}
		switch {
		case strings.HasPrefix(line, "PRIMARY KEY "):
			keys = append(keys, "PRIMARY")
		case strings.HasPrefix(line, "UNIQUE KEY "):
			if k := leadingIdent(line[len("UNIQUE KEY "):]); k != "" {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// leadingIdent reads the identifier s starts with, quoted with backticks
// or double quotes (a doubled quote stands for one), or bare up to a
// space.
func leadingIdent(s string) string {
	if s == "" {
		return ""
	}
	q := s[0]
	if q != '`' && q != '"' {
		name, _, _ := strings.Cut(s, " ")
		return name
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != q {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String()
	}
	return ""
}
