package mysql

import (
	"errors"
	"strings"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestLossy: a source column type the target's column rounds is named;
// one the target holds exactly, wider or the same, is taken.
func TestLossy(t *testing.T) {
	dec := func(p, s int) *txn.ColumnDef { return &txn.ColumnDef{DataType: "decimal", Precision: p, Scale: s} }
	tm := func(typ string, fsp int) *txn.ColumnDef { return &txn.ColumnDef{DataType: typ, FSP: fsp} }
	plain := func(typ string) *txn.ColumnDef { return &txn.ColumnDef{DataType: typ} }
	decMeta := func(p, s int) uint16 { return uint16(p)<<8 | uint16(s) }
	for _, c := range []struct {
		typ  byte
		meta uint16
		col  *txn.ColumnDef
		want string // "" when nothing is lost
	}{
		{txn.TypeNewDecimal, decMeta(10, 2), dec(10, 2), ""},
		{txn.TypeNewDecimal, decMeta(10, 2), dec(12, 4), ""},
		{txn.TypeNewDecimal, decMeta(10, 4), dec(10, 2), "decimal(10,4) in the binlog, decimal(10,2) on the target"},
		{txn.TypeNewDecimal, decMeta(10, 2), dec(9, 2), "decimal(10,2) in the binlog, decimal(9,2)"},
		{txn.TypeNewDecimal, decMeta(10, 2), dec(10, 3), "decimal(10,2) in the binlog, decimal(10,3)"},
		{txn.TypeNewDecimal, decMeta(10, 2), dec(11, 3), ""},
		{txn.TypeNewDecimal, decMeta(10, 0), plain("bigint"), ""},
		{txn.TypeNewDecimal, decMeta(10, 1), plain("bigint"), "decimal(10,1) in the binlog, bigint"},
		{txn.TypeNewDecimal, decMeta(15, 2), plain("double"), ""},
		{txn.TypeNewDecimal, decMeta(20, 2), plain("double"), "decimal(20,2) in the binlog, double"},
		{txn.TypeNewDecimal, decMeta(7, 0), plain("float"), "decimal(7,0) in the binlog, float"},
		{txn.TypeDouble, 8, plain("double"), ""},
		{txn.TypeDouble, 8, plain("float"), "double in the binlog, float on the target"},
		{txn.TypeDouble, 8, dec(30, 10), "double in the binlog, decimal(30,10)"},
		{txn.TypeFloat, 4, plain("double"), ""},
		{txn.TypeFloat, 4, plain("int"), "float in the binlog, int"},
		{txn.TypeDatetime2, 6, tm("datetime", 6), ""},
		{txn.TypeDatetime2, 3, tm("timestamp", 6), ""},
		{txn.TypeDatetime2, 6, tm("datetime", 3), "datetime(6) in the binlog, datetime(3) on the target"},
		{txn.TypeDatetime2, 0, tm("date", 0), "datetime in the binlog, date on the target"},
		{txn.TypeTimestamp2, 2, tm("datetime", 0), "timestamp(2) in the binlog, datetime on the target"},
		{txn.TypeTime2, 6, tm("time", 6), ""},
		{txn.TypeTime2, 1, tm("time", 0), "time(1) in the binlog, time on the target"},
		{txn.TypeDatetime2, 0, plain("varchar"), ""}, // a string holds it (strict mode checks its length)
		{txn.TypeLong, 0, plain("bigint"), ""},
		{txn.TypeLong, 0, plain("double"), ""},
		{txn.TypeLong, 0, plain("float"), "int in the binlog, float on the target"},
		{txn.TypeLongLong, 0, plain("double"), "bigint in the binlog, double on the target"},
		{txn.TypeLongLong, 0, plain("float"), "bigint in the binlog, float"},
		{txn.TypeLongLong, 0, dec(20, 0), ""},
		{txn.TypeInt24, 0, plain("float"), ""}, // 2^24 - 1 at most: a FLOAT holds it
		{txn.TypeShort, 0, plain("float"), ""},
		{txn.TypeVarchar, 80, plain("varchar"), ""},
	} {
		if got := lossy(c.typ, c.meta, c.col); c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("lossy(type %d, meta %d, %+v) = %q, want %q", c.typ, c.meta, *c.col, got, c.want)
		}
	}
	tb := &txn.Table{Schema: "d", Name: "t", Types: []byte{txn.TypeLong, txn.TypeNewDecimal}, Meta: []uint16{0, decMeta(8, 3)}}
	d := &txn.TableDef{Schema: "d", Name: "t", Columns: []txn.ColumnDef{{Name: "id", DataType: "int"}, {Name: "price", DataType: "decimal", Precision: 8, Scale: 2}}}
	err := checkTypes(tb, d)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "table d.t column price is decimal(8,3) in the binlog, decimal(8,2) on the target") {
		t.Errorf("checkTypes: %v", err)
	}
	d.Columns[1].Scale, d.Columns[1].Precision = 3, 8
	if err := checkTypes(tb, d); err != nil {
		t.Errorf("checkTypes with the source's type: %v", err)
	}
}
