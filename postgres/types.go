// Package postgres maps MySQL/MariaDB tables, values and DDL to
// PostgreSQL, losing nothing: every source value either has an exact
// PostgreSQL value or is an error naming its column. It is pure (no
// connection); docs/postgres.md has the mapping as a table.
package postgres

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prepl/prepl/fault"
)

// Kind is how a source column is carried to PostgreSQL.
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

// Column is one source column as the mapping needs it.
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

// Options change the mapping.
type Options struct {
	// LowercaseNames lowercases every identifier (--lowercase-names):
	// unquoted names then work in PostgreSQL.
	LowercaseNames bool
	// ZeroDateNull stores zero dates ('0000-00-00', a zero month or day)
	// as NULL, and makes date columns nullable; without it a zero date is
	// an error naming its column (--zero-dates=null|error).
	ZeroDateNull bool
	// PostGIS maps spatial columns to geometry; without it they are an error.
	PostGIS bool
	// Now is the source's time of the DDL being translated (zero: the
	// target's clock), in the zone NowZone (nil: UTC) for DATETIME: an
	// ALTER TABLE ADD COLUMN ... DEFAULT CURRENT_TIMESTAMP fills the
	// existing rows with it, as MySQL and MariaDB's replica do.
	Now     time.Time
	NowZone *time.Location
	// AutoIncIncrement is the source session's auto_increment_increment
	// for the DDL being translated (0: 1): an ADD COLUMN ... AUTO_INCREMENT
	// is translated only under 1 (renumberSQL).
	AutoIncIncrement int
}

// nowDefault is the literal that stands for CURRENT_TIMESTAMP in an
// ADD COLUMN of c (o.Now, cut to c's fractional digits as the server
// cuts NOW(n)), "" without o.Now or for another kind of column.
func (o Options) nowDefault(c *Column) string {
	if o.Now.IsZero() {
		return ""
	}
	fsp := min(max(c.Scale, 0), 6)
	at := o.Now.Truncate(time.Duration(math.Pow10(9 - fsp)))
	switch k, _ := KindOf(c); k {
	case KindTimestamp:
		return QuoteString(at.UTC().Format("2006-01-02 15:04:05.999999") + "+00")
	case KindDatetime:
		zone := o.NowZone
		if zone == nil {
			zone = time.UTC
		}
		return QuoteString(at.In(zone).Format("2006-01-02 15:04:05.999999"))
	}
	return ""
}

// ErrUnsupported is wrapped by every error for a type, value or
// statement the mapping cannot carry without loss (fatal, package fault).
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

// intType maps an integer to the smallest PostgreSQL type holding all its values.
func intType(t string, unsigned bool) string {
	switch t {
	case "bool", "boolean", "tinyint":
		return "smallint"
	case "smallint":
		if unsigned {
			return "integer"
		}
		return "smallint"
	case "mediumint":
		return "integer"
	case "int", "integer":
		if unsigned {
			return "bigint"
		}
		return "integer"
	}
	if unsigned {
		return "numeric(20,0)"
	}
	return "bigint"
}

// MaxUnsignedBigint is the upper bound of the CHECK on a BIGINT UNSIGNED
// column's numeric(20,0).
const MaxUnsignedBigint = "18446744073709551615"

// Type returns the PostgreSQL type of c and the CHECK expression that
// keeps it to the source's values ("" when the type alone does).
func Type(c *Column, o Options) (typ, check string, err error) {
	k, err := KindOf(c)
	if err != nil {
		return "", "", err
	}
	q := Ident(c.Name, o)
	switch k {
	case KindInt:
		typ = intType(c.Type, c.Unsigned)
		if c.Unsigned && (c.Type == "bigint") {
			check = fmt.Sprintf("%s BETWEEN 0 AND %s", q, MaxUnsignedBigint)
		}
	case KindDecimal:
		p, s := c.Precision, c.Scale
		if p <= 0 {
			p = 10
		}
		typ = fmt.Sprintf("numeric(%d,%d)", p, s)
		if c.Unsigned {
			check = q + " >= 0"
		}
	case KindFloat:
		typ = "real"
	case KindDouble:
		typ = "double precision"
	case KindBit:
		n := c.Length
		if n <= 0 {
			n = 1
		}
		typ = fmt.Sprintf("bit(%d)", n)
	case KindEnum:
		typ = "text"
		// '' is the value MySQL stores for an invalid member outside strict mode.
		check = q + " IN (" + quoteList(append([]string{""}, c.Elems...)) + ")"
	case KindSet:
		typ = "text"
		check = "string_to_array(" + q + ", ',') <@ ARRAY[" + quoteList(c.Elems) + "]::text[]"
	case KindYear:
		typ = "smallint"
	case KindDate:
		typ = "date"
	case KindDatetime:
		typ = fmt.Sprintf("timestamp(%d) without time zone", c.Scale)
	case KindTimestamp:
		typ = fmt.Sprintf("timestamp(%d) with time zone", c.Scale)
	case KindTime:
		typ = fmt.Sprintf("interval(%d)", c.Scale)
	case KindText:
		if (c.Type == "char" || c.Type == "varchar") && c.Length > 0 {
			// CHAR too: MySQL strips a CHAR's trailing spaces on read, so
			// its values are those of a varchar, and PostgreSQL's
			// character(n) would pad them back.
			typ = fmt.Sprintf("varchar(%d)", c.Length)
		} else {
			typ = "text"
		}
	case KindBinary:
		typ = "bytea"
	case KindJSON:
		typ = "jsonb"
	case KindSpatial:
		if !o.PostGIS {
			return "", "", fmt.Errorf("column %s: spatial type %s needs PostGIS on the target (CREATE EXTENSION postgis): %w", c.Name, c.Type, ErrUnsupported)
		}
		typ = "geometry"
	}
	return typ, check, nil
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = QuoteString(x)
	}
	return strings.Join(q, ", ")
}

// Identity reports whether c (AUTO_INCREMENT) is an identity column in
// PostgreSQL: an integer that fits bigint (BIGINT UNSIGNED is numeric).
func Identity(c *Column) bool {
	k, _ := KindOf(c)
	return c.AutoInc && k == KindInt && !(c.Unsigned && c.Type == "bigint")
}

// ColumnSQL is c's column definition, its CHECK named by checkName so a
// later MODIFY can replace it, in a PostgreSQL CREATE TABLE or
// ALTER TABLE ADD COLUMN. A generated column becomes a plain column
// holding the source's computed values (PostgreSQL 15 has no virtual
// columns, and MySQL expressions do not translate in general); its
// expression is kept in the column's comment (see CommentSQL).
func ColumnSQL(table string, c *Column, o Options) (string, error) {
	typ, check, err := Type(c, o)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(Ident(c.Name, o) + " " + typ)
	k, _ := KindOf(c)
	nullable := c.Nullable || (o.ZeroDateNull && (k == KindDate || k == KindDatetime || k == KindTimestamp))
	if Identity(c) {
		b.WriteString(" GENERATED BY DEFAULT AS IDENTITY")
	} else if d, ok := defaultSQL(c, k); ok && c.Generated == "" {
		b.WriteString(" DEFAULT " + d)
	}
	if !nullable {
		b.WriteString(" NOT NULL")
	}
	if check != "" {
		b.WriteString(" CONSTRAINT " + Ident(checkName(table, c.Name), o) + " CHECK (" + check + ")")
	}
	return b.String(), nil
}

// defaultSQL translates a column default that means the same in
// PostgreSQL: NULL, a literal, CURRENT_TIMESTAMP. Anything else is
// dropped (rows always arrive with every value; a default only matters to
// writers on the target after a migration) and is in the report of copy.
func defaultSQL(c *Column, k Kind) (string, bool) {
	if c.Default == nil {
		return "", false
	}
	d := *c.Default
	ld := strings.ToLower(d)
	if ld == "null" {
		return "", false
	}
	if strings.HasPrefix(ld, "current_timestamp") || ld == "now()" {
		if k == KindTimestamp || k == KindDatetime {
			return "CURRENT_TIMESTAMP", true
		}
		return "", false
	}
	if len(d) >= 2 && d[0] == '\'' && d[len(d)-1] == '\'' {
		s := unquoteSQL(d[1 : len(d)-1])
		v, null, err := FromText([]byte(s), c, Options{})
		if err != nil || null {
			return "", false
		}
		return QuoteString(v), true
	}
	if _, err := strconv.ParseFloat(d, 64); err == nil && (k == KindInt || k == KindDecimal || k == KindFloat || k == KindDouble || k == KindYear) {
		return d, true
	}
	if k == KindBit && strings.HasPrefix(ld, "b'") {
		return "B" + d[1:], true
	}
	return "", false
}

func unquoteSQL(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case '0':
				b.WriteByte(0)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		if c == '\'' && i+1 < len(s) && s[i+1] == '\'' {
			i++
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Ident maps a source identifier: as it is, quoted, or lowercased with
// --lowercase-names. PostgreSQL truncates names past 63 bytes; ValidIdent
// says so before that happens.
func Ident(name string, o Options) string {
	if o.LowercaseNames {
		name = strings.ToLower(name)
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// ValidIdent reports an error for a name PostgreSQL would truncate.
func ValidIdent(name string) error {
	if len(name) > 63 {
		return fmt.Errorf("name %q is %d bytes, PostgreSQL keeps 63: rename it on the source: %w", name, len(name), ErrUnsupported)
	}
	return nil
}

// Table is schema.table in PostgreSQL: one schema per source database.
func Table(schema, table string, o Options) string { return Ident(schema, o) + "." + Ident(table, o) }

// IndexName is the PostgreSQL name of a source index: index names are
// per table in MySQL and per schema in PostgreSQL, so the table's name
// prefixes them; the primary key is <table>_pkey.
func IndexName(table, index string) string {
	if index == "PRIMARY" || index == "" {
		return table + "_pkey"
	}
	return table + "_" + index
}

// QuoteString is a PostgreSQL string literal (standard_conforming_strings on).
func QuoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
