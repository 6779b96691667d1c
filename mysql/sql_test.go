package mysql

import (
	"testing"

	"github.com/prepl/prepl/txn"
)

func TestAppendEscaped(t *testing.T) {
	for in, want := range map[string]string{
		"":            `''`,
		"abc":         `'abc'`,
		"'":           `''''`,
		`\`:           `'\\'`,
		"\x00":        `'\0'`,
		"'a\\b\x00c'": `'''a\\b\0c'''`,
		"x''y":        `'x''''y'`,
	} {
		if got := string(appendEscaped([]byte("p:"), []byte(in))); got != "p:"+want {
			t.Errorf("appendEscaped(%q) = %s, want p:%s", in, got, want)
		}
	}
}

func TestAppendLiteral(t *testing.T) {
	text := &txn.ColumnDef{Name: "c", DataType: "varchar", Charset: "utf8mb4"}
	latin := &txn.ColumnDef{Name: "c", DataType: "varchar", Charset: "latin1"}
	bin := &txn.ColumnDef{Name: "c", DataType: "varbinary"}
	json := &txn.ColumnDef{Name: "c", DataType: "json"}
	fixed := &txn.ColumnDef{Name: "c", DataType: "binary", Octets: 4}
	u := &txn.ColumnDef{Name: "c", DataType: "int", Unsigned: true}
	s := &txn.ColumnDef{Name: "c", DataType: "int"}
	cases := []struct {
		v    txn.Value
		typ  byte
		col  *txn.ColumnDef
		want string
	}{
		{nil, txn.TypeLong, s, "NULL"},
		{int64(-1), txn.TypeTiny, u, "255"},
		{int64(-1), txn.TypeInt24, u, "16777215"},
		{int64(-1), txn.TypeLongLong, u, "18446744073709551615"},
		{int64(-128), txn.TypeTiny, s, "-128"},
		{float32(0.1), txn.TypeFloat, s, "0.10000000149011612"},
		{float64(-0.5), txn.TypeDouble, s, "-0.5"},
		{txn.Decimal("-12.3400"), txn.TypeNewDecimal, s, "-12.3400"},
		{txn.Temporal("-838:59:59.000000"), txn.TypeTime2, s, "'-838:59:59.000000'"},
		{txn.Bit(18446744073709551615), txn.TypeBit, s, "18446744073709551615"},
		{txn.Enum(2), txn.TypeEnum, s, "2"},
		{txn.Set(5), txn.TypeSet, s, "5"},
		{[]byte("é'"), txn.TypeVarchar, text, "_utf8mb4 X'c3a927'"},
		{[]byte{0xe9}, txn.TypeVarchar, latin, "_latin1 X'e9'"},
		{[]byte{0, 0xff}, txn.TypeVarchar, bin, "X'00ff'"},
		{[]byte{}, txn.TypeVarchar, bin, "''"},
		// The binlog leaves out a BINARY(n)'s trailing zero bytes: padded back.
		{[]byte{}, txn.TypeString, fixed, "X'00000000'"},
		{[]byte("ab"), txn.TypeString, fixed, "X'61620000'"},
		{[]byte("abcd"), txn.TypeString, fixed, "'abcd'"},
		// So does a MariaDB UUID's, INET6's or INET4's: the server would
		// not pad them, and take the value as invalid.
		{[]byte{0x12, 0x3e}, txn.TypeString, &txn.ColumnDef{Name: "c", DataType: "uuid"}, "X'123e0000000000000000000000000000'"},
		{[]byte{0x20, 0x01, 0x0d, 0xb8}, txn.TypeString, &txn.ColumnDef{Name: "c", DataType: "inet6"}, "X'20010db8000000000000000000000000'"},
		{[]byte{10}, txn.TypeString, &txn.ColumnDef{Name: "c", DataType: "inet4"}, "X'0a000000'"},
		{[]byte(`{"a":1}`), txn.TypeJSON, json, `_utf8mb4 '{"a":1}'`},
		{[]byte(`it's a \ back`), txn.TypeVarchar, text, `_utf8mb4 'it''s a \\ back'`},
		{[]byte("tab\there"), txn.TypeVarchar, text, "_utf8mb4 X'7461620968657265'"},
		// A byte past printable ASCII after an escape: hex, nothing of the quoted start left.
		{[]byte("a'\\b\x01"), txn.TypeVarchar, text, "_utf8mb4 X'61275c6201'"},
		{[]byte("del\x7f"), txn.TypeVarchar, latin, "_latin1 X'64656c7f'"},
		{[]byte("ab"), txn.TypeVarchar, &txn.ColumnDef{Name: "w", Charset: "ucs2"}, "_ucs2 X'6162'"},
		{[]byte("plain"), txn.TypeVarchar, bin, "'plain'"},
	}
	for _, c := range cases {
		got, err := AppendLiteral(nil, c.v, c.typ, c.col)
		if err != nil || string(got) != c.want {
			t.Errorf("AppendLiteral(%#v) = %s, %v; want %s", c.v, got, err, c.want)
		}
	}
	for _, bad := range []txn.Value{txn.Decimal("1; DROP TABLE x"), txn.Temporal("1' OR '1"), struct{}{}} {
		if _, err := AppendLiteral(nil, bad, 0, s); err == nil {
			t.Errorf("AppendLiteral(%#v) accepted", bad)
		}
	}
}

func TestAppendRowChange(t *testing.T) {
	cols := []txn.ColumnDef{{Name: "id", DataType: "int"}, {Name: "v", DataType: "int", Nullable: true},
		{Name: "g", DataType: "int", Generated: true, Nullable: true}}
	withPK := &txn.TableDef{Schema: "d", Name: "t", Columns: cols, Indexes: []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: []int{0}}}}
	noKey := &txn.TableDef{Schema: "d", Name: "t", Columns: cols}
	generated := &txn.TableDef{Schema: "d", Name: "g", Columns: []txn.ColumnDef{{Name: "a", DataType: "blob", Generated: true, Nullable: true},
		{Name: "b", DataType: "int", Generated: true, Nullable: true}, {Name: "c", DataType: "int", Generated: true, Nullable: true}}}
	tb := &txn.Table{Schema: "d", Name: "t", Types: []byte{txn.TypeLong, txn.TypeLong, txn.TypeLong}}
	all := []bool{true, true, true}
	before, after := []txn.Value{int64(1), nil, int64(9)}, []txn.Value{int64(1), int64(5), int64(9)}
	cases := []struct {
		name string
		rc   txn.RowChange
		def  *txn.TableDef
		want string
	}{
		{"insert skips generated", txn.RowChange{Kind: txn.Insert, Table: tb, After: after, AfterCols: all}, withPK,
			"INSERT INTO `d`.`t` (`id`,`v`) VALUES (1,5)"},
		{"update by primary key", txn.RowChange{Kind: txn.Update, Table: tb, Before: before, BeforeCols: all, After: after, AfterCols: all}, withPK,
			"UPDATE `d`.`t` SET `id`=1,`v`=5 WHERE `id`=1"},
		{"update without key", txn.RowChange{Kind: txn.Update, Table: tb, Before: before, BeforeCols: all, After: after, AfterCols: all}, noKey,
			"UPDATE `d`.`t` SET `id`=1,`v`=5 WHERE `id`<=>1 AND `v`<=>NULL LIMIT 1"},
		{"delete by key", txn.RowChange{Kind: txn.Delete, Table: tb, Before: before, BeforeCols: all}, withPK,
			"DELETE FROM `d`.`t` WHERE `id`=1"},
		{"minimal image update", txn.RowChange{Kind: txn.Update, Table: tb, Before: before, BeforeCols: []bool{true, false, false},
			After: after, AfterCols: []bool{false, true, false}}, withPK, "UPDATE `d`.`t` SET `v`=5 WHERE `id`=1"},
		// Every row of a table of generated columns only is the same row:
		// the replica deletes the first it finds.
		{"delete of a table of generated columns", txn.RowChange{Kind: txn.Delete, Table: tb, Before: before, BeforeCols: all}, generated,
			"DELETE FROM `d`.`g` LIMIT 1"},
	}
	for _, c := range cases {
		got, err := AppendRowChange(nil, &c.rc, c.def)
		if err != nil || string(got) != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.name, got, err, c.want)
		}
	}
	// A table with a column to compare and none in the before image (a
	// damaged or foreign binlog) is still refused.
	rc := txn.RowChange{Kind: txn.Delete, Table: tb, Before: before, BeforeCols: []bool{false, false, true}}
	if got, err := AppendRowChange(nil, &rc, noKey); err == nil {
		t.Errorf("delete of no column rendered as %s", got)
	}
}

func TestParseURL(t *testing.T) {
	e, err := ParseURL("mysql://repl:s%40cret@10.0.0.1:3307")
	if err != nil || e.User != "repl" || e.Password != "s@cret" || e.Host != "10.0.0.1" || e.Port != 3307 {
		t.Fatalf("ParseURL = %+v, %v", e, err)
	}
	e, err = ParseURL("mysql://root@localhost?socket=/run/mysqld/mysqld.sock")
	if err != nil || e.Socket != "/run/mysqld/mysqld.sock" || e.Port != 3306 {
		t.Fatalf("ParseURL socket = %+v, %v", e, err)
	}
	for _, bad := range []string{"postgres://x@y", "mysql://x@y:notaport", "mysql://x@y?foo=1"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		}
	}
}
