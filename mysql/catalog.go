package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prepl/prepl/fault"
	"github.com/prepl/prepl/txn"
)

// ErrNoTable is wrapped by Catalog.Load when the target lacks a table.
var ErrNoTable = fault.Fatal(errors.New("table missing on target")) // a restart meets it again: the user must create the table

// Catalog caches the target's table definitions, loaded from
// information_schema. It implements txn.Catalog for the dependency tracker;
// Load must have been called for a table before Table is asked for it.
type Catalog struct {
	db     *sql.DB
	mu     sync.Mutex
	tables map[string]*txn.TableDef
	// typed maps the table maps (the binlog reader reuses one *txn.Table
	// while a table's map is unchanged) whose types were checked against
	// the definition they map to (checkTypes).
	typed map[*txn.Table]*txn.TableDef
	// loads counts the definitions read from the target.
	loads atomic.Int64
}

// NewCatalog returns an empty catalog over the target db.
func NewCatalog(db *sql.DB) *Catalog {
	return &Catalog{db: db, tables: map[string]*txn.TableDef{}, typed: map[*txn.Table]*txn.TableDef{}}
}

// Table implements txn.Catalog.
func (c *Catalog) Table(schema, name string) (*txn.TableDef, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.tables[schema+"."+name]
	return d, ok && d != nil
}

// Put gives schema.name the definition d: the catalog of a target
// without a server (NewOffline) has only the definitions put in it.
func (c *Catalog) Put(schema, name string, d *txn.TableDef) {
	c.mu.Lock()
	c.tables[schema+"."+name] = d
	c.mu.Unlock()
}

// Invalidate forgets every definition.
func (c *Catalog) Invalidate() {
	c.mu.Lock()
	c.tables = map[string]*txn.TableDef{}
	clear(c.typed)
	c.mu.Unlock()
}

// Loads counts the definitions the catalog has read from the target.
func (c *Catalog) Loads() int64 { return c.loads.Load() }

// ForgetDDL forgets the definitions the DDL stmt, run with db as its
// default database, can have changed; the rest stay cached (forgetting
// all of them after each DDL reloaded every table of a target after
// every DDL of a stream). A definition holds facts about its own table
// and about the foreign keys between it and others, and whether it has
// triggers, so the DDL's tables are partOf's (the tables it names, on
// both sides of a rename) and the parents it names after REFERENCES,
// and forgotten with each such table t are:
//
//   - t itself, in any letter case (lower_case_table_names);
//   - its children: definitions whose ForeignKeys name t (a parent
//     dropped, renamed or replaced changes what they reference);
//   - its parents: definitions whose Cascades name t, those t's cached
//     definition references (a foreign key of t dropped or changed
//     changes their Referenced and Cascades), and, when t's definition
//     is not cached, every definition with Referenced (t's parents are
//     not known, and a non-cascading key leaves no trace in them);
//   - after a DROP TRIGGER or CREATE TRIGGER, the definitions with
//     HasTriggers in the trigger's schema: a trigger dropped, or moved by
//     CREATE OR REPLACE TRIGGER, may leave its old table without.
//
// Anything partOf cannot read with certainty, and any DDL that names no
// table (a database, a routine, an event, ALTER DATABASE), forgets every
// definition.
func (c *Catalog) ForgetDDL(stmt, db string) {
	part := partOf(stmt, db)
	if part.whole || len(part.schemas) > 0 || len(part.routines) > 0 || len(part.tables) == 0 && len(part.triggers) == 0 {
		c.Invalidate()
		return
	}
	named := append(slices.Clip(part.tables), part.references...)
	is := func(schema, name string, o objectName) bool {
		return strings.EqualFold(schema, o.schema) && strings.EqualFold(name, o.name)
	}
	isNamed := func(schema, name string) bool {
		return slices.ContainsFunc(named, func(o objectName) bool { return is(schema, name, o) })
	}
	schemas := map[string]bool{} // whose tables with triggers may have lost one
	for _, o := range part.triggers {
		schemas[strings.ToLower(o.schema)] = true
	}
	if part.trigger {
		for _, o := range part.tables {
			schemas[strings.ToLower(o.schema)] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The parents of the named tables, by their cached definitions.
	var parents []objectName
	unknown := false
	for _, o := range named {
		found := false
		for _, d := range c.tables {
			if d == nil || !is(d.Schema, d.Name, o) {
				continue
			}
			found = true
			for _, fk := range d.ForeignKeys {
				parents = append(parents, objectName{fk.RefSchema, fk.RefTable})
			}
		}
		unknown = unknown || !found
	}
	forget := func(d *txn.TableDef) bool {
		switch {
		case isNamed(d.Schema, d.Name), unknown && d.Referenced:
			return true
		case d.HasTriggers && schemas[strings.ToLower(d.Schema)]:
			return true
		case slices.ContainsFunc(parents, func(o objectName) bool { return is(d.Schema, d.Name, o) }):
			return true
		}
		for _, fk := range d.ForeignKeys {
			if isNamed(fk.RefSchema, fk.RefTable) {
				return true
			}
		}
		for _, cr := range d.Cascades {
			if slices.ContainsFunc(named, func(o objectName) bool { return strings.EqualFold(cr.Child, o.schema+"."+o.name) }) {
				return true
			}
		}
		return false
	}
	gone := map[*txn.TableDef]bool{}
	for k, d := range c.tables {
		if d == nil || forget(d) {
			delete(c.tables, k)
			gone[d] = true
		}
	}
	for m, d := range c.typed {
		if gone[d] {
			delete(c.typed, m)
		}
	}
}

// LoadTxn loads every table a transaction's row changes touch. A table
// missing on the target is an error that names it.
//
// A target table may have more columns than the source's, after the
// source's, as a MariaDB or MySQL replica may (an audit column, a column
// added ahead of a migration): their values are absent from each row
// image, as in a minimal row image, so an insert gives them their
// defaults and nothing else touches them, as on a replica. The images
// are padded here, once, for the renderers. With column names in the
// binlog (binlog_row_metadata=FULL) the source's columns must be the
// target's first ones by name; without, by position, as on a replica.
// The other way round, a source's columns after the target's last one are
// cut from the images: a replica ignores their values.
func (c *Catalog) LoadTxn(ctx context.Context, t *txn.Txn) error {
	if err := c.Redecode(ctx, t); err != nil {
		return err
	}
	for _, ch := range t.Changes {
		if ch.Row == nil {
			continue
		}
		tb := ch.Row.Table
		d, err := c.Load(ctx, tb.Schema, tb.Name)
		if err != nil {
			return err
		}
		n := len(tb.Types)
		switch {
		case len(d.Columns) == n || d.SystemVersioned && len(d.Columns)+2 == n: // row_start, row_end
		case d.HashKeys > 0 && len(d.Columns)+hiddenColumns(d) == n:
			cutImages(ch.Row, n-d.HashKeys)
		case len(d.Columns) > n && !d.SystemVersioned && namesLead(d, tb.Names):
			padImages(ch.Row, len(d.Columns))
		case len(d.Columns) < n && !d.SystemVersioned && namesLead(d, tb.Names):
			cutImages(ch.Row, len(d.Columns))
		default:
			return fmt.Errorf("table %s has %d columns on the target but %d in the binlog: the target's schema differs from the source's "+
				"(either may have more columns than the other only after the other's); give the target table the source's columns, "+
				"or leave the table out (--exclude): %w", d.QualifiedName(), len(d.Columns), n, ErrUnsupported)
		}
		if err := c.checkTypes(tb, d); err != nil {
			return err
		}
	}
	return nil
}

// floatDigits is M-D of a FLOAT(M,D) or DOUBLE(M,D) column of
// information_schema's COLUMN_TYPE ("float(30,0) unsigned"), 0 for
// other columns.
func floatDigits(dataType, colType string) int {
	if dataType != "float" && dataType != "double" {
		return 0
	}
	var m, d int
	if _, err := fmt.Sscanf(strings.ToLower(colType), dataType+"(%d,%d)", &m, &d); err != nil || m <= d {
		return 0
	}
	return m - d
}

// hiddenColumns counts the columns MariaDB writes in a table's row
// images that information_schema does not list, after all the others:
// row_start and row_end of a system-versioned table, then the
// DB_ROW_HASH_n column of each long unique key. A replica maps them by
// position too; the hash columns, which the server computes, are cut
// from the images.
func hiddenColumns(d *txn.TableDef) int {
	n := d.HashKeys
	if d.SystemVersioned {
		n += 2
	}
	return n
}

// checkTypes runs checkTypes once for each table map and definition.
func (c *Catalog) checkTypes(tb *txn.Table, d *txn.TableDef) error {
	c.mu.Lock()
	done := c.typed[tb] == d
	c.mu.Unlock()
	if done {
		return nil
	}
	if err := checkTypes(tb, d); err != nil {
		return err
	}
	c.mu.Lock()
	if len(c.typed) > 10000 { // table maps change; keep the map bounded
		clear(c.typed)
	}
	c.typed[tb] = d
	c.mu.Unlock()
	return nil
}

// namesLead reports whether the binlog's column names, if it has them,
// and the target's agree as far as the shorter list goes.
func namesLead(d *txn.TableDef, names []string) bool {
	for i := range min(len(names), len(d.Columns)) {
		if !strings.EqualFold(names[i], d.Columns[i].Name) {
			return false
		}
	}
	return true
}

// cutImages drops from rc's images the columns past the target's n: the
// source has columns after the target's last one, whose values a replica
// ignores. An update that changed only those leaves an after image with
// nothing in it, which AppendRowChange refuses; it keeps its full image
// of the target's columns (the same values), so the row is still found.
func cutImages(rc *txn.RowChange, n int) {
	cut := func(vals []txn.Value, present []bool) ([]txn.Value, []bool) {
		if len(vals) > n {
			vals = vals[:n:n]
		}
		if len(present) > n {
			present = present[:n:n]
		}
		return vals, present
	}
	rc.Before, rc.BeforeCols = cut(rc.Before, rc.BeforeCols)
	rc.After, rc.AfterCols = cut(rc.After, rc.AfterCols)
	rc.BeforeImage, rc.AfterImage = nil, nil
	if rc.Kind == txn.Update && rc.AfterCols != nil && !slices.Contains(rc.AfterCols, true) {
		rc.After, rc.AfterCols = rc.Before, rc.BeforeCols
	}
}

// padImages extends rc's images to n columns, the ones past the binlog's
// absent.
func padImages(rc *txn.RowChange, n int) {
	rc.Before, rc.BeforeCols = padImage(rc.Before, rc.BeforeCols, n)
	rc.After, rc.AfterCols = padImage(rc.After, rc.AfterCols, n)
	rc.BeforeImage, rc.AfterImage = nil, nil
}

func padImage(vals []txn.Value, present []bool, n int) ([]txn.Value, []bool) {
	if vals == nil || len(vals) >= n {
		return vals, present
	}
	p := make([]bool, n)
	for i := range vals {
		p[i] = present == nil || present[i]
	}
	return append(vals[:len(vals):len(vals)], make([]txn.Value, n-len(vals))...), p
}

// Load returns the definition of schema.name, from cache or the target.
func (c *Catalog) Load(ctx context.Context, schema, name string) (*txn.TableDef, error) {
	c.mu.Lock()
	d := c.tables[schema+"."+name]
	c.mu.Unlock()
	if d != nil {
		return d, nil
	}
	if c.db == nil {
		return nil, fmt.Errorf("%s.%s: no definition given, and no target to read it from: %w", schema, name, ErrNoTable)
	}
	c.loads.Add(1)
	d, err := LoadTableDef(ctx, c.db, schema, name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.tables[schema+"."+name] = d
	c.mu.Unlock()
	return d, nil
}

// LoadTableDef reads one table's definition from information_schema.
func LoadTableDef(ctx context.Context, db *sql.DB, schema, name string) (*txn.TableDef, error) {
	d := &txn.TableDef{Schema: schema, Name: name}
	var engine, tableType sql.NullString
	err := db.QueryRowContext(ctx, `SELECT ENGINE, TABLE_TYPE FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, schema, name).Scan(&engine, &tableType)
	if err == sql.ErrNoRows {
		return nil, fmt.Errorf("target lacks table %s.%s: %w (create it on the target, or restore a snapshot of the source)", schema, name, ErrNoTable)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s.%s: %w", schema, name, err)
	}
	e := strings.ToLower(engine.String)
	d.Engine = e
	d.Transactional = e == "innodb" || e == "rocksdb" || e == "tokudb" || e == ""
	d.SystemVersioned = tableType.String == "SYSTEM VERSIONED"

	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE,
		COALESCE(CHARACTER_SET_NAME, ''), COALESCE(COLLATION_NAME, ''), EXTRA, COALESCE(CHARACTER_OCTET_LENGTH, 0),
		COALESCE(NUMERIC_PRECISION, 0), COALESCE(NUMERIC_SCALE, 0), COALESCE(DATETIME_PRECISION, 0)
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
		ORDER BY ORDINAL_POSITION`, schema, name)
	if err != nil {
		return nil, fmt.Errorf("load columns of %s.%s: %w", schema, name, err)
	}
	byName := map[string]int{}
	virtual := false
	for rows.Next() {
		var c txn.ColumnDef
		var colType, nullable, extra string
		if err := rows.Scan(&c.Name, &c.DataType, &colType, &nullable, &c.Charset, &c.Collation, &extra, &c.Octets,
			&c.Precision, &c.Scale, &c.FSP); err != nil {
			rows.Close()
			return nil, err
		}
		c.DataType = strings.ToLower(c.DataType)
		c.Unsigned = strings.Contains(strings.ToLower(colType), "unsigned")
		c.FloatDigits = floatDigits(c.DataType, colType)
		c.Nullable = nullable == "YES"
		x := strings.ToUpper(extra)
		c.Generated = strings.Contains(x, "VIRTUAL") || strings.Contains(x, "STORED") || strings.Contains(x, "PERSISTENT")
		virtual = virtual || strings.Contains(x, "VIRTUAL")
		d.ComputedOnWrite = d.ComputedOnWrite || strings.Contains(x, "STORED") || strings.Contains(x, "PERSISTENT")
		// A FLOAT or DOUBLE AUTO_INCREMENT column: writing a row converts
		// its value to a BIGINT for the table's counter, which a strict
		// session refuses beyond BIGINT's range (error 1916) where the
		// source's counter made the value and MariaDB's replica (not
		// strict) stores it with a warning; the row's value is kept.
		d.ComputedOnWrite = d.ComputedOnWrite || strings.Contains(x, "AUTO_INCREMENT") && (c.DataType == "float" || c.DataType == "double")
		c.OnUpdate = strings.Contains(x, "ON UPDATE")
		byName[strings.ToLower(c.Name)] = len(d.Columns)
		d.Columns = append(d.Columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if virtual && !d.ComputedOnWrite {
		// A virtual column is computed on write only where an index
		// holds it.
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) > 0 FROM information_schema.STATISTICS s
			JOIN information_schema.COLUMNS c USING (TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME)
			WHERE s.TABLE_SCHEMA = ? AND s.TABLE_NAME = ? AND c.EXTRA LIKE '%VIRTUAL%'`, schema, name).Scan(&d.ComputedOnWrite); err != nil {
			return nil, fmt.Errorf("load indexed virtual columns of %s.%s: %w", schema, name, err)
		}
	}

	rows, err = db.QueryContext(ctx, `SELECT INDEX_NAME, COLUMN_NAME, COALESCE(SUB_PART, 0), INDEX_TYPE FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND NON_UNIQUE = 0
		ORDER BY INDEX_NAME = 'PRIMARY' DESC, INDEX_NAME, SEQ_IN_INDEX`, schema, name)
	if err != nil {
		return nil, fmt.Errorf("load keys of %s.%s: %w", schema, name, err)
	}
	for rows.Next() {
		var idx, col, typ string
		var sub int
		if err := rows.Scan(&idx, &col, &sub, &typ); err != nil {
			rows.Close()
			return nil, err
		}
		n := len(d.Indexes)
		if n == 0 || d.Indexes[n-1].Name != idx {
			d.Indexes = append(d.Indexes, txn.IndexDef{Name: idx, Primary: idx == "PRIMARY"})
			n++
			// A unique HASH key is a long unique key with a hidden hash
			// column, except where the engine has hash indexes (MEMORY).
			if typ == "HASH" && e != "memory" {
				d.HashKeys++
			}
		}
		ix := &d.Indexes[n-1]
		ix.Columns = append(ix.Columns, byName[strings.ToLower(col)])
		// SUB_PART: a prefix index (characters of text, bytes of binary
		// strings); keys must compare only the prefix, as the index does.
		if sub > 0 && ix.Prefix == nil {
			ix.Prefix = make([]int, len(ix.Columns)-1, len(ix.Columns))
		}
		if ix.Prefix != nil {
			ix.Prefix = append(ix.Prefix, sub)
		}
	}
	rows.Close()
	if err := markWithoutOverlaps(ctx, db, d); err != nil {
		return nil, err
	}

	if err := loadForeignKeys(ctx, db, d, byName); err != nil {
		return nil, err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.TRIGGERS
		WHERE EVENT_OBJECT_SCHEMA = ? AND EVENT_OBJECT_TABLE = ?`, schema, name).Scan(&n); err != nil {
		return nil, err
	}
	d.HasTriggers = n > 0
	return d, nil
}

// loadForeignKeys reads d's foreign keys with their actions, and the
// foreign keys of other tables that reference d: Referenced, and Cascades
// for those with a cascading action.
//
// KEY_COLUMN_USAGE and REFERENTIAL_CONSTRAINTS are read apart and joined
// here: MariaDB opens a table of information_schema's only for the schema
// and table names its WHERE clause admits, but not in a JOIN of two such
// tables, where it opened every table of the server for each load (115 on
// an empty one), and the catalog loads tables again after every DDL.
func loadForeignKeys(ctx context.Context, db *sql.DB, d *txn.TableDef, byName map[string]int) error {
	schema, name := d.Schema, d.Name
	rules, err := loadFKRules(ctx, db, `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, DELETE_RULE, UPDATE_RULE
		FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ? AND TABLE_NAME = ?`, schema, name)
	if err != nil {
		return fmt.Errorf("load foreign keys of %s.%s: %w", schema, name, err)
	}
	rows, err := db.QueryContext(ctx, `SELECT CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_SCHEMA,
		REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME
		FROM information_schema.KEY_COLUMN_USAGE
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND REFERENCED_TABLE_NAME IS NOT NULL
		ORDER BY CONSTRAINT_NAME, ORDINAL_POSITION`, schema, name)
	if err != nil {
		return fmt.Errorf("load foreign keys of %s.%s: %w", schema, name, err)
	}
	for rows.Next() {
		var cn, col, rs, rt, rc string
		if err := rows.Scan(&cn, &col, &rs, &rt, &rc); err != nil {
			rows.Close()
			return err
		}
		r, ok := rules[fkKey{schema, name, cn}]
		if !ok {
			continue // not a foreign key's (the inner join's rows)
		}
		n := len(d.ForeignKeys)
		if n == 0 || d.ForeignKeys[n-1].Name != cn {
			d.ForeignKeys = append(d.ForeignKeys, txn.ForeignKeyDef{Name: cn, RefSchema: rs, RefTable: rt, OnDelete: r.del, OnUpdate: r.upd})
			n++
		}
		fk := &d.ForeignKeys[n-1]
		fk.Columns = append(fk.Columns, byName[strings.ToLower(col)])
		fk.RefColumns = append(fk.RefColumns, rc)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	// The children's schemas are the user's: without that filter the
	// server opens every table of every schema, the system ones included
	// (40-80 ms on a fresh server, before the first unit can start). With
	// it, it still opens every user table, since a child names its parent
	// only in its own rows: where InnoDB's dictionary names the children
	// (referencingTables), the server opens only them.
	var rcChildren, kcuChildren string
	if children, known := referencingTables(ctx, db, schema, name); known {
		if len(children) == 0 {
			return nil
		}
		rcChildren = " AND (" + strings.Join(appendObjects(nil, "CONSTRAINT_SCHEMA", "TABLE_NAME", children), " OR ") + ")"
		kcuChildren = " AND (" + strings.Join(appendObjects(nil, "TABLE_SCHEMA", "TABLE_NAME", children), " OR ") + ")"
	}
	rules, err = loadFKRules(ctx, db, `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, DELETE_RULE, UPDATE_RULE
		FROM information_schema.REFERENTIAL_CONSTRAINTS
		WHERE UNIQUE_CONSTRAINT_SCHEMA = ? AND REFERENCED_TABLE_NAME = ? AND CONSTRAINT_SCHEMA `+userSchemas+rcChildren, schema, name)
	if err != nil {
		return fmt.Errorf("load the foreign keys that reference %s.%s: %w", schema, name, err)
	}
	if len(rules) == 0 {
		return nil
	}
	rows, err = db.QueryContext(ctx, `SELECT TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, REFERENCED_COLUMN_NAME
		FROM information_schema.KEY_COLUMN_USAGE
		WHERE REFERENCED_TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME = ? AND TABLE_SCHEMA `+userSchemas+kcuChildren+`
		ORDER BY TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`, schema, name)
	if err != nil {
		return fmt.Errorf("load the foreign keys that reference %s.%s: %w", schema, name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var cs, ct, cn, rc string
		if err := rows.Scan(&cs, &ct, &cn, &rc); err != nil {
			return err
		}
		r, ok := rules[fkKey{cs, ct, cn}]
		if !ok {
			continue
		}
		d.Referenced = true
		onDel, onUpd := txn.CascadingAction(r.del), txn.CascadingAction(r.upd)
		if !onDel && !onUpd {
			continue
		}
		child := cs + "." + ct
		n := len(d.Cascades)
		if n == 0 || d.Cascades[n-1].Child != child || d.Cascades[n-1].Name != cn {
			d.Cascades = append(d.Cascades, txn.CascadeRef{Child: child, Name: cn, OnDelete: onDel, OnUpdate: onUpd})
			n++
		}
		c := &d.Cascades[n-1]
		i, ok := byName[strings.ToLower(rc)]
		if !ok {
			i = -1 // CanCascade takes an unknown column as changed
		}
		c.Columns = append(c.Columns, i)
	}
	return rows.Err()
}

// fkKey names a foreign key: its table's schema and name, and its own.
type fkKey struct{ schema, table, name string }

// fkRules are a foreign key's ON DELETE and ON UPDATE rules.
type fkRules struct{ del, upd string }

// loadFKRules reads rows of REFERENTIAL_CONSTRAINTS (schema, table,
// constraint name, delete rule, update rule) by foreign key.
func loadFKRules(ctx context.Context, db *sql.DB, q string, args ...any) (map[fkKey]fkRules, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[fkKey]fkRules{}
	for rows.Next() {
		var k fkKey
		var r fkRules
		if err := rows.Scan(&k.schema, &k.table, &k.name, &r.del, &r.upd); err != nil {
			return nil, err
		}
		out[k] = r
	}
	return out, rows.Err()
}
