package txn

import (
	"bytes"
	"reflect"
	"strings"
)

// TableDef is a table's definition as the target (or the source) declares
// it: what the binlog does not carry, or carries only with full row
// metadata. The applier loads it from the target's information_schema;
// dependency tracking reads keys, collations and foreign keys from it.
//
// Invariant: Columns are in ordinal order, the same order as the columns of
// the binlog's row images; index and foreign key column lists are indexes
// into Columns.
type TableDef struct {
	Schema  string
	Name    string
	Columns []ColumnDef
	Indexes []IndexDef // PRIMARY first when present
	// ForeignKeys this table declares (it is the child).
	ForeignKeys []ForeignKeyDef
	// Referenced is true when some foreign key references this table (it
	// is a parent).
	Referenced bool
	// Cascades are the foreign keys of other tables (or of this one) that
	// reference this table with a cascading action: the changes to this
	// table that can set them off (CanCascade) change rows the binlog does
	// not carry. Foreign keys without one (RESTRICT, NO ACTION) are not
	// here: they only check what the source already checked.
	Cascades      []CascadeRef
	Transactional bool   // engine supports transactions (InnoDB)
	Engine        string // the target's storage engine, lower case ("" when unknown)
	HasTriggers   bool
	// SystemVersioned: MariaDB's WITH SYSTEM VERSIONING. Its hidden
	// row_start and row_end columns are in the binlog's row images, after
	// the visible ones.
	SystemVersioned bool
	// ComputedOnWrite: the server computes a generated column on every
	// INSERT or UPDATE of a row (a stored one, or a virtual one in an
	// index), or the AUTO_INCREMENT counter from a FLOAT or DOUBLE
	// column, which a strict session may refuse where the source only
	// warned.
	ComputedOnWrite bool
	// HashKeys counts MariaDB's long unique keys (UNIQUE ... USING HASH,
	// or on a BLOB): each has a hidden hash column in the binlog's row
	// images, after every other column (row_start and row_end included).
	HashKeys int
}

// NeedsServerApply says why the rows of this table must be applied by the
// server itself from the binlog's events (the BINLOG statement) rather
// than as SQL, or "" when SQL does.
func (d *TableDef) NeedsServerApply() string {
	switch {
	case d.HasTriggers:
		return "has triggers on the target, which must not fire for replicated rows"
	case d.SystemVersioned:
		return "is system-versioned: only the server can write its row_start/row_end history columns"
	}
	return ""
}

// ColumnDef is one column.
type ColumnDef struct {
	Name      string
	DataType  string // information_schema DATA_TYPE, lower case ("int", "varchar")
	Unsigned  bool
	Nullable  bool
	Generated bool   // virtual or stored generated column: never written
	OnUpdate  bool   // ON UPDATE CURRENT_TIMESTAMP: an UPDATE that does not set it sets it
	Charset   string // character set of a text column ("utf8mb4"); "" for others
	Collation string // collation of a text column ("utf8mb4_general_ci")
	// Octets is the most bytes of a string column (information_schema
	// CHARACTER_OCTET_LENGTH); a BINARY(n) holds exactly n.
	Octets int
	// Precision and Scale of a DECIMAL(P,S); FSP, the fractional second
	// digits of a DATETIME, TIMESTAMP or TIME (0 when unknown or none).
	Precision, Scale, FSP int
	// FloatDigits are the digits before the point a FLOAT(M,D) or
	// DOUBLE(M,D) holds, M-D (0: declared without (M,D), no bound).
	FloatDigits int
}

// FixedBytes is the length of a column the server stores as exactly n
// bytes and the binlog writes without their trailing zero bytes, which
// the replica pads back: BINARY(n), and MariaDB's UUID and INET6 (16
// bytes) and INET4 (4). 0 for other columns. A UUID or INET6 value sent
// short is not padded by the server: it is refused, or NULL without
// strict mode.
func (c *ColumnDef) FixedBytes() int {
	switch c.DataType {
	case "binary":
		return c.Octets
	case "uuid", "inet6":
		return 16
	case "inet4":
		return 4
	}
	return 0
}

// IndexDef is a primary or unique key (non-unique indexes are not kept).
type IndexDef struct {
	Name    string // "PRIMARY" for the primary key
	Primary bool
	Columns []int
	// Prefix, when set, has one entry per column: N > 0 when only the
	// first N characters (bytes, for binary strings) of the column are
	// indexed (UNIQUE KEY (c(N))), 0 for the whole column.
	Prefix []int
	// WithoutOverlaps: MariaDB's KEY (cols, p WITHOUT OVERLAPS), whose
	// last two Columns are the period's end and start. Its rows are
	// unique by all Columns, so they locate a row, but two rows conflict
	// when they share the other columns and their periods overlap,
	// whatever the bounds: no equality key.
	WithoutOverlaps bool
}

// ForeignKeyDef is one foreign key of a child table.
type ForeignKeyDef struct {
	Name       string
	Columns    []int // child columns
	RefSchema  string
	RefTable   string
	RefColumns []string // parent column names, same order as Columns
	// OnDelete and OnUpdate are the referential actions as
	// information_schema spells them ("RESTRICT", "NO ACTION", "CASCADE",
	// "SET NULL", "SET DEFAULT"); "" when unknown.
	OnDelete, OnUpdate string
}

// CascadingAction reports whether a referential action changes child rows
// (CASCADE, SET NULL, SET DEFAULT). An unknown action ("") counts as one:
// a false cascade costs order, a missed one the target's rows.
func CascadingAction(a string) bool {
	switch strings.ToUpper(a) {
	case "RESTRICT", "NO ACTION":
		return false
	}
	return true
}

// CascadeRef is a foreign key that references a table with a cascading
// action, seen from the parent.
type CascadeRef struct {
	Child string // schema.table of the child, for messages
	Name  string // the foreign key's name
	// Columns are the parent's referenced columns (indexes into the
	// parent's Columns).
	Columns  []int
	OnDelete bool // ON DELETE acts (CASCADE, SET NULL, SET DEFAULT)
	OnUpdate bool // ON UPDATE acts
}

// CanCascade reports whether rc, a change to d, can set off one of d's
// cascading foreign keys (Cascades): a delete where one acts ON DELETE,
// an update that changes (byte for byte, or cannot be seen not to) the
// referenced columns of one that acts ON UPDATE. An insert never does.
func (d *TableDef) CanCascade(rc *RowChange) bool {
	for i := range d.Cascades {
		c := &d.Cascades[i]
		switch rc.Kind {
		case Delete:
			if c.OnDelete {
				return true
			}
		case Update:
			if c.OnUpdate && changesColumns(rc, c.Columns) {
				return true
			}
		}
	}
	return false
}

// changesColumns: an update's images differ in one of cols, or do not
// both carry it.
func changesColumns(rc *RowChange, cols []int) bool {
	for _, c := range cols {
		if c < 0 || c >= len(rc.Before) || c >= len(rc.After) ||
			(rc.BeforeCols != nil && (c >= len(rc.BeforeCols) || !rc.BeforeCols[c])) ||
			(rc.AfterCols != nil && (c >= len(rc.AfterCols) || !rc.AfterCols[c])) {
			return true
		}
		if !SameValue(rc.Before[c], rc.After[c]) {
			return true
		}
	}
	return false
}

// QualifiedName is schema.table.
func (d *TableDef) QualifiedName() string { return d.Schema + "." + d.Name }

// PrimaryKey returns the primary key, or nil.
func (d *TableDef) PrimaryKey() *IndexDef {
	for i := range d.Indexes {
		if d.Indexes[i].Primary {
			return &d.Indexes[i]
		}
	}
	return nil
}

// RowKey returns the index that identifies a row: the primary key, else
// the first unique key whose columns are all NOT NULL, else nil.
func (d *TableDef) RowKey() *IndexDef {
	if pk := d.PrimaryKey(); pk != nil {
		return pk
	}
	for i := range d.Indexes {
		ok := true
		for _, c := range d.Indexes[i].Columns {
			if d.Columns[c].Nullable {
				ok = false
				break
			}
		}
		if ok {
			return &d.Indexes[i]
		}
	}
	return nil
}

// Catalog looks up table definitions by schema and name.
type Catalog interface {
	// Table returns the definition, or ok=false when the table is unknown.
	Table(schema, name string) (def *TableDef, ok bool)
}

// StringLength is a MYSQL_TYPE_STRING column's declared length in bytes
// and real type (ENUM and SET hide in its metadata), as go-mysql reads it.
func StringLength(meta uint16) (int, byte) {
	if meta < 256 {
		return int(meta), TypeString
	}
	b0, b1 := byte(meta>>8), byte(meta)
	if b0&0x30 != 0x30 {
		return int(uint16(b1) | uint16((b0&0x30)^0x30)<<4), b0 | 0x30
	}
	return int(b1), b0
}

// DataTypeName is information_schema's DATA_TYPE for a MYSQL_TYPE_* code
// as a binlog table map gives it, or "" for a type it does not name.
func DataTypeName(t byte) string {
	switch t {
	case TypeTiny:
		return "tinyint"
	case TypeShort:
		return "smallint"
	case TypeInt24:
		return "mediumint"
	case TypeLong:
		return "int"
	case TypeLongLong:
		return "bigint"
	case TypeFloat:
		return "float"
	case TypeDouble:
		return "double"
	case TypeNewDecimal, TypeDecimal:
		return "decimal"
	case TypeJSON:
		return "json"
	case TypeBit:
		return "bit"
	case TypeVarchar, TypeVarString:
		return "varchar"
	case TypeString:
		return "char"
	case TypeBlob, TypeTinyBlob, TypeMediumBlob, TypeLongBlob:
		return "blob"
	case TypeDate, TypeNewDate:
		return "date"
	case TypeTime, TypeTime2:
		return "time"
	case TypeDatetime, TypeDatetime2:
		return "datetime"
	case TypeTimestamp, TypeTimestamp2:
		return "timestamp"
	case TypeYear:
		return "year"
	case TypeEnum:
		return "enum"
	case TypeSet:
		return "set"
	case TypeGeometry:
		return "geometry"
	}
	return ""
}

// CharsetOfCollation names the character set of the collation ids MySQL
// and MariaDB use most; "" (the bytes as binary) for the others.
func CharsetOfCollation(id uint64) string {
	switch {
	case id == 63:
		return "binary"
	case id == 8 || id == 5 || id == 15 || id == 31 || id == 47 || id == 48 || id == 49 || id == 94:
		return "latin1"
	case id == 33 || id == 83 || id >= 192 && id <= 215:
		return "utf8mb3"
	case id == 45 || id == 46 || id >= 224 && id <= 247 || id >= 255 && id <= 323:
		return "utf8mb4"
	case id == 11 || id == 65:
		return "ascii"
	}
	return ""
}

// SameValue reports whether two row image values are the same bytes and
// type (not whether the server's collation takes them as equal), without
// reflection for the values the binlog reader makes most.
func SameValue(a, b Value) bool {
	switch x := a.(type) {
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y) && (x == nil) == (y == nil)
	}
	return reflect.DeepEqual(a, b)
}
