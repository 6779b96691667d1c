package snapshot

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/prepl/prepl/tabledef"
)

// Dialect is how a target's SQL says the statements of prepl verify
// --fix-sql (pt-table-sync's --print): each Reader knows its target's.
type Dialect struct {
	// Begin and End enclose the statements: the session they need (the
	// time zone verify reads in, foreign key checks off: the fixes of
	// one table may come before those of its parent), a transaction.
	Begin, End []string
	// Table is the target's quoted name of the source's table t, Column
	// of the source's column name.
	Table  func(t *tabledef.Table) string
	Column func(name string) string
	// Literal says a value in the canonical text Reader.Rows gives (nil:
	// NULL) as a literal of column c's type, or why it cannot.
	Literal func(c *tabledef.Column, v *string) (string, error)
	// Writable reports whether a statement may set c (a MySQL target
	// computes its generated columns; PostgreSQL holds the source's
	// values in plain columns).
	Writable func(c *tabledef.Column) bool
	// Same is the null-safe equality of a row of a table without a
	// primary key with a value ("a <=> v", "a IS NOT DISTINCT FROM v").
	Same func(col, lit string) string
	// DeleteOne deletes one row of table matching where (a table
	// without a primary key may hold the same row twice).
	DeleteOne func(table, where string) string
}

// FixWriter writes the statements that make the target's rows equal to
// the source's, for every row verify finds different: extra rows
// deleted, then differing columns updated, then missing rows inserted,
// chunk by chunk of primary key.
type FixWriter struct {
	w   *bufio.Writer
	d   Dialect
	err error
	// Statements counts the statements written, Unfixable the
	// differences no statement could fix (each a comment in the file).
	Statements, Unfixable int
	begun                 bool
}

// NewFixWriter writes to w in the dialect of the target that verify
// reads (Reader.Dialect).
func NewFixWriter(w io.Writer) *FixWriter { return &FixWriter{w: bufio.NewWriter(w)} }

func (f *FixWriter) line(s string) {
	if f.err == nil {
		_, f.err = f.w.WriteString(s + "\n")
	}
}

func (f *FixWriter) begin(d Dialect) {
	if f.begun {
		return
	}
	f.begun, f.d = true, d
	f.line("-- prepl verify --fix-sql: apply to the target to make it equal to the source")
	for _, s := range d.Begin {
		f.line(s + ";")
	}
}

// Close ends the statements (the dialect's End) and flushes them.
func (f *FixWriter) Close() error {
	if !f.begun {
		f.line("-- prepl verify --fix-sql: no difference, nothing to apply")
	}
	for _, s := range f.d.End {
		f.line(s + ";")
	}
	if err := f.w.Flush(); f.err == nil {
		f.err = err
	}
	return f.err
}

func (f *FixWriter) unfixable(table, why string) {
	f.Unfixable++
	f.line("-- " + table + ": cannot write a fix: " + strings.ReplaceAll(why, "\n", " "))
}

// chunk writes the fixes of one chunk of table t: s the source's rows, d
// the target's (both as Reader.Rows gives them).
func (f *FixWriter) chunk(t *table, s, d [][]*string) {
	name := t.def.Schema + "." + t.def.Name
	var deletes, updates, inserts []string
	add := func(to *[]string, stmt string, err error) {
		if err != nil {
			f.unfixable(name, err.Error())
			return
		}
		if stmt != "" {
			*to = append(*to, stmt)
		}
	}
	if len(t.key) == 0 {
		// Rows without a key are a multiset: as many copies of a row as
		// one side has more than the other.
		count := map[string]int{}
		for _, r := range s {
			count[rowText(r)]++
		}
		for _, r := range d {
			if k := rowText(r); count[k] > 0 {
				count[k]--
			} else {
				stmt, err := f.deleteRow(t, r)
				add(&deletes, stmt, err)
			}
		}
		for _, r := range s {
			if k := rowText(r); count[k] > 0 {
				count[k]--
				stmt, err := f.insert(t, r)
				add(&inserts, stmt, err)
			}
		}
	} else {
		dst := map[string][]*string{}
		for _, r := range d {
			dst[strings.Join(keyValues(t, r), "\x00")] = r
		}
		seen := map[string]bool{}
		for _, r := range s {
			k := strings.Join(keyValues(t, r), "\x00")
			seen[k] = true
			if o, ok := dst[k]; !ok {
				stmt, err := f.insert(t, r)
				add(&inserts, stmt, err)
			} else {
				stmt, err := f.update(t, r, o)
				add(&updates, stmt, err)
			}
		}
		for _, r := range d {
			if !seen[strings.Join(keyValues(t, r), "\x00")] {
				stmt, err := f.deleteRow(t, r)
				add(&deletes, stmt, err)
			}
		}
	}
	for _, list := range [][]string{deletes, updates, inserts} {
		for _, stmt := range list {
			f.Statements++
			f.line(stmt + ";")
		}
	}
}

// where matches row r of t: by its primary key, or every column the
// target holds for a table without one.
func (f *FixWriter) where(t *table, r []*string) (string, error) {
	var conds []string
	for i := range t.def.Columns {
		c := &t.def.Columns[i]
		key := false
		for _, k := range t.key {
			key = key || k == c.Name
		}
		if len(t.key) > 0 && !key || len(t.key) == 0 && !f.d.Writable(c) {
			continue
		}
		lit, err := f.d.Literal(c, r[i])
		if err != nil {
			return "", err
		}
		if key {
			conds = append(conds, f.d.Column(c.Name)+" = "+lit)
		} else {
			conds = append(conds, f.d.Same(f.d.Column(c.Name), lit))
		}
	}
	return strings.Join(conds, " AND "), nil
}

func (f *FixWriter) deleteRow(t *table, r []*string) (string, error) {
	w, err := f.where(t, r)
	if err != nil {
		return "", err
	}
	if len(t.key) == 0 {
		return f.d.DeleteOne(f.d.Table(t.dst), w), nil
	}
	return "DELETE FROM " + f.d.Table(t.dst) + " WHERE " + w, nil
}

func (f *FixWriter) insert(t *table, r []*string) (string, error) {
	var cols, vals []string
	for i := range t.def.Columns {
		c := &t.def.Columns[i]
		if !f.d.Writable(c) {
			continue
		}
		lit, err := f.d.Literal(c, r[i])
		if err != nil {
			return "", err
		}
		cols, vals = append(cols, f.d.Column(c.Name)), append(vals, lit)
	}
	return "INSERT INTO " + f.d.Table(t.dst) + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(vals, ", ") + ")", nil
}

// update sets the columns of the target's row o that differ from the
// source's row r. The columns the target computes are left to it: they
// follow the columns set; if only they differ, no statement can fix it.
func (f *FixWriter) update(t *table, r, o []*string) (string, error) {
	var set []string
	computed := ""
	for i := range t.def.Columns {
		c := &t.def.Columns[i]
		x, y := r[i], o[i]
		if (x == nil) == (y == nil) && (x == nil || *x == *y) {
			continue
		}
		if !f.d.Writable(c) {
			computed = c.Name
			continue
		}
		lit, err := f.d.Literal(c, x)
		if err != nil {
			return "", err
		}
		set = append(set, f.d.Column(c.Name)+" = "+lit)
	}
	if len(set) == 0 {
		if computed != "" {
			return "", fmt.Errorf("only column %s differs, which the target computes (a generated column): the tables' definitions differ", computed)
		}
		return "", nil
	}
	w, err := f.where(t, o)
	if err != nil {
		return "", err
	}
	return "UPDATE " + f.d.Table(t.dst) + " SET " + strings.Join(set, ", ") + " WHERE " + w, nil
}

// Dialect: a MySQL/MariaDB target's, for values as SourceExpr reads them.
func (m *myReader) Dialect() Dialect {
	return Dialect{
		// verify reads TIMESTAMP in UTC; a lax sql_mode takes the zero
		// dates the source holds; an id of 0 stays 0.
		Begin: []string{"SET NAMES utf8mb4",
			"SET SESSION time_zone = '+00:00', sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION', foreign_key_checks = 0",
			"START TRANSACTION"},
		End:      []string{"COMMIT"},
		Table:    func(t *tabledef.Table) string { return quoteMy(t.Schema) + "." + quoteMy(t.Name) },
		Column:   quoteMy,
		Literal:  myLiteral,
		Writable: func(c *tabledef.Column) bool { return c.Generated == "" },
		Same:     func(col, lit string) string { return col + " <=> " + lit },
		DeleteOne: func(table, where string) string {
			return "DELETE FROM " + table + " WHERE " + where + " LIMIT 1"
		},
	}
}

// myLiteral says v (SourceExpr's text) as a MySQL literal of c's type.
// Strings go as hex under their column's character set (the bytes
// CAST(c AS BINARY) read): exact for any byte, and compared in the
// column's collation, so that a key's index serves the WHERE.
func myLiteral(c *tabledef.Column, v *string) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	k, err := tabledef.KindOf(c)
	if err != nil {
		return "", err
	}
	switch k {
	case tabledef.KindInt, tabledef.KindDecimal, tabledef.KindFloat, tabledef.KindDouble, tabledef.KindBit, tabledef.KindYear:
		if !tabledef.Numeric(*v) {
			return "", fmt.Errorf("column %s: %q is not a number", c.Name, *v)
		}
		return *v, nil
	case tabledef.KindDate, tabledef.KindDatetime, tabledef.KindTimestamp, tabledef.KindTime:
		return quoteString(*v), nil
	case tabledef.KindText:
		cs := c.Charset
		if cs == "" || !identChars(cs) {
			cs = "binary"
		}
		return fmt.Sprintf("_%s X'%x'", cs, *v), nil
	case tabledef.KindEnum, tabledef.KindSet, tabledef.KindJSON:
		return fmt.Sprintf("_utf8mb4 X'%x'", *v), nil // read in the session's utf8mb4
	}
	return fmt.Sprintf("X'%x'", *v), nil // binary strings, geometry
}

func identChars(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
