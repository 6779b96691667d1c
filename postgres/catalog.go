package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/prepl/prepl/fault"
	"github.com/prepl/prepl/txn"
)

// The target keeps the source's definitions of its tables in
// prepl.tables (one row per table: its parsed definition as JSON, and the
// statement that last set it): `prepl copy` writes them when it creates
// the tables, and each replicated DDL changes them in the DDL's own
// transaction, so they always describe the tables as the next row event
// of the stream sees them. A table missing there is read from the
// binlog's table map (binlog_row_metadata=FULL), for as long as no DDL
// comes; a table known nowhere is an error naming it.

// TablesSQL creates the catalog table.
const TablesSQL = `CREATE TABLE IF NOT EXISTS ` + PositionSchema + `.tables (
		schema_name text NOT NULL,
		table_name text NOT NULL,
		definition jsonb NOT NULL,
		source_sql text NOT NULL DEFAULT '',
		updated_at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (schema_name, table_name))`

// ErrNoTable is wrapped when a row event's table is known neither to
// the catalog nor to the binlog's table map (fatal, package fault).
var ErrNoTable = fault.Fatal(errors.New("table unknown to the PostgreSQL target"))

// table is one source table as rendering needs it.
type table struct {
	src *TableDef     // the source's definition: types, column order
	def *txn.TableDef // the same for the dependency tracker and compaction
	// fromMap: read from a table map (not in prepl.tables), valid while
	// the table maps say the same.
	fromMap bool
}

// Catalog holds the source's table definitions (Defs) for a PostgreSQL
// target and implements txn.Catalog over them.
type Catalog struct {
	mu     sync.Mutex
	defs   Defs              // as stored in prepl.tables
	meta   Defs              // from table maps, for tables defs lacks
	tables map[string]*table // both, derived
}

func newCatalog(defs Defs) *Catalog {
	c := &Catalog{meta: Defs{}}
	c.install(defs)
	return c
}

// install makes defs the catalog's stored definitions (after a DDL
// committed them). Definitions read from table maps stay: each use
// checks them against the table map at hand (lookup).
func (c *Catalog) install(defs Defs) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.defs = defs
	c.rebuild()
}

// rebuild derives the tracker's definitions; a table is Referenced when
// a foreign key of any table names it, and its Cascades are those with a
// referential action (the triggers cascadeSQL enables).
func (c *Catalog) rebuild() {
	refs := map[string]*txn.TableDef{}
	for _, d := range []Defs{c.defs, c.meta} {
		for _, t := range d {
			for _, fk := range t.ForeignKeys {
				k := defKey(fk.RefSchema, fk.RefTable)
				if refs[k] == nil {
					refs[k] = &txn.TableDef{Referenced: true}
				}
				if !action(fk.OnDelete) && !action(fk.OnUpdate) {
					continue
				}
				ref := txn.CascadeRef{Child: t.Schema + "." + t.Name, Name: fk.Name, OnDelete: action(fk.OnDelete), OnUpdate: action(fk.OnUpdate)}
				pt := c.defs[k]
				if pt == nil {
					pt = c.meta[k]
				}
				for _, rc := range fk.RefColumns {
					i := -1 // CanCascade takes an unknown column as changed
					if pt != nil {
						i = columnIndex(pt, rc)
					}
					ref.Columns = append(ref.Columns, i)
				}
				refs[k].Cascades = append(refs[k].Cascades, ref)
			}
		}
	}
	c.tables = map[string]*table{}
	for k, t := range c.meta {
		c.tables[k] = &table{src: t, def: trackerDef(t, refs[k]), fromMap: true}
	}
	for k, t := range c.defs {
		c.tables[k] = &table{src: t, def: trackerDef(t, refs[k])}
	}
}

// Defs returns a copy of the stored definitions (for a DDL to change).
func (c *Catalog) Defs() Defs {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.defs.Clone()
}

// Table implements txn.Catalog.
func (c *Catalog) Table(schema, name string) (*txn.TableDef, bool) {
	t := c.table(schema, name)
	if t == nil {
		return nil, false
	}
	return t.def, true
}

func (c *Catalog) table(schema, name string) *table {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tables[defKey(schema, name)]
}

// lookup returns the table of a row change, from the catalog or else
// from its table map.
func (c *Catalog) lookup(tb *txn.Table) (*table, error) {
	t := c.table(tb.Schema, tb.Name)
	if t != nil && t.fromMap && sameColumns(t.src, tb) {
		return t, nil
	}
	if t != nil && !t.fromMap {
		if len(t.src.Columns) != len(tb.Types) {
			return nil, fmt.Errorf("table %s has %d columns in prepl's catalog on the target (prepl.tables) but %d in the binlog: "+
				"the catalog does not describe the source's table (was a DDL applied around prepl?); "+
				"fix its row in prepl.tables, or copy the table again", tb.QualifiedName(), len(t.src.Columns), len(tb.Types))
		}
		return c.withCharsets(t, tb), nil
	}
	d, err := defFromTableMap(tb)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.meta.Put(d)
	c.rebuild()
	return c.tables[defKey(tb.Schema, tb.Name)], nil
}

// withCharsets fills in the charsets a CREATE TABLE left to the
// database's default (which the statement does not say) from the table
// map's, when it has them; the table is cached so.
func (c *Catalog) withCharsets(t *table, tb *txn.Table) *table {
	if tb.Collations == nil {
		return t
	}
	var fixed *TableDef
	for i := range t.src.Columns {
		col := &t.src.Columns[i]
		if col.Charset != "" || !textType(col.Type) || i >= len(tb.Collations) {
			continue
		}
		if cs := txn.CharsetOfCollation(tb.Collations[i]); cs != "" {
			if fixed == nil {
				fixed = t.src.Clone()
			}
			fixed.Columns[i].Charset = cs
		}
	}
	if fixed == nil {
		return t
	}
	n := &table{src: fixed, def: t.def}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tables[defKey(tb.Schema, tb.Name)] == t {
		c.tables[defKey(tb.Schema, tb.Name)] = n
	}
	return n
}

// sameColumns: the table map names the columns of d, in d's order.
func sameColumns(d *TableDef, tb *txn.Table) bool {
	if len(d.Columns) != len(tb.Types) || len(tb.Names) != len(tb.Types) {
		return false
	}
	for i, n := range tb.Names {
		if d.Columns[i].Name != n || txn.DataTypeName(tb.Types[i]) == "" {
			return false
		}
	}
	return true
}

// LoadTxn makes sure every table tx's rows change is known.
func (c *Catalog) LoadTxn(tx *txn.Txn) error {
	for _, ch := range tx.Changes {
		if ch.Row != nil {
			if _, err := c.lookup(ch.Row.Table); err != nil {
				return err // the engine names tx
			}
			if ev := ch.Row.Event; ev != nil && ev.Undecoded {
				return fmt.Errorf("the rows of %s have TIME, DATETIME or TIMESTAMP values with fractional seconds in MariaDB's "+
					"pre-10.1 format, which prepl decodes only for a MySQL or MariaDB target: rebuild the table on the source "+
					"(ALTER TABLE ... FORCE) or leave it out (--exclude)", ch.Row.Table.QualifiedName())
			}
		}
	}
	return nil
}

// trackerDef is t as the dependency tracker and compaction read it. The
// target has no triggers that fire for prepl's rows (its sessions are
// replicas) and writes generated columns as plain ones, so neither
// counts; every table is transactional.
func trackerDef(t *TableDef, refs *txn.TableDef) *txn.TableDef {
	d := &txn.TableDef{Schema: t.Schema, Name: t.Name, Transactional: true}
	if refs != nil {
		d.Referenced, d.Cascades = refs.Referenced, refs.Cascades
	}
	for _, c := range t.Columns {
		d.Columns = append(d.Columns, txn.ColumnDef{Name: c.Name, DataType: c.Type, Unsigned: c.Unsigned, Nullable: c.Nullable,
			Charset: c.Charset, Collation: c.Collation})
	}
	cols := func(names []string) ([]int, bool) {
		var out []int
		for _, n := range names {
			i := columnIndex(t, n)
			if i < 0 {
				return nil, false
			}
			out = append(out, i)
		}
		return out, true
	}
	for _, primary := range []bool{true, false} {
		for _, ix := range t.Indexes {
			if !ix.Unique || ix.Primary != primary {
				continue
			}
			c, ok := cols(ix.Columns)
			if !ok {
				continue
			}
			x := txn.IndexDef{Name: ix.Name, Primary: ix.Primary, Columns: c}
			for _, p := range ix.Prefix {
				if p > 0 {
					x.Prefix = ix.Prefix
				}
			}
			d.Indexes = append(d.Indexes, x)
		}
	}
	for _, fk := range t.ForeignKeys {
		c, ok := cols(fk.Columns)
		if !ok {
			continue
		}
		d.ForeignKeys = append(d.ForeignKeys, txn.ForeignKeyDef{Name: fk.Name, Columns: c, RefSchema: fk.RefSchema,
			RefTable: fk.RefTable, RefColumns: fk.RefColumns, OnDelete: pgAction(fk.OnDelete), OnUpdate: pgAction(fk.OnUpdate)})
	}
	return d
}

// defFromTableMap reads a definition from a table map with full row
// metadata: names, signedness, charsets, primary key. ENUM and SET
// members are not there: a value of such a column is an error naming it.
func defFromTableMap(tb *txn.Table) (*TableDef, error) {
	if len(tb.Names) != len(tb.Types) {
		return nil, fmt.Errorf("table %s: %w: it is not in prepl's catalog on the target (prepl.tables, written by prepl copy "+
			"and by each replicated CREATE TABLE) and the binlog has no column names for it (set binlog_row_metadata=FULL "+
			"on the source); copy the table with prepl copy first", tb.QualifiedName(), ErrNoTable)
	}
	t := &TableDef{Schema: tb.Schema, Name: tb.Name}
	for i, typ := range tb.Types {
		c := Column{Name: tb.Names[i], Type: txn.DataTypeName(typ), Nullable: i < len(tb.Nullable) && tb.Nullable[i], Length: -1}
		if tb.Unsigned != nil && i < len(tb.Unsigned) {
			c.Unsigned = tb.Unsigned[i]
		}
		if tb.Collations != nil && i < len(tb.Collations) {
			c.Charset = txn.CharsetOfCollation(tb.Collations[i])
		}
		var meta uint16
		if i < len(tb.Meta) {
			meta = tb.Meta[i]
		}
		switch c.Type {
		case "decimal":
			c.Precision, c.Scale = int(meta>>8), int(meta&0xff)
		case "bit":
			c.Length = int(meta>>8)*8 + int(meta&0xff)
		case "datetime", "timestamp", "time":
			c.Scale = int(meta)
		case "blob":
			if c.Charset != "binary" && c.Charset != "" {
				c.Type = "longtext"
			}
		case "":
			return nil, fmt.Errorf("table %s: column %s: binlog type %d: %w", tb.QualifiedName(), c.Name, typ, ErrUnsupported)
		}
		t.Columns = append(t.Columns, c)
	}
	if len(tb.PrimaryKey) > 0 {
		ix := Index{Name: "PRIMARY", Primary: true, Unique: true}
		for _, i := range tb.PrimaryKey {
			if i < 0 || i >= len(t.Columns) {
				return nil, fmt.Errorf("table %s: primary key column %d of %d in its table map", tb.QualifiedName(), i, len(t.Columns))
			}
			ix.Columns, ix.Prefix = append(ix.Columns, t.Columns[i].Name), append(ix.Prefix, 0)
		}
		t.Indexes = []Index{ix}
	}
	return t, nil
}

// loadDefs reads prepl.tables.
func loadDefs(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}) (Defs, error) {
	rows, err := q.Query(ctx, "SELECT definition FROM "+PositionSchema+".tables")
	if err != nil {
		return nil, fmt.Errorf("read the source's table definitions (%s.tables): %w", PositionSchema, err)
	}
	defer rows.Close()
	defs := Defs{}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		var t TableDef
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("read %s.tables: %w", PositionSchema, err)
		}
		defs.Put(&t)
	}
	return defs, rows.Err()
}

// StoreDefSQL returns the statement (and its arguments) that stores t's
// definition with the source statement that set it.
func StoreDefSQL(t *TableDef, sourceSQL string) (string, []any) {
	raw, _ := json.Marshal(t)
	return `INSERT INTO ` + PositionSchema + `.tables (schema_name, table_name, definition, source_sql) VALUES ($1, $2, $3, $4)
		ON CONFLICT (schema_name, table_name) DO UPDATE SET definition = EXCLUDED.definition, source_sql = EXCLUDED.source_sql,
		updated_at = now()`, []any{t.Schema, t.Name, string(raw), sourceSQL}
}

// storeChanged writes what a DDL changed from old to next, in the DDL's
// transaction.
func storeChanged(ctx context.Context, tx pgx.Tx, old, next Defs, sourceSQL string) error {
	for _, k := range old.Changed(next) {
		var err error
		if t := next[k]; t != nil {
			q, args := StoreDefSQL(t, sourceSQL)
			_, err = tx.Exec(ctx, q, args...)
		} else {
			o := old[k]
			_, err = tx.Exec(ctx, "DELETE FROM "+PositionSchema+".tables WHERE schema_name = $1 AND table_name = $2", o.Schema, o.Name)
		}
		if err != nil {
			return fmt.Errorf("store the definition of %s in %s.tables: %w", strings.TrimPrefix(k, "."), PositionSchema, err)
		}
	}
	return nil
}

// pgAction is a parsed referential action as information_schema spells
// it: none given is MySQL's default, NO ACTION.
func pgAction(a string) string {
	if a == "" {
		return "NO ACTION"
	}
	return strings.ToUpper(a)
}
