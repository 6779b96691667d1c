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
		c := txn.ColumnDef{Name: tb.Names[i], DataType: txn.DataTypeName(typ), Nullable: i < len(tb.Nullable) && tb.Nullable[i]}
		if tb.Unsigned != nil && i < len(tb.Unsigned) {
			c.Unsigned = tb.Unsigned[i]
		}
		if tb.Collations != nil && i < len(tb.Collations) && tb.Collations[i] != 0 {
			c.Charset = txn.CharsetOfCollation(tb.Collations[i])
		}
		d.Columns = append(d.Columns, c)
	}
	if len(tb.PrimaryKey) > 0 {
		d.Indexes = []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: append([]int(nil), tb.PrimaryKey...)}}
	}
	return d, nil
}
