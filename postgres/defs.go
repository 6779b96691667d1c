package postgres

import (
	"slices"
	"strings"
)

// Defs are the source's table definitions by source schema and name:
// what a PostgreSQL target needs to read the binlog's row images (column
// order, MySQL types, charsets, ENUM members, keys), which its own catalog
// does not say. Translate keeps them in step with each DDL it translates.
//
// Invariant: a *TableDef in Defs is never changed in place; a DDL puts a
// changed copy, so a Defs cloned before a DDL still holds the definitions
// before it.
type Defs map[string]*TableDef

func defKey(schema, name string) string { return schema + "." + name }

// Get returns the definition of schema.name, or nil.
func (d Defs) Get(schema, name string) *TableDef {
	if d == nil {
		return nil
	}
	return d[defKey(schema, name)]
}

// Put stores t under its schema and name.
func (d Defs) Put(t *TableDef) { d[defKey(t.Schema, t.Name)] = t }

// Clone returns a copy of the map (the definitions are shared: see the
// invariant).
func (d Defs) Clone() Defs {
	out := make(Defs, len(d))
	for k, v := range d {
		out[k] = v
	}
	return out
}

// Changed lists the keys whose definition differs between d and next
// (added, replaced or removed): what a DDL changed.
func (d Defs) Changed(next Defs) []string {
	var out []string
	for k, v := range next {
		if d[k] != v {
			out = append(out, k)
		}
	}
	for k := range d {
		if _, ok := next[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// columnIndex is the position of column name (case-insensitive), or -1.
func columnIndex(t *TableDef, name string) int {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return i
		}
	}
	return -1
}

// placeColumn puts c where ADD or MODIFY/CHANGE ... FIRST/AFTER says:
// replacing the column at old (-1: a new column), at the end when neither.
func placeColumn(t *TableDef, c columnDef, old int) {
	if old >= 0 && !c.first && c.after == "" {
		t.Columns[old] = c.Column
		return
	}
	if old >= 0 {
		t.Columns = slices.Delete(t.Columns, old, old+1)
	}
	at := len(t.Columns)
	switch {
	case c.first:
		at = 0
	case c.after != "":
		if i := columnIndex(t, c.after); i >= 0 {
			at = i + 1
		}
	}
	t.Columns = slices.Insert(t.Columns, at, c.Column)
}

// renameColumn renames a column in the table's indexes and foreign keys.
func renameColumn(t *TableDef, from, to string) {
	if i := columnIndex(t, from); i >= 0 {
		t.Columns[i].Name = to
	}
	for i := range t.Indexes {
		for j, c := range t.Indexes[i].Columns {
			if strings.EqualFold(c, from) {
				t.Indexes[i].Columns[j] = to
			}
		}
	}
	for i := range t.ForeignKeys {
		fk := &t.ForeignKeys[i]
		fk.Columns = slices.Clone(fk.Columns)
		for j, c := range fk.Columns {
			if strings.EqualFold(c, from) {
				fk.Columns[j] = to
			}
		}
	}
}

// dropColumn removes a column, and it from every index (an index left
// without columns goes, as MySQL drops it).
func dropColumn(t *TableDef, name string) {
	if i := columnIndex(t, name); i >= 0 {
		t.Columns = slices.Delete(t.Columns, i, i+1)
	}
	var keep []Index
	for _, ix := range t.Indexes {
		var cols []string
		var prefix []int
		for j, c := range ix.Columns {
			if !strings.EqualFold(c, name) {
				cols = append(cols, c)
				prefix = append(prefix, prefixAt(ix, j))
			}
		}
		if len(cols) > 0 {
			ix.Columns, ix.Prefix = cols, prefix
			keep = append(keep, ix)
		}
	}
	t.Indexes = keep
}

// removeIndex removes the index (or foreign key) named name; "PRIMARY" is
// the primary key.
func removeIndex(t *TableDef, name string) {
	t.Indexes = slices.DeleteFunc(t.Indexes, func(ix Index) bool { return strings.EqualFold(ix.Name, name) })
	t.ForeignKeys = slices.DeleteFunc(t.ForeignKeys, func(fk ForeignKey) bool { return strings.EqualFold(fk.Name, name) })
}

// rename moves the definition of db.t to db2.t2 (RENAME TABLE).
func (d Defs) rename(db, t, db2, t2 string) {
	old := d.Get(db, t)
	if old == nil {
		return
	}
	n := old.Clone()
	n.Schema, n.Name = db2, t2
	delete(d, defKey(db, t))
	d.Put(n)
}
