package binlog

import (
	"fmt"

	"github.com/prepl/prepl/txn"
)

// TableDefFromMetadata makes a table definition from what a table map
// event says (MySQL 8 and MariaDB 10.5+ with binlog_row_metadata=FULL:
// names, signedness, primary key, charsets), for printing the SQL of a
// binlog without a server that has the table. Without column names it
// fails: the SQL could not name the columns.
func TableDefFromMetadata(tb *txn.Table) (*txn.TableDef, error) {
	if len(tb.Names) != len(tb.Types) {
		return nil, fmt.Errorf("the binlog has no column names for %s (its table map lacks full row metadata)", tb.QualifiedName())
	}
	d := &txn.TableDef{Schema: tb.Schema, Name: tb.Name, Transactional: true}
	for i, typ := range tb.Types {
		c := txn.ColumnDef{Name: tb.Names[i], DataType: dataTypeName(typ), Nullable: i < len(tb.Nullable) && tb.Nullable[i]}
		if tb.Unsigned != nil && i < len(tb.Unsigned) {
			c.Unsigned = tb.Unsigned[i]
		}
		if tb.Collations != nil && i < len(tb.Collations) && tb.Collations[i] != 0 {
			c.Charset = charsetOfCollation(tb.Collations[i])
		}
		d.Columns = append(d.Columns, c)
	}
	if len(tb.PrimaryKey) > 0 {
		d.Indexes = []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: append([]int(nil), tb.PrimaryKey...)}}
	}
	return d, nil
}

// dataTypeName is information_schema's DATA_TYPE for a MYSQL_TYPE_* code.
func dataTypeName(t byte) string {
	switch t {
	case txn.TypeTiny:
		return "tinyint"
	case txn.TypeShort:
		return "smallint"
	case txn.TypeInt24:
		return "mediumint"
	case txn.TypeLong:
		return "int"
	case txn.TypeLongLong:
		return "bigint"
	case txn.TypeFloat:
		return "float"
	case txn.TypeDouble:
		return "double"
	case txn.TypeNewDecimal, txn.TypeDecimal:
		return "decimal"
	case txn.TypeJSON:
		return "json"
	case txn.TypeBit:
		return "bit"
	case txn.TypeVarchar, txn.TypeVarString:
		return "varchar"
	case txn.TypeString:
		return "char"
	case txn.TypeBlob, txn.TypeTinyBlob, txn.TypeMediumBlob, txn.TypeLongBlob:
		return "blob"
	case txn.TypeDate, txn.TypeNewDate:
		return "date"
	case txn.TypeTime, txn.TypeTime2:
		return "time"
	case txn.TypeDatetime, txn.TypeDatetime2:
		return "datetime"
	case txn.TypeTimestamp, txn.TypeTimestamp2:
		return "timestamp"
	case txn.TypeYear:
		return "year"
	case txn.TypeEnum:
		return "enum"
	case txn.TypeSet:
		return "set"
	case txn.TypeGeometry:
		return "geometry"
	}
	return ""
}

// charsetOfCollation names the character set of the collation ids MySQL
// and MariaDB use most; "" (the bytes as binary) for the others.
func charsetOfCollation(id uint64) string {
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
