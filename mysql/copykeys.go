package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/prepl/prepl/tabledef"
)

// Into MySQL/MariaDB, an InnoDB table is created with its primary key
// only; its other keys (KEY, UNIQUE KEY) are added by one ALTER TABLE once
// its rows are all copied, as myloader's --innodb-optimize-keys does:
// InnoDB then builds each index by sorting, not row by row in key order
// of the primary key. The keys waiting are recorded in prepl.copy_keys
// before the table is created, so a copy killed at any point adds them
// when it resumes (FinishTable adds those missing by name, then forgets
// the record); a table that was on the target before the copy has no
// record, and is left as it is.
//
// A table keeps its keys at creation when a foreign key is involved,
// its own or another copied table's referencing it: a foreign key needs
// an index on its columns at creation (InnoDB would create one of its
// own). So does a table without a primary key (InnoDB clusters it by its
// first NOT NULL unique key) and one whose AUTO_INCREMENT column is not
// first in the primary key. FULLTEXT and SPATIAL keys are always created
// with the table.

// splitKeys returns SHOW CREATE TABLE's create without its KEY and
// UNIQUE KEY lines, and those lines; ok false when there is nothing to
// defer or the text is not shaped as SHOW CREATE TABLE writes it (one
// definition a line, the table's options on the last).
func splitKeys(create string) (table string, keys []string, ok bool) {
	lines := strings.Split(create, "\n")
	if len(lines) < 3 || !strings.HasSuffix(lines[0], "(") || !strings.HasPrefix(lines[len(lines)-1], ")") ||
		!strings.Contains(lines[len(lines)-1], "ENGINE=InnoDB") {
		return create, nil, false
	}
	var kept []string
	for _, l := range lines[1 : len(lines)-1] {
		def := strings.TrimSuffix(l, ",")
		if !strings.HasPrefix(def, "  ") {
			return create, nil, false // a definition across lines: not SHOW CREATE TABLE's shape
		}
		if strings.HasPrefix(def, "  KEY `") || strings.HasPrefix(def, "  UNIQUE KEY `") {
			keys = append(keys, strings.TrimSpace(def))
			continue
		}
		kept = append(kept, def)
	}
	if len(keys) == 0 || !slices.ContainsFunc(kept, func(def string) bool { return strings.HasPrefix(def, "  PRIMARY KEY (") }) {
		return create, nil, false // without a primary key, InnoDB clusters by the first NOT NULL unique key
	}
	return lines[0] + "\n" + strings.Join(kept, ",\n") + "\n" + lines[len(lines)-1], keys, true
}

// keyName is the name of a KEY or UNIQUE KEY definition: `name` (...).
func keyName(def string) string {
	i := strings.IndexByte(def, '`')
	if i < 0 {
		return ""
	}
	var b strings.Builder
	for j := i + 1; j < len(def); j++ {
		if def[j] == '`' {
			if j+1 < len(def) && def[j+1] == '`' {
				b.WriteByte('`')
				j++
				continue
			}
			return b.String()
		}
		b.WriteByte(def[j])
	}
	return ""
}

// NoteForeignKeys tells the target every table the copy creates, before
// the first: a table referenced by a foreign key keeps its keys.
func (m *CopyTarget) NoteForeignKeys(tables []*tabledef.Table) {
	m.referenced = map[[2]string]bool{}
	for _, t := range tables {
		for _, fk := range t.ForeignKeys {
			s := fk.RefSchema
			if s == "" {
				s = t.Schema
			}
			m.referenced[[2]string{strings.ToLower(s), strings.ToLower(fk.RefTable)}] = true
		}
	}
}

// deferKeys reports whether d's keys can wait for its rows: not when a
// foreign key is involved, nor when the AUTO_INCREMENT column is not the
// primary key's first (InnoDB wants it first in some key at creation).
func (m *CopyTarget) deferKeys(d *tabledef.Table) bool {
	if m.keysAtCreate || len(d.ForeignKeys) > 0 || m.referenced[[2]string{strings.ToLower(d.Schema), strings.ToLower(d.Name)}] {
		return false
	}
	pk := d.PrimaryKey()
	for _, c := range d.Columns {
		if c.AutoInc && (pk == nil || !pk.Primary || !strings.EqualFold(pk.Columns[0], c.Name)) {
			return false
		}
	}
	return true
}

// FinishTable adds the keys recorded as waiting for d's rows.
func (m *CopyTarget) FinishTable(ctx context.Context, d *tabledef.Table) error {
	var keys string
	err := m.DB.QueryRowContext(ctx, "SELECT key_defs FROM prepl.copy_keys WHERE channel = ? AND schema_name = ? AND table_name = ?",
		m.channel, d.Schema, d.Name).Scan(&keys)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	have := map[string]bool{}
	rows, err := m.DB.QueryContext(ctx, "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", d.Schema, d.Name)
	if err != nil {
		return err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		have[strings.ToLower(n)] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var add []string
	for _, k := range strings.Split(keys, "\n") {
		if k != "" && !have[strings.ToLower(keyName(k))] {
			add = append(add, "ADD "+k)
		}
	}
	if len(add) > 0 {
		c, err := m.DB.Conn(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		for _, q := range []string{"SET SESSION foreign_key_checks = 0", "SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'",
			"ALTER TABLE " + QuoteIdent(d.Schema) + "." + QuoteIdent(d.Name) + " " + strings.Join(add, ", ")} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("add the keys after the rows: %w", err)
			}
		}
	}
	_, err = m.DB.ExecContext(ctx, "DELETE FROM prepl.copy_keys WHERE channel = "+QuoteString(m.channel)+
		" AND schema_name = "+QuoteString(d.Schema)+" AND table_name = "+QuoteString(d.Name))
	return err
}
