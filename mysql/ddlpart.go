package mysql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prepl/prepl/internal/sqllex"
)

// The digest of ddlState reads the part of the catalog a DDL can change,
// not every user schema: read whole before each DDL, the catalog made a
// stream of DDL into a target of many tables quadratic (MariaDB's
// innodb.innodb-fk, 120 CREATE TABLEs, did not finish in 5 minutes), and a
// migration over thousands of tables paid it on every ALTER.
//
// Exactly once needs two things of the digest (ddlstate.go): equal when
// the DDL did not take effect, and different when it did. The first holds
// for any part, since nothing but prepl changes the target's catalog
// between the pending mark and the check (the whole digest rests on that
// too). The second holds when every change the DDL can make to the
// catalog of the user schemas changes a row of its part, or comes with
// one that does; then the part's digest differs exactly when the whole
// one does. By kind of statement (unqualified names are the statement's
// default database's, which the DDL runs in):
//
//   - CREATE [OR REPLACE] TABLE/SEQUENCE/VIEW t, ALTER VIEW/SEQUENCE t,
//     TRUNCATE t, OPTIMIZE/REPAIR/ANALYZE TABLE t, CREATE/DROP INDEX ... ON
//     t: t's rows (its table, columns, keys, constraints, partitions, view,
//     triggers, and its InnoDB table id, which a rebuild or a truncation
//     changes). A foreign key's REFERENCES p changes none of p's rows:
//     MariaDB lists a foreign key under the table that holds it only
//     (KEY_COLUMN_USAGE, REFERENTIAL_CONSTRAINTS, TABLE_CONSTRAINTS). What
//     replacing t does to others (a view over t becoming valid or not, a
//     trigger dropped with it) comes with a change of t's rows.
//   - ALTER TABLE t: t, and every name after a RENAME [TO|AS] or a TABLE
//     in it (RENAME TO u; EXCHANGE PARTITION p WITH TABLE u; CONVERT
//     PARTITION p TO TABLE u; CONVERT TABLE u TO PARTITION p). The children
//     of a renamed parent see the new name in their rows, the renamed
//     parent's rows change too.
//   - DROP TABLE/VIEW/SEQUENCE t, u, ...; RENAME TABLE t TO u, ...: each
//     name, on both sides of a rename (a swap of two tables of the same
//     definition is told by their InnoDB ids); a table's triggers go with
//     it, and are read with it (by EVENT_OBJECT_TABLE).
//   - CREATE TRIGGER ... ON t: t's triggers (a CREATE OR REPLACE that
//     moves a trigger from another table also adds it to t's).
//     DROP TRIGGER g: the triggers of g's schema named g.
//   - CREATE/ALTER/DROP PROCEDURE, FUNCTION, PACKAGE [BODY] r: the
//     routines and parameters named r in r's schema (mysql.proc's rows;
//     a loadable function's mysql.func was never in the digest).
//   - CREATE/DROP DATABASE d: every object of d, routines included, and
//     the list of schemas; ALTER DATABASE: the list of schemas, which holds
//     a schema's character set and collation.
//
// The list of schemas and the InnoDB table ids are read whole for every
// part: neither opens a table. Anything else falls back to every user
// schema: another statement; a name in a system schema or prepl's (a
// stream that renames mysql.proc away changes what ROUTINES can read, not
// a user table's row); an unqualified name without a default database;
// an executable comment /*!...*/ (its body is code the server may run or
// not); and text whose tokens the server may split otherwise than
// sqllex: a backslash or a double quote, whose meaning in strings and
// identifiers depends on sql_mode (NO_BACKSLASH_ESCAPES, ANSI_QUOTES),
// or a byte of a non-ASCII character, which the statement's character set
// decides (a character of GBK or SJIS may end in a backquote), and which
// the catalog may hold in another one.

// objectName is an object of the catalog: a table, view, sequence,
// trigger or routine, by its schema and name.
type objectName struct{ schema, name string }

// catalogPart is the part of the catalog a DDL can change (partOf).
type catalogPart struct {
	whole    bool         // every user schema: the text does not tell
	schemas  []string     // every object of these schemas
	tables   []objectName // these tables, views and sequences, with their triggers
	triggers []objectName // these triggers
	routines []objectName // these stored procedures, functions and packages
	// references are the tables a CREATE or ALTER TABLE names after
	// REFERENCES: not in the digest (see above), but their cached
	// definitions (Referenced, Cascades) change with the foreign key
	// (Catalog.ForgetDDL).
	references []objectName
	trigger    bool // CREATE TRIGGER: may move a trigger from another table
}

var wholeCatalog = catalogPart{whole: true}

// String describes the part, for the digest: two parts read the same rows
// only if they describe themselves the same.
func (p catalogPart) String() string {
	if p.whole {
		return "whole"
	}
	return fmt.Sprintf("schemas %q tables %q triggers %q routines %q", p.schemas, p.tables, p.triggers, p.routines)
}

// systemSchemas are the schemas the digest never reads (userSchemas).
var systemSchemas = []string{"mysql", "information_schema", "performance_schema", "sys", PositionSchema}

// valid reports whether every name of the part is one the digest can
// restrict its queries to: ASCII, not empty, in a user schema.
func (p catalogPart) valid() bool {
	ok := func(s string) bool {
		if s == "" {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] >= 0x7f {
				return false
			}
		}
		return true
	}
	schema := func(s string) bool {
		for _, sys := range systemSchemas {
			if strings.EqualFold(s, sys) {
				return false
			}
		}
		return ok(s)
	}
	for _, s := range p.schemas {
		if !schema(s) {
			return false
		}
	}
	for _, l := range [][]objectName{p.tables, p.triggers, p.routines} {
		for _, o := range l {
			if !schema(o.schema) || !ok(o.name) {
				return false
			}
		}
	}
	return true
}

// partOf returns the part of the catalog stmt can change, run with db as
// its default database (see the comment at the top of this file).
func partOf(stmt, db string) catalogPart {
	for i := 0; i < len(stmt); i++ {
		if c := stmt[i]; c == '\\' || c == '"' || c >= 0x80 {
			return wholeCatalog
		}
	}
	var toks []sqllex.Token
	for _, t := range sqllex.Tokens(stmt) {
		if t.Unterminated || t.Kind == sqllex.ExecOpen {
			return wholeCatalog
		}
		if t.Code() {
			toks = append(toks, t)
		}
	}
	p := &ddlParser{toks: toks, db: db}
	part, ok := p.statement()
	if !ok || !part.valid() {
		return wholeCatalog
	}
	part.tables = uniq(part.tables)
	return part
}

// uniq drops the names seen before in l (a RENAME TABLE names each of a
// swap's tables twice).
func uniq(l []objectName) []objectName {
	var out []objectName
	for _, o := range l {
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// ddlParser reads the names a DDL acts on from its code tokens.
type ddlParser struct {
	toks []sqllex.Token
	i    int
	db   string
}

func (p *ddlParser) tok() sqllex.Token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return sqllex.Token{}
}

// word consumes the bare word w if it comes next.
func (p *ddlParser) word(w string) bool {
	if p.tok().Is(w) {
		p.i++
		return true
	}
	return false
}

// words consumes the bare words ws if they all come next, in order.
func (p *ddlParser) words(ws ...string) bool {
	for k, w := range ws {
		if p.i+k >= len(p.toks) || !p.toks[p.i+k].Is(w) {
			return false
		}
	}
	p.i += len(ws)
	return true
}

func (p *ddlParser) punct(c byte) bool {
	t := p.tok()
	if t.Kind == sqllex.Punct && t.Text[0] == c {
		p.i++
		return true
	}
	return false
}

// end reports whether only an optional ';' is left.
func (p *ddlParser) end() bool {
	p.punct(';')
	return p.i == len(p.toks)
}

func (p *ddlParser) ident() (string, bool) {
	switch t := p.tok(); t.Kind {
	case sqllex.Word:
		p.i++
		return t.Text, true
	case sqllex.Ident:
		p.i++
		return sqllex.Unquote(t.Text), true
	}
	return "", false
}

// name reads [schema.]name; an unqualified name is the default
// database's, and not a name without one.
func (p *ddlParser) name() (objectName, bool) {
	a, ok := p.ident()
	if !ok {
		return objectName{}, false
	}
	if p.punct('.') {
		b, ok := p.ident()
		return objectName{a, b}, ok
	}
	return objectName{p.db, a}, p.db != ""
}

// names reads name {, name}.
func (p *ddlParser) names() ([]objectName, bool) {
	var out []objectName
	for {
		n, ok := p.name()
		if !ok {
			return nil, false
		}
		out = append(out, n)
		if !p.punct(',') {
			return out, true
		}
	}
}

// ifExists consumes IF EXISTS or IF NOT EXISTS.
func (p *ddlParser) ifExists() {
	if !p.words("IF", "EXISTS") {
		p.words("IF", "NOT", "EXISTS")
	}
}

// wait consumes WAIT n or NOWAIT.
func (p *ddlParser) wait() {
	if p.word("WAIT") {
		if p.tok().Kind == sqllex.Number {
			p.i++
		}
		return
	}
	p.word("NOWAIT")
}

// user consumes a user: CURRENT_USER [()], CURRENT_ROLE, or name[@host].
func (p *ddlParser) user() bool {
	if p.word("CURRENT_USER") {
		if p.punct('(') && !p.punct(')') {
			return false
		}
		return true
	}
	if p.word("CURRENT_ROLE") {
		return true
	}
	part := func() bool {
		switch p.tok().Kind {
		case sqllex.Word, sqllex.Ident, sqllex.String:
			p.i++
			return true
		}
		return false
	}
	if !part() {
		return false
	}
	if p.punct('@') {
		return part()
	}
	return true
}

// prefixes consumes what may come between CREATE or ALTER and the kind
// of object: TEMPORARY, ONLINE, IGNORE, UNIQUE, AGGREGATE, ALGORITHM = x,
// DEFINER = user, SQL SECURITY x, and the like. The server refuses the
// combinations its grammar has not; such a DDL changes nothing.
func (p *ddlParser) prefixes() bool {
	for {
		switch {
		case p.word("TEMPORARY"), p.word("ONLINE"), p.word("OFFLINE"), p.word("IGNORE"),
			p.word("UNIQUE"), p.word("FULLTEXT"), p.word("SPATIAL"), p.word("AGGREGATE"):
		case p.word("ALGORITHM"):
			if !p.punct('=') {
				return false
			}
			if _, ok := p.ident(); !ok {
				return false
			}
		case p.word("DEFINER"):
			if !p.punct('=') || !p.user() {
				return false
			}
		case p.words("SQL", "SECURITY"):
			if _, ok := p.ident(); !ok {
				return false
			}
		default:
			return true
		}
	}
}

func (p *ddlParser) statement() (catalogPart, bool) {
	switch {
	case p.word("CREATE"):
		p.words("OR", "REPLACE")
		return p.create()
	case p.word("ALTER"):
		return p.alter()
	case p.word("DROP"):
		return p.drop()
	case p.word("RENAME"):
		if !p.word("TABLE") && !p.word("TABLES") {
			return catalogPart{}, false
		}
		p.ifExists()
		return p.renames()
	case p.word("TRUNCATE"):
		p.word("TABLE")
		n, ok := p.name()
		p.wait()
		return catalogPart{tables: []objectName{n}}, ok && p.end()
	case p.word("OPTIMIZE"), p.word("REPAIR"), p.word("ANALYZE"):
		if !p.word("NO_WRITE_TO_BINLOG") {
			p.word("LOCAL")
		}
		if !p.word("TABLE") && !p.word("TABLES") {
			return catalogPart{}, false
		}
		// What follows the names (QUICK, PERSISTENT FOR ...) acts on them.
		ns, ok := p.names()
		return catalogPart{tables: ns}, ok
	}
	return catalogPart{}, false
}

func (p *ddlParser) create() (catalogPart, bool) {
	if !p.prefixes() {
		return catalogPart{}, false
	}
	switch {
	case p.word("TABLE"), p.word("SEQUENCE"), p.word("VIEW"):
		// What follows the name (columns, LIKE, SELECT, AS, options) acts
		// on that table or view only.
		p.ifExists()
		n, ok := p.name()
		if !ok {
			return catalogPart{}, false
		}
		refs, ok := p.references()
		return catalogPart{tables: []objectName{n}, references: refs}, ok
	case p.word("INDEX"):
		return p.index()
	case p.word("TRIGGER"):
		p.ifExists()
		trg, ok := p.name()
		if !ok || !p.word("BEFORE") && !p.word("AFTER") {
			return catalogPart{}, false
		}
		for p.word("INSERT") || p.word("UPDATE") || p.word("DELETE") || p.word("OR") {
		}
		if !p.word("ON") {
			return catalogPart{}, false
		}
		// The table is in the trigger's schema: the default database's
		// name for it, else the server refuses the trigger; both are read.
		t, ok := p.name()
		if !ok {
			return catalogPart{}, false
		}
		tables := []objectName{t}
		if trg.schema != t.schema {
			tables = append(tables, objectName{trg.schema, t.name})
		}
		return catalogPart{tables: tables, trigger: true}, true
	case p.word("PROCEDURE"), p.word("FUNCTION"), p.words("PACKAGE", "BODY"), p.word("PACKAGE"):
		p.ifExists()
		n, ok := p.name()
		return catalogPart{routines: []objectName{n}}, ok
	case p.word("DATABASE"), p.word("SCHEMA"):
		p.ifExists()
		d, ok := p.ident()
		return catalogPart{schemas: []string{d}}, ok
	}
	return catalogPart{}, false
}

// references reads, from the rest of the statement, the name after each
// REFERENCES (a reserved word: as a bare word, only a foreign key's).
func (p *ddlParser) references() ([]objectName, bool) {
	var out []objectName
	for p.i < len(p.toks) {
		if !p.word("REFERENCES") {
			p.i++
			continue
		}
		n, ok := p.name()
		if !ok {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// index reads the rest of [CREATE|DROP] INDEX [IF [NOT] EXISTS] i
// [USING|TYPE x] ON t: t.
func (p *ddlParser) index() (catalogPart, bool) {
	p.ifExists()
	if _, ok := p.ident(); !ok {
		return catalogPart{}, false
	}
	if p.word("USING") || p.word("TYPE") {
		if _, ok := p.ident(); !ok {
			return catalogPart{}, false
		}
	}
	if !p.word("ON") {
		return catalogPart{}, false
	}
	n, ok := p.name()
	return catalogPart{tables: []objectName{n}}, ok
}

func (p *ddlParser) alter() (catalogPart, bool) {
	if !p.prefixes() {
		return catalogPart{}, false
	}
	switch {
	case p.word("TABLE"):
		p.ifExists()
		n, ok := p.name()
		if !ok {
			return catalogPart{}, false
		}
		return p.alterTable(n)
	case p.word("SEQUENCE"), p.word("VIEW"):
		p.ifExists()
		n, ok := p.name()
		return catalogPart{tables: []objectName{n}}, ok
	case p.word("PROCEDURE"), p.word("FUNCTION"):
		n, ok := p.name()
		return catalogPart{routines: []objectName{n}}, ok
	case p.word("DATABASE"), p.word("SCHEMA"):
		// Character set, collation, comment: the list of schemas holds
		// what the digest reads of them. UPGRADE DATA DIRECTORY NAME
		// renames a schema.
		for _, t := range p.toks[p.i:] {
			if t.Is("UPGRADE") {
				return catalogPart{}, false
			}
		}
		return catalogPart{}, true
	}
	return catalogPart{}, false
}

// alterTable reads the alterations of ALTER TABLE t for the other tables
// they name: RENAME [TO|AS] u (not RENAME COLUMN, INDEX or KEY) and
// TABLE u (EXCHANGE PARTITION ... WITH TABLE u, CONVERT PARTITION ... TO
// TABLE u, CONVERT TABLE u TO PARTITION), outside parentheses.
func (p *ddlParser) alterTable(t objectName) (catalogPart, bool) {
	part := catalogPart{tables: []objectName{t}}
	depth := 0
	for p.i < len(p.toks) {
		switch {
		case p.punct('('):
			depth++
		case p.punct(')'):
			depth--
		case p.word("REFERENCES"):
			n, ok := p.name()
			if !ok {
				return catalogPart{}, false
			}
			part.references = append(part.references, n)
		case depth == 0 && p.word("RENAME"):
			if p.word("COLUMN") || p.word("INDEX") || p.word("KEY") {
				continue
			}
			if !p.word("TO") {
				p.word("AS")
			}
			n, ok := p.name()
			if !ok {
				return catalogPart{}, false
			}
			part.tables = append(part.tables, n)
		case depth == 0 && p.word("TABLE"):
			n, ok := p.name()
			if !ok {
				return catalogPart{}, false
			}
			part.tables = append(part.tables, n)
		default:
			p.i++
		}
	}
	return part, true
}

func (p *ddlParser) drop() (catalogPart, bool) {
	p.word("TEMPORARY")
	if p.word("ONLINE") || p.word("OFFLINE") {
		if !p.tok().Is("INDEX") {
			return catalogPart{}, false
		}
	}
	if p.word("INDEX") {
		// ALGORITHM and LOCK after the table name act on it.
		return p.index()
	}
	switch {
	case p.word("TABLE"), p.word("TABLES"), p.word("SEQUENCE"), p.word("VIEW"):
		p.ifExists()
		ns, ok := p.names()
		p.wait()
		if !p.word("RESTRICT") {
			p.word("CASCADE")
		}
		return catalogPart{tables: ns}, ok && p.end()
	case p.word("TRIGGER"):
		p.ifExists()
		n, ok := p.name()
		return catalogPart{triggers: []objectName{n}}, ok && p.end()
	case p.word("PROCEDURE"), p.word("FUNCTION"), p.words("PACKAGE", "BODY"), p.word("PACKAGE"):
		p.ifExists()
		n, ok := p.name()
		return catalogPart{routines: []objectName{n}}, ok && p.end()
	case p.word("DATABASE"), p.word("SCHEMA"):
		p.ifExists()
		d, ok := p.ident()
		return catalogPart{schemas: []string{d}}, ok && p.end()
	}
	return catalogPart{}, false
}

// renames reads t TO u {, t TO u} [WAIT n | NOWAIT]: every name.
func (p *ddlParser) renames() (catalogPart, bool) {
	var part catalogPart
	for {
		a, ok := p.name()
		if !ok || !p.word("TO") {
			return catalogPart{}, false
		}
		b, ok := p.name()
		if !ok {
			return catalogPart{}, false
		}
		part.tables = append(part.tables, a, b)
		if !p.punct(',') {
			break
		}
	}
	p.wait()
	return part, p.end()
}

// plainName reports whether InnoDB names s as it is: ASCII letters,
// digits and '_' (it encodes every other byte for the file system).
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}
