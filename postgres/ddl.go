package postgres

import (
	"errors"
	"strconv"
	"strings"

	"github.com/prepl/prepl/fault"
	"github.com/prepl/prepl/tabledef"
)

// ErrNotTranslated is wrapped when a DDL statement has no translation:
// the applier stops before it (naming its GTID) and --skip-gtid goes past
// it (fatal, package fault).
var ErrNotTranslated = fault.Fatal(errors.New("DDL statement not translated to PostgreSQL"))

// ParseCreateTable reads a CREATE TABLE statement; defaultDB is the
// schema of an unqualified name.
func ParseCreateTable(sql, defaultDB string) (*TableDef, error) {
	toks, err := lex(sql)
	if err != nil {
		return nil, err
	}
	p := &parser{src: sql, toks: toks}
	if !p.accept("CREATE") {
		return nil, p.errorf("not a CREATE TABLE")
	}
	return p.createTable(defaultDB)
}

func (p *parser) createTable(defaultDB string) (*TableDef, error) {
	if p.at("OR", "REPLACE") || p.at("TEMPORARY") {
		return nil, p.errorf("%w: CREATE OR REPLACE and TEMPORARY tables", ErrNotTranslated)
	}
	if !p.accept("TABLE") {
		return nil, p.errorf("%w: CREATE of something other than a table", ErrNotTranslated)
	}
	p.ifNotExists = p.accept("IF", "NOT", "EXISTS")
	t := &TableDef{}
	var err error
	if t.Schema, t.Name, err = p.name(defaultDB); err != nil {
		return nil, err
	}
	if p.at("LIKE") || p.peek().is("AS") || p.at("SELECT") {
		return nil, p.errorf("%w: CREATE TABLE ... LIKE/SELECT", ErrNotTranslated)
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	for {
		if err := p.tableElement(t); err != nil {
			return nil, err
		}
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
		break
	}
	p.tableOptions(t)
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Charset == "" && textType(c.Type) {
			c.Charset = t.Charset
		}
	}
	return t, nil
}

func textType(t string) bool {
	switch t {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		return true
	}
	return false
}

// tableOptions reads what matters after the column list: the default
// character set. PARTITION BY is ignored: the PostgreSQL table is one
// table holding every partition's rows.
func (p *parser) tableOptions(t *TableDef) {
	for !p.done() {
		if p.accept("PARTITION", "BY") {
			t.Notes = append(t.Notes, "partitioning not translated: one table holds every partition's rows")
			p.i = len(p.toks)
			return
		}
		if p.accept("CHARSET") || p.accept("CHARACTER", "SET") {
			p.acceptPunct("=")
			t.Charset = strings.ToLower(p.peek().text)
		}
		p.i++
	}
}

func (p *parser) tableElement(t *TableDef) error {
	constraint := ""
	if p.accept("CONSTRAINT") {
		if !p.at("PRIMARY") && !p.at("UNIQUE") && !p.at("FOREIGN") && !p.at("CHECK") {
			constraint = p.peek().text
			p.i++
		}
	}
	switch {
	case p.at("PRIMARY") || p.at("UNIQUE") || p.at("KEY") || p.at("INDEX") || p.at("FULLTEXT") || p.at("SPATIAL"):
		ix, skip, err := p.indexDef()
		if err != nil {
			return err
		}
		if skip != "" {
			t.Notes = append(t.Notes, skip)
			return nil
		}
		if ix.Name == "" {
			ix.Name = constraint
		}
		if ix.Name == "" {
			ix.Name = ix.Columns[0] // MySQL names an unnamed index after its first column
		}
		t.Indexes = append(t.Indexes, ix)
		return nil
	case p.at("FOREIGN"):
		fk, err := p.foreignKey(t.Schema)
		if err != nil {
			return err
		}
		if fk.Name == "" {
			fk.Name = constraint
		}
		if fk.Name == "" {
			fk.Name = strings.Join(fk.Columns, "_") + "_fkey"
		}
		t.ForeignKeys = append(t.ForeignKeys, fk)
		return nil
	case p.at("CHECK"):
		p.i++
		expr, err := p.balanced()
		if err != nil {
			return err
		}
		t.Notes = append(t.Notes, "table CHECK ("+expr+") not translated")
		return nil
	case p.at("PERIOD"):
		return p.errorf("%w: PERIOD FOR (system versioning)", ErrNotTranslated)
	}
	c, err := p.columnDef()
	if err != nil {
		return err
	}
	t.Columns = append(t.Columns, c.Column)
	if c.primary {
		t.Indexes = append(t.Indexes, Index{Name: "PRIMARY", Primary: true, Unique: true, Columns: []string{c.Name}, Prefix: []int{0}})
	} else if c.unique {
		t.Indexes = append(t.Indexes, Index{Name: c.Name, Unique: true, Columns: []string{c.Name}, Prefix: []int{0}})
	}
	return nil
}

// indexDef reads PRIMARY KEY / UNIQUE / KEY / INDEX / FULLTEXT / SPATIAL
// definitions; skip explains an index that is not carried over.
func (p *parser) indexDef() (ix Index, skip string, err error) {
	kind := strings.ToUpper(p.peek().text)
	p.i++
	switch kind {
	case "PRIMARY":
		if !p.accept("KEY") {
			return ix, "", p.errorf("expected KEY")
		}
		ix.Name, ix.Primary, ix.Unique = "PRIMARY", true, true
	case "UNIQUE":
		ix.Unique = true
		_ = p.accept("KEY") || p.accept("INDEX")
	case "FULLTEXT", "SPATIAL":
		_ = p.accept("KEY") || p.accept("INDEX")
	}
	if !ix.Primary && !p.peek().punct("(") && !p.at("USING") {
		if ix.Name, err = p.ident(); err != nil {
			return ix, "", err
		}
	}
	if p.accept("USING") {
		p.i++
	}
	if err := p.expectPunct("("); err != nil {
		return ix, "", err
	}
	for {
		name, err := p.ident()
		if err != nil {
			return ix, "", err
		}
		n := 0
		if p.acceptPunct("(") {
			if n, err = strconv.Atoi(p.peek().text); err != nil {
				return ix, "", p.errorf("bad prefix length")
			}
			p.i++
			if err := p.expectPunct(")"); err != nil {
				return ix, "", err
			}
		}
		_ = p.accept("ASC") || p.accept("DESC")
		ix.Columns = append(ix.Columns, name)
		ix.Prefix = append(ix.Prefix, n)
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(")"); err != nil {
		return ix, "", err
	}
	for !p.done() && !p.peek().punct(",") && !p.peek().punct(")") {
		p.i++ // index options: USING, COMMENT, KEY_BLOCK_SIZE, VISIBLE ...
	}
	if kind == "FULLTEXT" || kind == "SPATIAL" {
		return ix, kind + " index " + ix.Name + " not translated (build a PostgreSQL one: tsvector/GIN, PostGIS GiST)", nil
	}
	return ix, "", nil
}

func (p *parser) foreignKey(defaultDB string) (ForeignKey, error) {
	var fk ForeignKey
	p.accept("FOREIGN", "KEY")
	if !p.peek().punct("(") {
		fk.Name, _ = p.ident()
	}
	cols, err := p.nameList()
	if err != nil {
		return fk, err
	}
	fk.Columns = cols
	if !p.accept("REFERENCES") {
		return fk, p.errorf("expected REFERENCES")
	}
	if fk.RefSchema, fk.RefTable, err = p.name(defaultDB); err != nil {
		return fk, err
	}
	if fk.RefColumns, err = p.nameList(); err != nil {
		return fk, err
	}
	for !p.done() && !p.peek().punct(",") && !p.peek().punct(")") {
		switch {
		case p.accept("ON", "DELETE"):
			fk.OnDelete = p.refAction()
		case p.accept("ON", "UPDATE"):
			fk.OnUpdate = p.refAction()
		default:
			p.i++
		}
	}
	return fk, nil
}

func (p *parser) refAction() string {
	for _, a := range []string{"CASCADE", "RESTRICT"} {
		if p.accept(a) {
			return a
		}
	}
	if p.accept("SET", "NULL") {
		return "SET NULL"
	}
	if p.accept("SET", "DEFAULT") {
		return "SET DEFAULT"
	}
	if p.accept("NO", "ACTION") {
		return "NO ACTION"
	}
	return ""
}

func (p *parser) nameList() ([]string, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	var out []string
	for {
		n, err := p.ident()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if !p.acceptPunct(",") {
			break
		}
	}
	return out, p.expectPunct(")")
}

type columnDef struct {
	Column
	primary, unique bool
	Check           string // "json_valid" for MariaDB's JSON columns
	first           bool
	after           string
}

// typeAliases maps synonyms to the names of the kinds table.
var typeAliases = map[string]string{
	"int1": "tinyint", "int2": "smallint", "int3": "mediumint", "int4": "int", "int8": "bigint", "middleint": "mediumint",
	"integer": "int", "bool": "tinyint", "boolean": "tinyint", "dec": "decimal", "numeric": "decimal", "fixed": "decimal",
	"float4": "float", "float8": "double", "real": "double", "nchar": "char", "nvarchar": "varchar", "character": "char",
	"serial": "bigint",
}

func (p *parser) columnDef() (columnDef, error) {
	var c columnDef
	var err error
	if c.Name, err = p.ident(); err != nil {
		return c, err
	}
	if err := ValidIdent(c.Name); err != nil {
		return c, err
	}
	c.Nullable = true
	c.Length, c.Precision = -1, 0
	t := p.peek()
	if t.kind != tWord {
		return c, p.errorf("column %s: expected a type", c.Name)
	}
	p.i++
	c.Type = strings.ToLower(t.text)
	switch {
	case c.Type == "double" && p.accept("PRECISION"):
	case (c.Type == "character" || c.Type == "char") && p.accept("VARYING"):
		c.Type = "varchar"
	case c.Type == "national":
		c.Type = strings.ToLower(p.peek().text)
		p.i++
		if p.accept("VARYING") {
			c.Type = "varchar"
		}
	case c.Type == "long" && p.accept("VARCHAR"), c.Type == "long" && p.accept("VARBINARY"):
		c.Type = "mediumtext"
	}
	if a, ok := typeAliases[c.Type]; ok {
		if c.Type == "serial" {
			c.Unsigned, c.AutoInc, c.Nullable, c.unique = true, true, false, true
		}
		c.Type = a
	}
	if p.peek().punct("(") {
		if c.Type == "enum" || c.Type == "set" {
			p.i++
			for {
				s := p.peek()
				if s.kind != tString {
					return c, p.errorf("column %s: expected a member string", c.Name)
				}
				c.Elems = append(c.Elems, s.text)
				p.i++
				if !p.acceptPunct(",") {
					break
				}
			}
			if err := p.expectPunct(")"); err != nil {
				return c, err
			}
		} else {
			args, err := p.balanced()
			if err != nil {
				return c, err
			}
			n1, n2, _ := strings.Cut(args, ",")
			a, _ := strconv.Atoi(strings.TrimSpace(n1))
			b, _ := strconv.Atoi(strings.TrimSpace(n2))
			switch tabledef.TypeKind(c.Type) {
			case KindDecimal:
				c.Precision, c.Scale = a, b
			case KindDatetime, KindTimestamp, KindTime:
				c.Scale = a
			default:
				c.Length = a
			}
		}
	}
	if tabledef.TypeKind(c.Type) == KindDecimal && c.Precision == 0 {
		c.Precision = 10
	}
	for !p.done() && !p.peek().punct(",") && !p.peek().punct(")") {
		if err := p.columnAttribute(&c); err != nil {
			return c, err
		}
	}
	if c.Type == "longtext" && c.Check == "json_valid" {
		c.Type, c.Charset = "json", ""
	}
	if c.Type == "char" || c.Type == "binary" {
		if c.Length < 0 {
			c.Length = 1
		}
	}
	return c, nil
}

func (p *parser) columnAttribute(c *columnDef) error {
	switch {
	case p.accept("UNSIGNED"):
		c.Unsigned = true
	case p.accept("SIGNED"), p.accept("ZEROFILL"), p.accept("VISIBLE"), p.accept("INVISIBLE"),
		p.accept("COMPRESSED"), p.accept("ASCII"), p.accept("UNICODE"):
	case p.accept("BINARY"):
		if tabledef.TypeKind(c.Type) == KindText {
			c.Collation = "bin"
		}
	case p.accept("CHARACTER", "SET"), p.accept("CHARSET"):
		c.Charset = strings.ToLower(p.peek().text)
		p.i++
	case p.accept("COLLATE"):
		c.Collation = strings.ToLower(p.peek().text)
		p.i++
	case p.accept("NOT", "NULL"):
		c.Nullable = false
	case p.accept("NULL"):
		c.Nullable = true
	case p.accept("DEFAULT"):
		d, err := p.expr()
		if err != nil {
			return err
		}
		c.Default = &d
	case p.accept("ON", "UPDATE"):
		if _, err := p.expr(); err != nil {
			return err
		}
	case p.accept("AUTO_INCREMENT"):
		c.AutoInc = true
	case p.accept("PRIMARY", "KEY"):
		c.primary, c.Nullable = true, false
	case p.accept("UNIQUE"):
		p.accept("KEY")
		c.unique = true
	case p.accept("KEY"):
		c.primary, c.Nullable = true, false
	case p.accept("COMMENT"):
		c.Comment = p.peek().text
		p.i++
	case p.accept("GENERATED", "ALWAYS", "AS"), p.accept("AS"):
		g, err := p.balanced()
		if err != nil {
			return err
		}
		c.Generated = g
		_ = p.accept("VIRTUAL") || p.accept("STORED") || p.accept("PERSISTENT")
	case p.accept("CONSTRAINT"):
		if !p.at("CHECK") {
			p.i++
		}
	case p.accept("CHECK"):
		e, err := p.balanced()
		if err != nil {
			return err
		}
		if strings.EqualFold(strings.ReplaceAll(strings.ReplaceAll(e, " ", ""), "`", ""), "json_valid("+c.Name+")") {
			c.Check = "json_valid"
		}
	case p.accept("COLUMN_FORMAT"), p.accept("STORAGE"), p.accept("SRID"):
		p.i++
	case p.accept("REFERENCES"):
		return p.errorf("%w: column %s: inline REFERENCES", ErrNotTranslated, c.Name)
	case p.at("FIRST"):
		p.i++
		c.first = true
	case p.at("AFTER"):
		p.i++
		c.after = p.peek().text
		p.i++
	default:
		return p.errorf("column %s: unknown attribute", c.Name)
	}
	return nil
}

// expr reads a default value: a literal, a signed number, a word with an
// optional argument list (CURRENT_TIMESTAMP(6)), or a parenthesized expression.
func (p *parser) expr() (string, error) {
	if p.done() {
		return "", p.errorf("expected a value")
	}
	start := p.peek().start
	switch t := p.peek(); {
	case t.punct("("):
		if _, err := p.balanced(); err != nil {
			return "", err
		}
	case t.punct("-") || t.punct("+"):
		p.i += 2
	case t.kind == tWord && (strings.EqualFold(t.text, "b") || strings.EqualFold(t.text, "x") || strings.EqualFold(t.text, "_binary") || strings.HasPrefix(t.text, "_")) &&
		p.i+1 < len(p.toks) && p.toks[p.i+1].kind == tString:
		p.i += 2
	default:
		p.i++
		if p.peek().punct("(") {
			if _, err := p.balanced(); err != nil {
				return "", err
			}
		}
	}
	return strings.TrimSpace(p.src[start:p.toks[p.i-1].end]), nil
}
