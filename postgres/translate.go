package postgres

import (
	"fmt"
	"slices"
	"strings"
)

// CreateTable returns the statements that create t in PostgreSQL: the
// schema, the table with its primary key and CHECKs, its unique keys and
// indexes, the comments of generated columns. Foreign keys are left to
// ForeignKeySQL (copy adds them after the rows).
func CreateTable(t *TableDef, o Options) ([]string, error) {
	for _, n := range []string{t.Schema, t.Name} {
		if err := ValidIdent(n); err != nil {
			return nil, err
		}
	}
	tbl := Table(t.Schema, t.Name, o)
	var defs []string
	for i := range t.Columns {
		d, err := ColumnSQL(t.Name, &t.Columns[i], o)
		if err != nil {
			return nil, fmt.Errorf("table %s.%s: %w", t.Schema, t.Name, err)
		}
		defs = append(defs, d)
	}
	var after []string
	for _, ix := range t.Indexes {
		if ix.Primary {
			cols, err := indexColumns(t, ix, o, false)
			if err != nil {
				return nil, err
			}
			defs = append(defs, "CONSTRAINT "+Ident(IndexName(t.Name, ix.Name), o)+" PRIMARY KEY ("+cols+")")
			continue
		}
		s, err := indexSQL(t, ix, o)
		if err != nil {
			return nil, err
		}
		after = append(after, s)
	}
	out := []string{
		"CREATE SCHEMA IF NOT EXISTS " + Ident(t.Schema, o),
		"CREATE TABLE " + tbl + " (\n  " + strings.Join(defs, ",\n  ") + "\n)",
	}
	out = append(out, after...)
	for _, c := range t.Columns {
		if c.Generated != "" {
			out = append(out, "COMMENT ON COLUMN "+tbl+"."+Ident(c.Name, o)+" IS "+
				QuoteString("generated on the source as ("+c.Generated+"); here a plain column holding the source's values"))
		}
	}
	return out, nil
}

// indexSQL creates a unique key or index. A prefix (KEY (c(10))) becomes
// an expression on left(c, 10) (substring for bytea).
func indexSQL(t *TableDef, ix Index, o Options) (string, error) {
	cols, err := indexColumns(t, ix, o, true)
	if err != nil {
		return "", err
	}
	u := ""
	if ix.Unique {
		u = "UNIQUE "
	}
	name := IndexName(t.Name, ix.Name)
	if err := ValidIdent(name); err != nil {
		return "", fmt.Errorf("index %s of %s.%s: %w", ix.Name, t.Schema, t.Name, err)
	}
	return "CREATE " + u + "INDEX " + Ident(name, o) + " ON " + Table(t.Schema, t.Name, o) + " (" + cols + ")", nil
}

func indexColumns(t *TableDef, ix Index, o Options, prefixes bool) (string, error) {
	var cols []string
	for i, name := range ix.Columns {
		q := Ident(name, o)
		if n := prefixAt(ix, i); n > 0 {
			if !prefixes {
				return "", fmt.Errorf("table %s.%s: a primary key on a prefix of column %s: %w", t.Schema, t.Name, name, ErrUnsupported)
			}
			if c := t.Column(name); c != nil {
				if k, _ := KindOf(c); k == KindBinary {
					q = fmt.Sprintf("(substring(%s from 1 for %d))", q, n)
				} else {
					q = fmt.Sprintf("(left(%s, %d))", q, n)
				}
			} else {
				q = fmt.Sprintf("(left(%s, %d))", q, n)
			}
		}
		cols = append(cols, q)
	}
	return strings.Join(cols, ", "), nil
}

func prefixAt(ix Index, i int) int {
	if i < len(ix.Prefix) {
		return ix.Prefix[i]
	}
	return 0
}

// ForeignKeySQL adds t's foreign keys, deferrable: rows of one source
// transaction may arrive in an order the keys would refuse statement by
// statement.
func ForeignKeySQL(t *TableDef, o Options) []string {
	var out []string
	for _, fk := range t.ForeignKeys {
		cols := make([]string, len(fk.Columns))
		for i, c := range fk.Columns {
			cols[i] = Ident(c, o)
		}
		refs := make([]string, len(fk.RefColumns))
		for i, c := range fk.RefColumns {
			refs[i] = Ident(c, o)
		}
		s := "ALTER TABLE " + Table(t.Schema, t.Name, o) + " ADD CONSTRAINT " + Ident(IndexName(t.Name, fk.Name), o) +
			" FOREIGN KEY (" + strings.Join(cols, ", ") + ") REFERENCES " + Table(fk.RefSchema, fk.RefTable, o) +
			" (" + strings.Join(refs, ", ") + ")"
		if fk.OnDelete != "" {
			s += " ON DELETE " + fk.OnDelete
		}
		if fk.OnUpdate != "" {
			s += " ON UPDATE " + fk.OnUpdate
		}
		out = append(out, s+" DEFERRABLE INITIALLY DEFERRED")
		if c := cascadeSQL(t, fk, o); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// Translate turns one MySQL DDL statement into PostgreSQL statements, to
// run in order. defaultDB is the statement's current database. A
// statement with no translation is an error wrapping ErrNotTranslated and
// naming it; the caller stops before it.
func Translate(sql, defaultDB string, o Options) ([]string, error) {
	return TranslateDefs(sql, defaultDB, o, nil)
}

// TranslateDefs is Translate keeping defs (when not nil) in step with the
// statement: the definitions it creates, changes, renames or drops are
// put in defs as copies (see Defs). A CREATE TABLE IF NOT EXISTS of a
// table defs holds translates to nothing.
func TranslateDefs(sql, defaultDB string, o Options, defs Defs) ([]string, error) {
	out, err := translate(sql, defaultDB, o, defs)
	if err != nil {
		return nil, fmt.Errorf("translate %q: %w", short(sql), err)
	}
	return out, nil
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func translate(sql, defaultDB string, o Options, defs Defs) ([]string, error) {
	toks, err := lex(sql)
	if err != nil {
		return nil, err
	}
	p := &parser{src: sql, toks: toks}
	switch {
	case p.accept("CREATE"):
		if p.accept("DATABASE") || p.accept("SCHEMA") {
			p.accept("IF", "NOT", "EXISTS")
			db, err := p.ident()
			if err != nil {
				return nil, err
			}
			return []string{"CREATE SCHEMA IF NOT EXISTS " + Ident(db, o)}, nil
		}
		unique := p.accept("UNIQUE")
		if p.accept("INDEX") {
			return p.createIndex(defaultDB, unique, o, defs)
		}
		t, err := p.createTable(defaultDB)
		if err != nil {
			return nil, err
		}
		if p.ifNotExists && defs.Get(t.Schema, t.Name) != nil {
			return nil, nil
		}
		stmts, err := CreateTable(t, o)
		if err != nil {
			return nil, err
		}
		if defs != nil {
			defs.Put(t)
		}
		return append(stmts, ForeignKeySQL(t, o)...), nil
	case p.accept("ALTER"):
		_ = p.accept("ONLINE") || p.accept("IGNORE")
		if !p.accept("TABLE") {
			return nil, p.errorf("%w: ALTER of something other than a table", ErrNotTranslated)
		}
		return p.alterTable(defaultDB, o, defs)
	case p.accept("DROP"):
		if p.accept("DATABASE") || p.accept("SCHEMA") {
			ifExists := p.accept("IF", "EXISTS")
			db, err := p.ident()
			if err != nil {
				return nil, err
			}
			for k, t := range defs {
				if t.Schema == db {
					delete(defs, k)
				}
			}
			return []string{"DROP SCHEMA " + ifExistsSQL(ifExists) + Ident(db, o) + " CASCADE"}, nil
		}
		if p.accept("INDEX") {
			name, err := p.ident()
			if err != nil {
				return nil, err
			}
			if !p.accept("ON") {
				return nil, p.errorf("expected ON")
			}
			db, tbl, err := p.name(defaultDB)
			if err != nil {
				return nil, err
			}
			if t := defs.Get(db, tbl); t != nil {
				t = t.Clone()
				removeIndex(t, name)
				defs.Put(t)
			}
			return []string{dropIndex(db, tbl, name, o)}, nil
		}
		p.accept("TEMPORARY")
		if !p.accept("TABLE") {
			return nil, p.errorf("%w: DROP of something other than a table", ErrNotTranslated)
		}
		ifExists := p.accept("IF", "EXISTS")
		names, err := p.tables(defaultDB, o, func(db, t string) { delete(defs, defKey(db, t)) })
		if err != nil {
			return nil, err
		}
		_ = p.accept("RESTRICT") || p.accept("CASCADE")
		if !p.done() {
			return nil, p.errorf("unexpected")
		}
		return []string{"DROP TABLE " + ifExistsSQL(ifExists) + strings.Join(names, ", ")}, nil
	case p.accept("RENAME"):
		if !p.accept("TABLE") {
			return nil, p.errorf("%w: RENAME of something other than a table", ErrNotTranslated)
		}
		var out []string
		for {
			db, t, err := p.name(defaultDB)
			if err != nil {
				return nil, err
			}
			if !p.accept("TO") {
				return nil, p.errorf("expected TO")
			}
			db2, t2, err := p.name(defaultDB)
			if err != nil {
				return nil, err
			}
			out = append(out, renameTable(db, t, db2, t2, o)...)
			defs.rename(db, t, db2, t2)
			if !p.acceptPunct(",") {
				break
			}
		}
		return out, nil
	case p.accept("TRUNCATE"):
		p.accept("TABLE")
		db, t, err := p.name(defaultDB)
		if err != nil {
			return nil, err
		}
		return []string{truncateSQL(Table(db, t, o))}, nil
	case p.accept("ANALYZE"), p.accept("OPTIMIZE"), p.accept("REPAIR"), p.accept("CHECK"):
		// Maintenance the source logs (unless NO_WRITE_TO_BINLOG): it
		// changes no row. ANALYZE is PostgreSQL's too; the others have no
		// counterpart that runs in a transaction (VACUUM does not).
		analyze := strings.EqualFold(p.toks[0].text, "ANALYZE")
		_ = p.accept("NO_WRITE_TO_BINLOG") || p.accept("LOCAL")
		if !p.accept("TABLE") {
			return nil, p.errorf("%w", ErrNotTranslated)
		}
		names, err := p.tables(defaultDB, o, func(string, string) {})
		if err != nil {
			return nil, err
		}
		if !analyze {
			return nil, nil
		}
		return []string{"ANALYZE " + strings.Join(names, ", ")}, nil
	}
	return nil, p.errorf("%w", ErrNotTranslated)
}

// tables reads a comma-separated list of [db.]table names, calling each
// for every one, and returns them as PostgreSQL names.
func (p *parser) tables(defaultDB string, o Options, each func(db, t string)) ([]string, error) {
	var names []string
	for {
		db, t, err := p.name(defaultDB)
		if err != nil {
			return nil, err
		}
		names = append(names, Table(db, t, o))
		each(db, t)
		if !p.acceptPunct(",") {
			return names, nil
		}
	}
}

func ifExistsSQL(b bool) string {
	if b {
		return "IF EXISTS "
	}
	return ""
}

func dropIndex(db, table, name string, o Options) string {
	if strings.EqualFold(name, "PRIMARY") {
		return "ALTER TABLE " + Table(db, table, o) + " DROP CONSTRAINT " + Ident(IndexName(table, "PRIMARY"), o)
	}
	return "DROP INDEX " + Ident(db, o) + "." + Ident(IndexName(table, name), o)
}

// renameTable moves a table (across schemas with SET SCHEMA first).
func renameTable(db, t, db2, t2 string, o Options) []string {
	var out []string
	if db != db2 {
		out = append(out, "ALTER TABLE "+Table(db, t, o)+" SET SCHEMA "+Ident(db2, o))
	}
	if t != t2 {
		out = append(out, "ALTER TABLE "+Table(db2, t, o)+" RENAME TO "+Ident(t2, o))
	}
	return out
}

func (p *parser) createIndex(defaultDB string, unique bool, o Options, defs Defs) ([]string, error) {
	name, err := p.ident()
	if err != nil {
		return nil, err
	}
	if !p.accept("ON") {
		return nil, p.errorf("expected ON")
	}
	db, tbl, err := p.name(defaultDB)
	if err != nil {
		return nil, err
	}
	ix := Index{Name: name, Unique: unique}
	if err := p.indexColumnsInto(&ix); err != nil {
		return nil, err
	}
	t := defs.Get(db, tbl)
	if t == nil {
		t = &TableDef{Schema: db, Name: tbl}
	} else {
		t = t.Clone()
		t.Indexes = append(t.Indexes, ix)
		defs.Put(t)
	}
	s, err := indexSQL(t, ix, o)
	return []string{s}, err
}

func (p *parser) indexColumnsInto(ix *Index) error {
	if err := p.expectPunct("("); err != nil {
		return err
	}
	for {
		n, err := p.ident()
		if err != nil {
			return err
		}
		l := 0
		if p.acceptPunct("(") {
			fmt.Sscan(p.peek().text, &l)
			p.i++
			if err := p.expectPunct(")"); err != nil {
				return err
			}
		}
		_ = p.accept("ASC") || p.accept("DESC")
		ix.Columns, ix.Prefix = append(ix.Columns, n), append(ix.Prefix, l)
		if !p.acceptPunct(",") {
			break
		}
	}
	return p.expectPunct(")")
}

// alterTable translates the column and index changes; anything else
// (engine, partitions, options) stops the translation. The table's
// definition in defs, when there, follows each clause.
func (p *parser) alterTable(defaultDB string, o Options, defs Defs) ([]string, error) {
	db, name, err := p.name(defaultDB)
	if err != nil {
		return nil, err
	}
	orig := defs.Get(db, name) // as it was before the statement
	cur := orig
	if cur != nil {
		cur = cur.Clone()
	}
	t := &TableDef{Schema: db, Name: name}
	if cur != nil {
		t.Columns = cur.Columns // prefixes of binary columns are cut in bytes
	}
	tbl := Table(db, name, o)
	var out []string
	alter := func(s string) { out = append(out, "ALTER TABLE "+tbl+" "+s) }
	renamed := false
	db2, name2 := db, name
	for {
		switch {
		case p.accept("ADD"):
			if p.at("PRIMARY") || p.at("UNIQUE") || p.at("KEY") || p.at("INDEX") || p.at("CONSTRAINT") || p.at("FULLTEXT") || p.at("SPATIAL") || p.at("FOREIGN") {
				if err := p.tableElement(t); err != nil {
					return nil, err
				}
				if len(t.Notes) > 0 {
					return nil, p.errorf("%w: %s", ErrNotTranslated, t.Notes[0])
				}
				if len(t.ForeignKeys) > 0 {
					out = append(out, ForeignKeySQL(t, o)...)
					if cur != nil {
						cur.ForeignKeys = append(cur.ForeignKeys, t.ForeignKeys...)
					}
					t.ForeignKeys = nil
				}
				for _, ix := range t.Indexes {
					if cur != nil {
						cur.Indexes = append(cur.Indexes, ix)
					}
					if ix.Primary {
						cols, err := indexColumns(t, ix, o, false)
						if err != nil {
							return nil, err
						}
						alter("ADD CONSTRAINT " + Ident(IndexName(name, "PRIMARY"), o) + " PRIMARY KEY (" + cols + ")")
						continue
					}
					s, err := indexSQL(t, ix, o)
					if err != nil {
						return nil, err
					}
					out = append(out, s)
				}
				t.Indexes = nil
				break
			}
			p.accept("COLUMN")
			ifNot := p.accept("IF", "NOT", "EXISTS")
			if p.peek().punct("(") {
				return nil, p.errorf("%w: ADD COLUMN (list)", ErrNotTranslated)
			}
			c, err := p.columnDef()
			if err != nil {
				return nil, err
			}
			d, err := ColumnSQL(name, &c.Column, o)
			if err != nil {
				return nil, err
			}
			ine := ""
			if ifNot {
				ine = "IF NOT EXISTS "
			}
			// The rows there get the source's time, not PostgreSQL's
			// (the target's) for a default of CURRENT_TIMESTAMP; later
			// inserts get the default itself.
			now := ""
			if lit := o.nowDefault(&c.Column); lit != "" && strings.Contains(d, " DEFAULT CURRENT_TIMESTAMP") {
				d, now = strings.Replace(d, " DEFAULT CURRENT_TIMESTAMP", " DEFAULT "+lit, 1), Ident(c.Name, o)
			}
			// FIRST/AFTER: PostgreSQL appends; rows carry every column by
			// name, and defs keep the source's order of the row images.
			alter("ADD COLUMN " + ine + d)
			if now != "" {
				alter("ALTER COLUMN " + now + " SET DEFAULT CURRENT_TIMESTAMP")
			}
			if Identity(&c.Column) && orig != nil && orig.Column(c.Name) == nil {
				if o.AutoIncIncrement > 1 {
					return nil, p.errorf("%w: ADD COLUMN ... AUTO_INCREMENT under auto_increment_increment=%d: the numbers the "+
						"source gave the rows already there are not reproduced", ErrNotTranslated, o.AutoIncIncrement)
				}
				out = append(out, renumberSQL(orig, c.Name, tbl, o)...) // before its key is added
			}
			pk := Index{Name: "PRIMARY", Primary: true, Unique: true, Columns: []string{c.Name}, Prefix: []int{0}}
			uk := Index{Name: c.Name, Unique: true, Columns: []string{c.Name}, Prefix: []int{0}}
			if c.primary {
				alter("ADD CONSTRAINT " + Ident(IndexName(name, "PRIMARY"), o) + " PRIMARY KEY (" + Ident(c.Name, o) + ")")
			} else if c.unique {
				s, _ := indexSQL(t, uk, o)
				out = append(out, s)
			}
			if cur != nil && !(ifNot && columnIndex(cur, c.Name) >= 0) {
				placeColumn(cur, c, -1)
				if c.primary {
					cur.Indexes = append([]Index{pk}, cur.Indexes...)
				} else if c.unique {
					cur.Indexes = append(cur.Indexes, uk)
				}
			}
		case p.accept("DROP"):
			switch {
			case p.accept("PRIMARY", "KEY"):
				out = append(out, dropIndex(db, name, "PRIMARY", o))
				if cur != nil {
					removeIndex(cur, "PRIMARY")
				}
			case p.accept("INDEX"), p.accept("KEY"):
				n, err := p.ident()
				if err != nil {
					return nil, err
				}
				out = append(out, dropIndex(db, name, n, o))
				if cur != nil {
					removeIndex(cur, n)
				}
			case p.accept("FOREIGN", "KEY"), p.accept("CONSTRAINT"):
				p.accept("IF", "EXISTS")
				n, err := p.ident()
				if err != nil {
					return nil, err
				}
				alter("DROP CONSTRAINT IF EXISTS " + Ident(IndexName(name, n), o))
				if cur != nil {
					cur.ForeignKeys = slices.DeleteFunc(cur.ForeignKeys, func(fk ForeignKey) bool { return strings.EqualFold(fk.Name, n) })
				}
			default:
				p.accept("COLUMN")
				ie := p.accept("IF", "EXISTS")
				n, err := p.ident()
				if err != nil {
					return nil, err
				}
				alter("DROP COLUMN " + ifExistsSQL(ie) + Ident(n, o))
				if cur != nil {
					dropColumn(cur, n)
				}
			}
		case p.accept("MODIFY"), p.at("CHANGE"):
			old := ""
			if p.accept("CHANGE") {
				p.accept("COLUMN")
				if old, err = p.ident(); err != nil {
					return nil, err
				}
			} else {
				p.accept("COLUMN")
			}
			c, err := p.columnDef()
			if err != nil {
				return nil, err
			}
			if old == "" {
				old = c.Name
			}
			if old != c.Name {
				// The CHECK named after the old name goes with it.
				alter("DROP CONSTRAINT IF EXISTS " + Ident(checkName(name, old), o))
				alter("RENAME COLUMN " + Ident(old, o) + " TO " + Ident(c.Name, o))
			}
			stmts, err := modifyColumn(name, tbl, &c.Column, o)
			if err != nil {
				return nil, err
			}
			out = append(out, stmts...)
			if cur != nil {
				renameColumn(cur, old, c.Name)
				placeColumn(cur, c, columnIndex(cur, c.Name))
			}
		case p.accept("RENAME", "COLUMN"):
			a, err := p.ident()
			if err != nil {
				return nil, err
			}
			if !p.accept("TO") {
				return nil, p.errorf("expected TO")
			}
			b, err := p.ident()
			if err != nil {
				return nil, err
			}
			alter("RENAME COLUMN " + Ident(a, o) + " TO " + Ident(b, o))
			if cur != nil {
				renameColumn(cur, a, b)
			}
		case p.accept("RENAME", "INDEX"), p.accept("RENAME", "KEY"):
			a, err := p.ident()
			if err != nil {
				return nil, err
			}
			if !p.accept("TO") {
				return nil, p.errorf("expected TO")
			}
			b, err := p.ident()
			if err != nil {
				return nil, err
			}
			out = append(out, "ALTER INDEX "+Ident(db, o)+"."+Ident(IndexName(name, a), o)+" RENAME TO "+Ident(IndexName(name, b), o))
			if cur != nil {
				for i := range cur.Indexes {
					if strings.EqualFold(cur.Indexes[i].Name, a) {
						cur.Indexes[i].Name = b
					}
				}
			}
		case p.accept("RENAME"):
			_ = p.accept("TO") || p.accept("AS")
			if db2, name2, err = p.name(db); err != nil {
				return nil, err
			}
			out = append(out, renameTable(db, name, db2, name2, o)...)
			renamed = true
		default:
			return nil, p.errorf("%w: ALTER TABLE clause", ErrNotTranslated)
		}
		if !p.acceptPunct(",") {
			break
		}
	}
	if !p.done() {
		return nil, p.errorf("%w: ALTER TABLE clause", ErrNotTranslated)
	}
	if cur != nil {
		defs.Put(cur)
		if renamed {
			defs.rename(db, name, db2, name2)
		}
	}
	return out, nil
}

// modifyColumn changes a column's type, nullability, default and CHECK
// to c's. The old CHECK is the one ColumnSQL named; the cast is
// PostgreSQL's (an ENUM's members stay text).
func modifyColumn(table, tbl string, c *Column, o Options) ([]string, error) {
	typ, check, err := Type(c, o)
	if err != nil {
		return nil, err
	}
	q := Ident(c.Name, o)
	k, _ := KindOf(c)
	out := []string{
		"ALTER TABLE " + tbl + " DROP CONSTRAINT IF EXISTS " + Ident(checkName(table, c.Name), o),
		"ALTER TABLE " + tbl + " ALTER COLUMN " + q + " TYPE " + typ + " USING " + q + "::" + typ,
	}
	if d, ok := defaultSQL(c, k); ok {
		out = append(out, "ALTER TABLE "+tbl+" ALTER COLUMN "+q+" SET DEFAULT "+d)
	} else {
		out = append(out, "ALTER TABLE "+tbl+" ALTER COLUMN "+q+" DROP DEFAULT")
	}
	if c.Nullable || (o.ZeroDateNull && (k == KindDate || k == KindDatetime || k == KindTimestamp)) {
		out = append(out, "ALTER TABLE "+tbl+" ALTER COLUMN "+q+" DROP NOT NULL")
	} else {
		out = append(out, "ALTER TABLE "+tbl+" ALTER COLUMN "+q+" SET NOT NULL")
	}
	if check != "" {
		out = append(out, "ALTER TABLE "+tbl+" ADD CONSTRAINT "+Ident(checkName(table, c.Name), o)+" CHECK ("+check+")")
	}
	return out, nil
}

// checkName names the CHECK that keeps a column to its source values.
func checkName(table, column string) string { return table + "_" + column + "_check" }

// truncateSQL empties tbl as MySQL's TRUNCATE does: every row gone, no
// DELETE trigger fired, no foreign key checked or cascaded, the
// AUTO_INCREMENT (identity) restarted. The source binlogs a TRUNCATE of
// a table that other tables' foreign keys reference only when its
// session had foreign_key_checks=0 (otherwise it refuses, error 1701),
// and then empties the parent and leaves the children as they are;
// PostgreSQL refuses TRUNCATE of a referenced table (unless CASCADE,
// which would empty the children too), so such a table is emptied with
// DELETE, under prepl's session_replication_role = replica (no check),
// with the referential actions prepl enables ALWAYS (cascadeSQL) set
// back to ORIGIN for the DELETE, and its identities restarted. Which
// form is decided on the target, by its foreign keys at that moment.
func truncateSQL(tbl string) string {
	q := QuoteString(tbl)
	return `DO $prepl$DECLARE ts text[]; tg text; col text; BEGIN
IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE confrelid = ` + q + `::regclass AND contype = 'f' AND conrelid <> confrelid) THEN
  TRUNCATE TABLE ` + tbl + ` RESTART IDENTITY; RETURN;
END IF;
SELECT array_agg(tgname) INTO ts FROM pg_trigger WHERE tgrelid = ` + q + `::regclass AND tgisinternal AND tgenabled = 'A';
FOREACH tg IN ARRAY coalesce(ts, '{}') LOOP EXECUTE format('ALTER TABLE %s ENABLE TRIGGER %I', ` + q + `, tg); END LOOP;
DELETE FROM ` + tbl + `;
FOREACH tg IN ARRAY coalesce(ts, '{}') LOOP EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', ` + q + `, tg); END LOOP;
FOR col IN SELECT attname FROM pg_attribute WHERE attrelid = ` + q + `::regclass AND attidentity <> '' AND NOT attisdropped LOOP
  EXECUTE format('ALTER TABLE %s ALTER COLUMN %I RESTART', ` + q + `, col);
END LOOP; END$prepl$`
}

// renumberSQL gives the rows already in table t (tbl, as PostgreSQL names
// it) the numbers MySQL gives them when an ALTER adds AUTO_INCREMENT
// column col (auto_increment_increment 1): 1, 2, 3... in the order the
// table is rebuilt in, that of its clustered index (its primary key, else
// its first unique key of NOT NULL columns, else the order rows were
// inserted in, for which PostgreSQL's physical order stands).
// PostgreSQL's identity numbers them in its physical order, and a later
// row of the source then names another row's number. The identity's
// sequence then goes past them. (Under a larger increment InnoDB starts
// the series past the offset, 8, 13, 18 for offset 3 and increment 5, by
// rules not reproduced here: such an ALTER is refused.)
func renumberSQL(t *TableDef, col, tbl string, o Options) []string {
	order := "ctid"
	if ix := t.PrimaryKey(); ix != nil {
		cols := make([]string, len(ix.Columns))
		for i, c := range ix.Columns {
			cols[i] = Ident(c, o)
		}
		order = strings.Join(cols, ", ")
	}
	c := Ident(col, o)
	return []string{
		fmt.Sprintf("UPDATE %s SET %s = n.v FROM (SELECT ctid AS r, row_number() OVER (ORDER BY %s) AS v FROM %s) n WHERE %s.ctid = n.r",
			tbl, c, order, tbl, tbl),
		fmt.Sprintf("SELECT setval(pg_get_serial_sequence(%s, %s), max(%s)) FROM %s HAVING max(%s) IS NOT NULL",
			QuoteString(tbl), QuoteString(identName(col, o)), c, tbl, c),
	}
}
