package analyze

import (
	"cmp"
	"fmt"

	"github.com/prepl/prepl/txn"
)

// MetadataCatalog is a txn.Catalog learned from the binlog itself: the
// table map events that precede every rows event. With
// binlog_row_metadata=FULL (MariaDB 10.5+, MySQL 8.0) they carry column
// names and the primary key; without it, nothing about keys.
//
// What it cannot know, and how the dependency tracker is kept on the safe
// side (a false conflict costs predicted speed; a missed one would
// overstate it):
//   - no primary key in the metadata (the table has none, or the metadata
//     is not FULL): no index, so every change of the table holds a
//     table-wide key and the table's transactions serialize;
//   - text columns: the charset and collation are not carried, so every
//     string column gets a case- and accent-insensitive collation, which
//     only merges key values;
//   - unique secondary keys, foreign keys and triggers are not in the
//     binlog: they are unknown, so their conflicts are not seen (give
//     --catalog to load them from a server).
type MetadataCatalog struct {
	tables map[string]*metaTable
}

type metaTable struct {
	src      *txn.Table
	def      *txn.TableDef
	keyKnown bool // the metadata says what the primary key is (or that there is none)
}

// NewMetadataCatalog returns an empty catalog.
func NewMetadataCatalog() *MetadataCatalog {
	return &MetadataCatalog{tables: map[string]*metaTable{}}
}

// Observe learns the tables of tx's row changes; a changed table map
// (after an ALTER) replaces the definition.
func (c *MetadataCatalog) Observe(tx *txn.Txn) {
	for _, ch := range tx.Changes {
		if ch.Row == nil || ch.Row.Table == nil {
			continue
		}
		t := ch.Row.Table
		k := t.Schema + "\x00" + t.Name
		if m := c.tables[k]; m != nil && m.src == t {
			continue
		}
		c.tables[k] = &metaTable{src: t, def: defFromTableMap(t), keyKnown: t.Names != nil}
	}
}

// Table implements txn.Catalog.
func (c *MetadataCatalog) Table(schema, name string) (*txn.TableDef, bool) {
	m := c.tables[schema+"\x00"+name]
	if m == nil {
		return nil, false
	}
	return m.def, true
}

// KeyKnown reports whether the binlog's metadata names the table's
// primary key, or says it has none (binlog_row_metadata=FULL).
func (c *MetadataCatalog) KeyKnown(schema, name string) bool {
	m := c.tables[schema+"\x00"+name]
	return m != nil && m.keyKnown
}

func defFromTableMap(t *txn.Table) *txn.TableDef {
	d := &txn.TableDef{Schema: t.Schema, Name: t.Name, Transactional: true}
	for i, typ := range t.Types {
		c := txn.ColumnDef{Name: fmt.Sprintf("@%d", i+1), DataType: cmp.Or(txn.DataTypeName(typ), "unknown")}
		if i < len(t.Names) {
			c.Name = t.Names[i]
		}
		if i < len(t.Unsigned) {
			c.Unsigned = t.Unsigned[i]
		}
		if i < len(t.Nullable) {
			c.Nullable = t.Nullable[i]
		}
		if isStringType(typ) {
			c.Charset, c.Collation = "utf8mb4", "utf8mb4_general_ci"
		}
		d.Columns = append(d.Columns, c)
	}
	if len(t.PrimaryKey) > 0 {
		d.Indexes = []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: append([]int(nil), t.PrimaryKey...)}}
	}
	return d
}

func isStringType(typ byte) bool {
	switch typ {
	case txn.TypeVarchar, txn.TypeVarString, txn.TypeString, txn.TypeTinyBlob, txn.TypeMediumBlob,
		txn.TypeLongBlob, txn.TypeBlob, txn.TypeJSON, txn.TypeGeometry:
		return true
	}
	return false
}

// layeredCatalog answers from a better catalog (a server's) when it knows
// the table, else from the binlog's metadata.
type layeredCatalog struct {
	primary txn.Catalog
	meta    *MetadataCatalog
}

func (l layeredCatalog) Table(schema, name string) (*txn.TableDef, bool) {
	if l.primary != nil {
		if d, ok := l.primary.Table(schema, name); ok && d != nil {
			return d, true
		}
	}
	return l.meta.Table(schema, name)
}

// fromPrimary reports whether the better catalog knows the table.
func (l layeredCatalog) fromPrimary(schema, name string) bool {
	if l.primary == nil {
		return false
	}
	d, ok := l.primary.Table(schema, name)
	return ok && d != nil
}
