package mysql

import (
	"fmt"

	"github.com/prepl/prepl/txn"
)

// Rows are applied as SQL in strict mode (RowSession), so a value the
// target's column cannot hold is an error. Strict mode still rounds
// without an error where only precision is lost: DECIMAL digits past the
// column's scale, fractional seconds past its precision, a DOUBLE in a
// FLOAT, a BIGINT past 2^53 in a DOUBLE, a time of day in a DATE. lossy
// finds those from the table map, before any row is applied. MariaDB's
// replica refuses every column whose type differs from the source's
// (error 1677, slave_type_conversions empty); prepl takes the ones that
// lose nothing.

// lossy describes how a column of binlog type typ (metadata meta) loses
// part of its values in the target column col, "" when it does not.
func lossy(typ byte, meta uint16, col *txn.ColumnDef) string {
	dst := col.DataType
	into := func(src string) string { return src + " in the binlog, " + targetType(col) + " on the target" }
	switch typ {
	case txn.TypeNewDecimal:
		prec, scale := int(meta>>8), int(meta&0xff)
		src := fmt.Sprintf("decimal(%d,%d)", prec, scale)
		switch dst {
		case "decimal":
			if col.Scale < scale || col.Precision-col.Scale < prec-scale {
				return into(src)
			}
		case "float", "double":
			if digits := map[string]int{"float": 6, "double": 15}[dst]; prec > digits {
				return into(src)
			}
		case "tinyint", "smallint", "mediumint", "int", "bigint":
			if scale > 0 {
				return into(src)
			}
		}
	case txn.TypeDouble:
		switch dst {
		case "float", "decimal", "tinyint", "smallint", "mediumint", "int", "bigint":
			return into("double")
		}
	case txn.TypeLongLong, txn.TypeLong:
		// A DOUBLE holds every integer up to 2^53 exactly, a FLOAT up to
		// 2^24: a BIGINT (or an INT into a FLOAT) is rounded past that.
		src := map[byte]string{txn.TypeLongLong: "bigint", txn.TypeLong: "int"}[typ]
		if dst == "float" || dst == "double" && typ == txn.TypeLongLong {
			return into(src)
		}
	case txn.TypeFloat:
		switch dst {
		case "decimal", "tinyint", "smallint", "mediumint", "int", "bigint":
			return into("float")
		}
	case txn.TypeDatetime2, txn.TypeTimestamp2, txn.TypeTime2:
		src := map[byte]string{txn.TypeDatetime2: "datetime", txn.TypeTimestamp2: "timestamp", txn.TypeTime2: "time"}[typ]
		if meta > 0 {
			src = fmt.Sprintf("%s(%d)", src, meta)
		}
		switch {
		case typ != txn.TypeTime2 && (dst == "date" || dst == "time" || dst == "year"):
			return into(src)
		case (dst == "datetime" || dst == "timestamp" || dst == "time") && col.FSP < int(meta):
			return into(src)
		}
	}
	return ""
}

// targetType is col's type as information_schema describes it.
func targetType(col *txn.ColumnDef) string {
	switch col.DataType {
	case "decimal":
		return fmt.Sprintf("decimal(%d,%d)", col.Precision, col.Scale)
	case "datetime", "timestamp", "time":
		if col.FSP > 0 {
			return fmt.Sprintf("%s(%d)", col.DataType, col.FSP)
		}
	}
	return col.DataType
}

// checkTypes refuses a table whose target columns would round values of
// the source's (lossy), naming the first such column.
func checkTypes(tb *txn.Table, d *txn.TableDef) error {
	for i, typ := range tb.Types {
		if i >= len(d.Columns) || i >= len(tb.Meta) {
			break
		}
		if why := lossy(typ, tb.Meta[i], &d.Columns[i]); why != "" {
			return fmt.Errorf("table %s column %s is %s: its values would be rounded; give the target column the source's type "+
				"(MariaDB's replica refuses any type that differs, error 1677), or leave the table out (--exclude): %w",
				d.QualifiedName(), d.Columns[i].Name, why, ErrUnsupported)
		}
	}
	return nil
}
