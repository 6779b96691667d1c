package analyze

import (
	"slices"
	"strings"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

// fkRef is a child row's reference to its parent row through a foreign
// key: the key's name for people (`db.child (cols) → db.parent (cols)`)
// and the parent row's name as rowKeyName names it.
type fkRef struct {
	fk, row string
}

// references lists, without duplicates, the parent rows tx's row changes
// reference through the foreign keys cat knows, over before and after
// images as the writeset tracker keys them (depend.Keys: a reference is
// the parent's row key, held shared, so it waits for a change to that row
// in flight; an update that keeps its reference holds none). A key is named only when it references the parent's row key
// (its primary key, else a NOT NULL unique key), as hot keys name rows; a
// NULL part references nothing.
func references(tx *txn.Txn, cat txn.Catalog, targets map[*txn.ForeignKeyDef]*fkTarget, buf []fkRef) []fkRef {
	out := buf[:0]
	var lastTable *txn.Table
	var def *txn.TableDef
	for _, ch := range tx.Changes {
		rc := ch.Row
		if rc == nil || rc.Table == nil {
			continue
		}
		if rc.Table != lastTable {
			lastTable, def = rc.Table, nil
			if d, ok := cat.Table(rc.Table.Schema, rc.Table.Name); ok && d != nil && len(d.ForeignKeys) > 0 {
				def = d
			}
		}
		if def == nil {
			continue
		}
		for i := range def.ForeignKeys {
			fk := &def.ForeignKeys[i]
			tg := targets[fk]
			if tg == nil {
				tg = &fkTarget{}
				if tg.parent, tg.ix, tg.order = refTarget(cat, def, fk); tg.ix != nil {
					tg.name = fkName(def, fk, tg.parent, tg.ix)
				}
				targets[fk] = tg
			}
			parent, ix, order := tg.parent, tg.ix, tg.order
			if ix == nil || depend.KeepsReference(def, fk, rc) {
				continue // an update keeping its reference holds none
			}
			for _, img := range [][]txn.Value{rc.Before, rc.After} {
				if img == nil {
					continue
				}
				pimg, ok := parentImage(parent, ix, order, fk, img)
				if !ok {
					continue
				}
				if row, ok := rowKeyName(parent, ix, pimg); ok {
					out = append(out, fkRef{fk: tg.name, row: row})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b fkRef) int {
		if c := strings.Compare(a.fk, b.fk); c != 0 {
			return c
		}
		return strings.Compare(a.row, b.row)
	})
	return slices.Compact(out)
}

// fkTarget is what references needs of a foreign key, found once.
type fkTarget struct {
	parent *txn.TableDef
	ix     *txn.IndexDef // nil: the key does not reference the parent's row key
	order  []int
	name   string
}

// refTarget returns the parent of fk and its row key, when the key
// references exactly the row key's columns; order[j] is the position in
// fk.Columns of the row key's j-th column.
func refTarget(cat txn.Catalog, child *txn.TableDef, fk *txn.ForeignKeyDef) (*txn.TableDef, *txn.IndexDef, []int) {
	schema := fk.RefSchema
	if schema == "" {
		schema = child.Schema
	}
	parent, ok := cat.Table(schema, fk.RefTable)
	if !ok || parent == nil || len(fk.Columns) != len(fk.RefColumns) {
		return nil, nil, nil
	}
	ix := parent.RowKey()
	if ix == nil || len(ix.Columns) != len(fk.RefColumns) {
		return nil, nil, nil
	}
	order := make([]int, len(ix.Columns))
	for j, c := range ix.Columns {
		if c < 0 || c >= len(parent.Columns) {
			return nil, nil, nil
		}
		k := slices.IndexFunc(fk.RefColumns, func(n string) bool { return strings.EqualFold(n, parent.Columns[c].Name) })
		if k < 0 {
			return nil, nil, nil
		}
		order[j] = k
	}
	return parent, ix, order
}

// parentImage builds the parent row's image (its row key columns only)
// from a child image; false when a part is NULL or not in the image.
func parentImage(parent *txn.TableDef, ix *txn.IndexDef, order []int, fk *txn.ForeignKeyDef, img []txn.Value) ([]txn.Value, bool) {
	pimg := make([]txn.Value, len(parent.Columns))
	for j, c := range ix.Columns {
		cc := fk.Columns[order[j]]
		if cc < 0 || cc >= len(img) || img[cc] == nil {
			return nil, false
		}
		pimg[c] = img[cc]
	}
	return pimg, true
}

// fkName names a foreign key for people: `db.child (c1, c2) → db.parent (p1, p2)`.
func fkName(child *txn.TableDef, fk *txn.ForeignKeyDef, parent *txn.TableDef, ix *txn.IndexDef) string {
	var b strings.Builder
	b.WriteString(child.Schema + "." + child.Name + " (")
	for i, c := range fk.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		if c >= 0 && c < len(child.Columns) {
			b.WriteString(child.Columns[c].Name)
		}
	}
	b.WriteString(") → " + parent.Schema + "." + parent.Name + " (")
	b.WriteString(strings.Join(fk.RefColumns, ", "))
	b.WriteString(")")
	return b.String()
}

// recent reports whether row was changed by one of the window
// transactions before seq (hotKeys.add has not seen seq yet).
func (h *hotKeys) recent(row string, seq uint64) bool {
	prev, ok := h.last[row]
	return ok && prev < seq && prev+h.window >= seq
}
