// Package tabledef describes a MySQL/MariaDB table as SHOW CREATE TABLE
// gives it: its columns with their MySQL types, its keys and foreign keys,
// and the kind of each column's values (Kind). It is what the backends
// share about a source table: the PostgreSQL mapping translates it
// (postgres.TableDef is this Table), the copy reads the source by it and
// both copy writers (mysql/, postgres/) write by it. It does no I/O and
// imports no backend.
//
// The parser that fills a Table, postgres.ParseCreateTable, stays with
// the PostgreSQL DDL translation, whose lexer and parser it shares.
package tabledef

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/prepl/prepl/fault"
)

// Table is a source table as CREATE TABLE (or SHOW CREATE TABLE) gives it.
type Table struct {
	Schema, Name string
	Columns      []Column
	Indexes      []Index
	ForeignKeys  []ForeignKey
	Charset      string // the table's default character set
	Notes        []string
}

// Column is one source column.
type Column struct {
	Name      string
	Type      string // MySQL type name, lower case: "int", "varchar", "enum", "point"
	Unsigned  bool
	Length    int      // CHAR/VARCHAR/BINARY/VARBINARY length, BIT width; -1 when not given
	Precision int      // DECIMAL precision
	Scale     int      // DECIMAL scale; fractional second digits of temporal types
	Elems     []string // ENUM and SET members
	Charset   string   // text columns: "utf8mb4", "latin1", ...; "binary" for binary strings
	Collation string
	Nullable  bool
	Default   *string // the default as written (expression text); nil when none
	AutoInc   bool
	Generated string // generation expression (source SQL) of a generated column
	Comment   string
}

// Index is a primary key, unique key or plain index.
type Index struct {
	Name    string // "PRIMARY" for the primary key
	Primary bool
	Unique  bool
	Columns []string
	Prefix  []int // characters of each column indexed; 0 for all
}

// ForeignKey is a foreign key.
type ForeignKey struct {
	Name                string
	Columns             []string
	RefSchema, RefTable string
	RefColumns          []string
	OnDelete, OnUpdate  string
}

// Column returns the column named name (case-insensitively, as MySQL
// compares column names), or nil.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return &t.Columns[i]
		}
	}
	return nil
}

// PrimaryKey returns the primary key, else the first unique key whose
// columns are all NOT NULL, else nil.
func (t *Table) PrimaryKey() *Index {
	for i := range t.Indexes {
		if t.Indexes[i].Primary {
			return &t.Indexes[i]
		}
	}
next:
	for i := range t.Indexes {
		ix := &t.Indexes[i]
		if !ix.Unique {
			continue
		}
		for _, c := range ix.Columns {
			if col := t.Column(c); col == nil || col.Nullable {
				continue next
			}
		}
		return ix
	}
	return nil
}

// Clone copies t deep enough to change its columns, indexes and foreign
// keys.
func (t *Table) Clone() *Table {
	c := *t
	c.Columns = slices.Clone(t.Columns)
	c.Indexes = slices.Clone(t.Indexes)
	for i := range c.Indexes {
		c.Indexes[i].Columns = slices.Clone(c.Indexes[i].Columns)
		c.Indexes[i].Prefix = slices.Clone(c.Indexes[i].Prefix)
	}
	c.ForeignKeys = slices.Clone(t.ForeignKeys)
	c.Notes = nil
	return &c
}

// Kind is the class of a column's MySQL type: how its values are read
// from the source, written to a MySQL target and carried to PostgreSQL.
type Kind uint8

const (
	KindInt       Kind = iota + 1 // TINYINT..BIGINT, signed or unsigned
	KindDecimal                   // DECIMAL/NUMERIC
	KindFloat                     // FLOAT (4 bytes)
	KindDouble                    // DOUBLE/REAL
	KindBit                       // BIT(n)
	KindEnum                      // ENUM: text with a CHECK on the members
	KindSet                       // SET: text, members comma-joined in definition order
	KindYear                      // YEAR
	KindDate                      // DATE
	KindDatetime                  // DATETIME: timestamp without time zone
	KindTimestamp                 // TIMESTAMP: timestamptz, values in UTC
	KindTime                      // TIME: interval (covers -838:59:59..838:59:59)
	KindText                      // CHAR, VARCHAR, *TEXT in any charset: text in UTF-8
	KindBinary                    // BINARY, VARBINARY, *BLOB: bytea
	KindJSON                      // JSON (MySQL) or MariaDB's LONGTEXT CHECK (json_valid(c)): jsonb
	KindSpatial                   // GEOMETRY and its subtypes: PostGIS geometry or an error
)

// ErrUnsupported is wrapped by KindOf's error for a type no kind covers
// (fatal: a restart cannot carry it). Its text names the PostgreSQL
// mapping, whose error it is (postgres.ErrUnsupported); the copy into
// MySQL/MariaDB carries those types as their text instead.
var ErrUnsupported = fault.Fatal(errors.New("not supported by the PostgreSQL mapping"))

// kinds by MySQL type name.
var kinds = map[string]Kind{
	"tinyint": KindInt, "smallint": KindInt, "mediumint": KindInt, "int": KindInt, "integer": KindInt, "bigint": KindInt,
	"bool": KindInt, "boolean": KindInt,
	"decimal": KindDecimal, "numeric": KindDecimal, "dec": KindDecimal, "fixed": KindDecimal,
	"float": KindFloat, "double": KindDouble, "real": KindDouble,
	"bit": KindBit, "enum": KindEnum, "set": KindSet, "year": KindYear,
	"date": KindDate, "datetime": KindDatetime, "timestamp": KindTimestamp, "time": KindTime,
	"char": KindText, "varchar": KindText, "tinytext": KindText, "text": KindText, "mediumtext": KindText, "longtext": KindText,
	"binary": KindBinary, "varbinary": KindBinary, "tinyblob": KindBinary, "blob": KindBinary, "mediumblob": KindBinary, "longblob": KindBinary,
	"json":     KindJSON,
	"geometry": KindSpatial, "point": KindSpatial, "linestring": KindSpatial, "polygon": KindSpatial,
	"multipoint": KindSpatial, "multilinestring": KindSpatial, "multipolygon": KindSpatial, "geometrycollection": KindSpatial,
}

// TypeKind is the kind of MySQL type name typ (lower case), 0 for a type
// no kind covers; KindOf also looks at the column's character set.
func TypeKind(typ string) Kind { return kinds[typ] }

// KindOf returns how c is carried, or an error naming it.
func KindOf(c *Column) (Kind, error) {
	k, ok := kinds[c.Type]
	if !ok {
		return 0, fmt.Errorf("column %s: type %s: %w", c.Name, c.Type, ErrUnsupported)
	}
	if k == KindText && c.Charset == "binary" {
		return KindBinary, nil // CHAR(n) BINARY/CHARACTER SET binary
	}
	return k, nil
}

// Numeric: s holds only what a MySQL number's text holds (digits, sign,
// point, exponent), so it is safe as it is in SQL and in COPY.
func Numeric[T string | []byte](s T) bool {
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return false
		}
	}
	return true
}
