package filter

import "strings"

// What a DDL statement changes, read from its leading keywords.
type ddlClass uint8

const (
	classUnknown  ddlClass = iota // GRANT, CREATE USER, ...: no object prepl can name
	classTable                    // TABLE, INDEX, SEQUENCE, RENAME, TRUNCATE, DROP VIEW
	classBody                     // CREATE/ALTER VIEW, TRIGGER, PROCEDURE, FUNCTION, EVENT, PACKAGE: a body follows
	classDatabase                 // CREATE/ALTER/DROP DATABASE or SCHEMA
)

// objectKinds are the words naming what a CREATE/ALTER/DROP acts on.
var objectKinds = map[string]ddlClass{
	"TABLE": classTable, "INDEX": classTable, "SEQUENCE": classTable, "VIEW": classBody,
	"TRIGGER": classBody, "PROCEDURE": classBody, "FUNCTION": classBody, "EVENT": classBody,
	"PACKAGE": classBody, "DATABASE": classDatabase, "SCHEMA": classDatabase,
	// Words that end the search: the statement is about something else.
	"USER": classUnknown, "ROLE": classUnknown, "SERVER": classUnknown, "TABLESPACE": classUnknown,
	"LOGFILE": classUnknown,
}

// databaseOptions start the options of ALTER DATABASE without a name.
var databaseOptions = map[string]bool{"CHARACTER": true, "CHARSET": true, "DEFAULT": true, "COLLATE": true,
	"COMMENT": true, "UPGRADE": true, "READ": true, "ENCRYPTION": true}

// ddl is what the filter understood of a DDL statement.
type ddl struct {
	class    ddlClass
	kind     string // object kind word: TABLE, VIEW, DATABASE, ...
	verb     string // CREATE, ALTER, DROP, RENAME, TRUNCATE
	subjects []name // the objects it changes (tables, views, triggers' tables, routines)
	list     bool   // DROP TABLE/VIEW a, b: subjects form a comma list that may be pruned
	database *name  // classDatabase: the database name token, if written
}

// parseDDL reads the verb, the object kind and the names of the objects a
// DDL statement changes. Anything it does not recognise is classUnknown.
func parseDDL(toks []token) ddl {
	if len(toks) == 0 || toks[0].kind != tWord {
		return ddl{}
	}
	d := ddl{verb: toks[0].upper}
	i := 1
	switch d.verb {
	case "CREATE", "ALTER", "DROP":
		for ; i < len(toks); i++ {
			if c, ok := objectKinds[toks[i].upper]; ok && toks[i].kind == tWord {
				if toks[i].upper == "INDEX" && d.verb == "ALTER" {
					return ddl{}
				}
				d.class, d.kind = c, toks[i].upper
				i++
				break
			}
			if toks[i].is("ON") || toks[i].punct('(') {
				return ddl{}
			}
		}
		if d.class == classUnknown {
			return ddl{}
		}
	case "RENAME":
		if i < len(toks) && (toks[i].is("TABLE") || toks[i].is("TABLES")) {
			d.class, d.kind = classTable, "TABLE"
			i++
		} else {
			return ddl{}
		}
	case "TRUNCATE":
		d.class, d.kind = classTable, "TABLE"
		if i < len(toks) && toks[i].is("TABLE") {
			i++
		}
	default:
		return ddl{}
	}
	i = skipIfExists(toks, i)
	switch {
	case d.class == classDatabase:
		// ALTER DATABASE may omit the name: CHARACTER SET ... applies to
		// the default database.
		if n, ok := nameAt(toks, i); ok && n.qual < 0 && !(toks[i].kind == tWord && databaseOptions[toks[i].upper]) {
			d.database = &n
		}
	case d.verb == "RENAME":
		d.subjects = nameList(toks, i, "TO")
	case d.verb == "DROP" && (d.kind == "TABLE" || d.kind == "VIEW"):
		d.class, d.list = classTable, true
		d.subjects = nameList(toks, i, "")
	case d.kind == "INDEX":
		// CREATE ... INDEX i [USING t] ON tbl; DROP INDEX i ON tbl
		for j := i; j < len(toks); j++ {
			if toks[j].is("ON") {
				if n, ok := nameAt(toks, j+1); ok {
					d.subjects = []name{n}
				}
				break
			}
		}
	case d.kind == "TRIGGER":
		// CREATE TRIGGER t {BEFORE|AFTER} {INSERT|UPDATE|DELETE} ON tbl: the
		// trigger belongs to its table. DROP TRIGGER names only the trigger.
		n, ok := nameAt(toks, i)
		if !ok {
			return ddl{}
		}
		d.subjects = []name{n}
		if d.verb != "DROP" {
			for j := n.last + 1; j < len(toks) && j < n.last+6; j++ {
				if toks[j].is("ON") {
					if tn, ok := nameAt(toks, j+1); ok {
						d.subjects = append(d.subjects, tn)
					}
					break
				}
			}
		}
	default:
		n, ok := nameAt(toks, i)
		if !ok {
			return ddl{}
		}
		d.subjects = []name{n}
		if d.verb == "ALTER" && d.kind == "TABLE" {
			d.subjects = append(d.subjects, alterRenames(toks, n.last+1)...)
		}
	}
	if d.class != classDatabase && len(d.subjects) == 0 {
		return ddl{}
	}
	return d
}

// skipIfExists skips IF [NOT] EXISTS at i.
func skipIfExists(toks []token, i int) int {
	if i < len(toks) && toks[i].is("IF") {
		i++
		if i < len(toks) && toks[i].is("NOT") {
			i++
		}
		if i < len(toks) && toks[i].is("EXISTS") {
			i++
		}
	}
	return i
}

// nameList reads "a, b, c" (sep "") or "a TO b, c TO d" (sep "TO").
func nameList(toks []token, i int, sep string) []name {
	var out []name
	for {
		n, ok := nameAt(toks, i)
		if !ok {
			return out
		}
		out = append(out, n)
		i = n.last + 1
		switch {
		case i < len(toks) && toks[i].punct(','):
			i++
		case sep != "" && i < len(toks) && toks[i].is(sep):
			i++
		default:
			return out
		}
	}
}

// alterRenames finds "RENAME [TO|AS] name" clauses of an ALTER TABLE at
// its top level (not RENAME COLUMN/INDEX/KEY).
func alterRenames(toks []token, i int) []name {
	var out []name
	depth := 0
	for ; i < len(toks); i++ {
		switch {
		case toks[i].punct('('):
			depth++
		case toks[i].punct(')'):
			depth--
		case depth == 0 && toks[i].is("RENAME"):
			j := i + 1
			if j < len(toks) && (toks[j].is("COLUMN") || toks[j].is("INDEX") || toks[j].is("KEY") || toks[j].is("CONSTRAINT")) {
				continue
			}
			if j < len(toks) && (toks[j].is("TO") || toks[j].is("AS")) {
				j++
			}
			if n, ok := nameAt(toks, j); ok {
				out = append(out, n)
				i = n.last
			}
		}
	}
	return out
}

// DDL decides whether a DDL statement runs on the target and rewrites it.
// defaultSchema is the source session's default database. It returns the
// statement to run and false when the statement is to be skipped.
//
// The decision follows the objects the statement changes: a table, view,
// sequence or index statement runs when one of its tables is applied; a
// trigger follows its table; a procedure, function, event or package, and
// CREATE/ALTER/DROP DATABASE, follow their schema (see Schema). DROP TABLE
// and DROP VIEW lists lose the names not applied. A statement prepl cannot
// attribute (GRANT, CREATE USER, ...) follows its default schema, and runs
// when it has none.
//
// Rewriting: the default schema; in table, index, sequence, RENAME,
// TRUNCATE and DROP statements every schema-qualified name (LIKE and
// REFERENCES included); the database name of database statements; the
// object's own name (and a trigger's table) in view, trigger and routine
// statements, whose bodies are left as written. Account statements are not
// rewritten.
func (f *Filter) DDL(sql, defaultSchema string) (string, bool) {
	toks := tokenize(sql)
	d := parseDDL(toks)
	switch d.class {
	case classUnknown:
		return sql, defaultSchema == "" || f.Schema(defaultSchema)
	case classDatabase:
		db, tok := defaultSchema, -1
		if d.database != nil {
			db, tok = d.database.object, d.database.first
		}
		if !f.Schema(db) {
			return sql, false
		}
		var edits []edit
		if dst, ok := f.rewrite[db]; ok && tok >= 0 {
			edits = append(edits, edit{toks[tok].start, toks[tok].end, quoteIdent(dst)})
		}
		return applyEdits(sql, edits), true
	}

	keep := false
	var dropped []name
	for _, n := range d.subjects {
		s := n.schema
		if s == "" {
			s = defaultSchema
		}
		applied := s == "" || f.Table(s, n.object)
		if d.class == classBody && d.kind != "VIEW" && d.kind != "TRIGGER" {
			applied = s == "" || f.Schema(s)
		}
		if applied {
			keep = true
		} else if d.list {
			dropped = append(dropped, n)
		}
	}
	if d.kind == "TRIGGER" && len(d.subjects) == 2 {
		// The trigger's table decides; its own name only carries the schema.
		s := d.subjects[1].schema
		if s == "" {
			s = d.subjects[0].schema
		}
		if s == "" {
			s = defaultSchema
		}
		keep = s == "" || f.Table(s, d.subjects[1].object)
	}
	if !keep {
		return sql, false
	}

	var edits []edit
	if d.class == classTable {
		edits = qualifierEdits(toks, f.rewrite)
	} else {
		for _, n := range d.subjects {
			if dst, ok := f.rewrite[n.schema]; ok && n.qual >= 0 {
				edits = append(edits, edit{toks[n.qual].start, toks[n.qual].end, quoteIdent(dst)})
			}
		}
	}
	if len(dropped) > 0 {
		edits = pruneList(sql, toks, d.subjects, dropped, edits)
	}
	return applyEdits(sql, edits), true
}

// pruneList removes the dropped names (and their commas) from a DROP list,
// keeping the rewrite edits of the names that stay.
func pruneList(sql string, toks []token, all, dropped []name, rewrites []edit) []edit {
	gone := map[int]bool{}
	for _, n := range dropped {
		gone[n.first] = true
	}
	var kept []name
	for _, n := range all {
		if !gone[n.first] {
			kept = append(kept, n)
		}
	}
	start, end := toks[all[0].first].start, toks[all[len(all)-1].last].end
	var edits []edit
	for _, e := range rewrites {
		if e.end <= start {
			edits = append(edits, e)
		}
	}
	var b strings.Builder
	for i, n := range kept {
		if i > 0 {
			b.WriteString(", ")
		}
		from, to := toks[n.first].start, toks[n.last].end
		var inner []edit
		for _, e := range rewrites {
			if e.start >= from && e.end <= to {
				inner = append(inner, edit{e.start - from, e.end - from, e.text})
			}
		}
		b.WriteString(applyEdits(sql[from:to], inner))
	}
	edits = append(edits, edit{start, end, b.String()})
	for _, e := range rewrites {
		if e.start >= end {
			edits = append(edits, e)
		}
	}
	return edits
}
