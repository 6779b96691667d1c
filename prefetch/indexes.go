package prefetch

import (
	"context"
	"database/sql"
	"strings"
	"sync"

	"github.com/prepl/prepl/txn"
)

// indexCache holds each table's read-ahead definition, loaded once from
// the target's information_schema.
type indexCache struct {
	db  *sql.DB
	cat txn.Catalog
	mu  sync.Mutex
	m   map[string]*table // nil value: nothing to read ahead
}

// lookup is a tables function: the catalog's definition (loaded by the
// engine before it renders) with every index of the table.
func (c *indexCache) lookup(ctx context.Context) tables {
	return func(schema, name string) *table {
		key := schema + "." + name
		c.mu.Lock()
		t, ok := c.m[key]
		c.mu.Unlock()
		if ok {
			return t
		}
		def, ok := c.cat.Table(schema, name)
		if !ok {
			return nil // not loaded yet: ask again next time
		}
		stats, err := loadIndexes(ctx, c.db, schema, name)
		if err != nil {
			return nil
		}
		t = newTable(def, stats)
		c.mu.Lock()
		c.m[key] = t
		c.mu.Unlock()
		return t
	}
}

// statRow is one row of information_schema.STATISTICS: an index's column,
// in the index's order.
type statRow struct {
	index, column string
	subPart       int
}

func loadIndexes(ctx context.Context, db *sql.DB, schema, name string) ([]statRow, error) {
	rows, err := db.QueryContext(ctx, `SELECT INDEX_NAME, COLUMN_NAME, COALESCE(SUB_PART, 0) FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND INDEX_TYPE = 'BTREE'
		ORDER BY INDEX_NAME = 'PRIMARY' DESC, INDEX_NAME, SEQ_IN_INDEX`, schema, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []statRow
	for rows.Next() {
		var r statRow
		if err := rows.Scan(&r.index, &r.column, &r.subPart); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// newTable makes a table's read-ahead definition from its catalog
// definition and its index columns; nil when there is nothing to read
// ahead: no primary key (an entry could not be named), a system-versioned
// table (hidden columns shift the images). An index with a prefix or a
// generated column is left out: a whole value would not name its entry.
func newTable(def *txn.TableDef, stats []statRow) *table {
	if def.SystemVersioned {
		return nil
	}
	pos := map[string]int{}
	for i, c := range def.Columns {
		pos[strings.ToLower(c.Name)] = i
	}
	var names []string
	cols := map[string][]int{}
	usable := map[string]bool{}
	for _, r := range stats {
		if _, seen := cols[r.index]; !seen {
			names = append(names, r.index)
			usable[r.index] = true
		}
		p, ok := pos[strings.ToLower(r.column)]
		if !ok || r.subPart > 0 || def.Columns[p].Generated {
			usable[r.index] = false
		}
		cols[r.index] = append(cols[r.index], p)
	}
	pk, ok := cols["PRIMARY"]
	if !ok || !usable["PRIMARY"] {
		return nil
	}
	t := &table{def: def}
	for _, n := range names {
		if !usable[n] {
			continue
		}
		ix := index{name: n, primary: n == "PRIMARY", columns: cols[n]}
		if !ix.primary {
			for _, c := range pk {
				if !contains(ix.columns, c) {
					ix.columns = append(ix.columns, c)
				}
			}
		}
		t.indexes = append(t.indexes, ix)
	}
	return t
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
