package postgres

import (
	"errors"
	"testing"

	"github.com/prepl/prepl/txn"
)

func TestTypeMapping(t *testing.T) {
	for _, c := range []struct {
		col       Column
		typ, chk  string
		unsupport bool
	}{
		{Column{Name: "a", Type: "tinyint"}, "smallint", "", false},
		{Column{Name: "a", Type: "tinyint", Unsigned: true}, "smallint", "", false},
		{Column{Name: "a", Type: "smallint", Unsigned: true}, "integer", "", false},
		{Column{Name: "a", Type: "mediumint", Unsigned: true}, "integer", "", false},
		{Column{Name: "a", Type: "int"}, "integer", "", false},
		{Column{Name: "a", Type: "int", Unsigned: true}, "bigint", "", false},
		{Column{Name: "a", Type: "bigint"}, "bigint", "", false},
		{Column{Name: "a", Type: "bigint", Unsigned: true}, "numeric(20,0)", `"a" BETWEEN 0 AND 18446744073709551615`, false},
		{Column{Name: "a", Type: "decimal", Precision: 65, Scale: 30}, "numeric(65,30)", "", false},
		{Column{Name: "a", Type: "float"}, "real", "", false},
		{Column{Name: "a", Type: "double"}, "double precision", "", false},
		{Column{Name: "a", Type: "bit", Length: 64}, "bit(64)", "", false},
		{Column{Name: "a", Type: "year"}, "smallint", "", false},
		{Column{Name: "a", Type: "datetime", Scale: 6}, "timestamp(6) without time zone", "", false},
		{Column{Name: "a", Type: "timestamp", Scale: 3}, "timestamp(3) with time zone", "", false},
		{Column{Name: "a", Type: "time", Scale: 6}, "interval(6)", "", false},
		{Column{Name: "a", Type: "char", Length: 10, Charset: "latin1"}, "varchar(10)", "", false},
		{Column{Name: "a", Type: "char", Length: 4, Charset: "binary"}, "bytea", "", false},
		{Column{Name: "a", Type: "longtext", Charset: "utf8mb4"}, "text", "", false},
		{Column{Name: "a", Type: "varbinary", Length: 4}, "bytea", "", false},
		{Column{Name: "a", Type: "json"}, "jsonb", "", false},
		{Column{Name: "a", Type: "enum", Elems: []string{"x"}}, "text", `"a" IN ('', 'x')`, false},
		{Column{Name: "pt", Type: "point"}, "", "", true},
		{Column{Name: "a", Type: "inet6"}, "", "", true},
	} {
		typ, chk, err := Type(&c.col, Options{})
		if c.unsupport {
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%+v: err %v, want ErrUnsupported", c.col, err)
			}
			continue
		}
		if err != nil || typ != c.typ || chk != c.chk {
			t.Errorf("%+v: got %q %q %v, want %q %q", c.col, typ, chk, err, c.typ, c.chk)
		}
	}
}

func TestFromValue(t *testing.T) {
	elems := []string{"a", "b", "c"}
	for _, c := range []struct {
		v       txn.Value
		colType byte
		col     Column
		o       Options
		want    string
		null    bool
		err     bool
	}{
		{nil, txn.TypeLong, Column{Type: "int"}, Options{}, "", true, false},
		{int64(-1), txn.TypeTiny, Column{Type: "tinyint", Unsigned: true}, Options{}, "255", false, false},
		{int64(-1), txn.TypeLongLong, Column{Type: "bigint", Unsigned: true}, Options{}, "18446744073709551615", false, false},
		{int64(-9223372036854775808), txn.TypeLongLong, Column{Type: "bigint"}, Options{}, "-9223372036854775808", false, false},
		{float32(-3.4028235e38), txn.TypeFloat, Column{Type: "float"}, Options{}, "-3.4028235e+38", false, false},
		{float32(0.1), txn.TypeFloat, Column{Type: "float"}, Options{}, "0.1", false, false},
		{float64(-0.0), txn.TypeDouble, Column{Type: "double"}, Options{}, "0", false, false},
		{txn.Decimal("-99999999999999999999999999999999999.999999999999999999999999999999"), txn.TypeNewDecimal, Column{Type: "decimal"}, Options{},
			"-99999999999999999999999999999999999.999999999999999999999999999999", false, false},
		{txn.Bit(5), txn.TypeBit, Column{Type: "bit", Length: 4}, Options{}, "0101", false, false},
		{txn.Bit(1<<64 - 1), txn.TypeBit, Column{Type: "bit", Length: 64}, Options{}, "1111111111111111111111111111111111111111111111111111111111111111", false, false},
		{txn.Enum(3), txn.TypeString, Column{Type: "enum", Elems: elems}, Options{}, "c", false, false},
		{txn.Enum(0), txn.TypeString, Column{Type: "enum", Elems: elems}, Options{}, "", false, false},
		{txn.Enum(4), txn.TypeString, Column{Type: "enum", Elems: elems}, Options{}, "", false, true},
		{txn.Set(5), txn.TypeString, Column{Type: "set", Elems: elems}, Options{}, "a,c", false, false},
		{txn.Set(0), txn.TypeString, Column{Type: "set", Elems: elems}, Options{}, "", false, false},
		{int64(2155), txn.TypeYear, Column{Type: "year"}, Options{}, "2155", false, false},
		{txn.Temporal("9999-12-31 23:59:59.999999"), txn.TypeDatetime2, Column{Type: "datetime"}, Options{}, "9999-12-31 23:59:59.999999", false, false},
		{txn.Temporal("2038-01-19 03:14:07.999999"), txn.TypeTimestamp2, Column{Type: "timestamp"}, Options{}, "2038-01-19 03:14:07.999999+00", false, false},
		{txn.Temporal("0000-00-00"), txn.TypeNewDate, Column{Type: "date"}, Options{}, "", false, true},
		{txn.Temporal("0000-00-00"), txn.TypeNewDate, Column{Type: "date"}, Options{ZeroDateNull: true}, "", true, false},
		{txn.Temporal("2024-00-10 00:00:00"), txn.TypeDatetime2, Column{Type: "datetime"}, Options{ZeroDateNull: true}, "", true, false},
		{txn.Temporal("-838:59:59.000000"), txn.TypeTime2, Column{Type: "time"}, Options{}, "-838:59:59.000000", false, false},
		{[]byte("h\xc3\xa9llo \xf0\x9f\x98\x80"), txn.TypeVarchar, Column{Type: "varchar", Charset: "utf8mb4"}, Options{}, "héllo 😀", false, false},
		{[]byte("caf\xe9 \x80 \x81"), txn.TypeVarchar, Column{Type: "varchar", Charset: "latin1"}, Options{}, "café € \u0081", false, false},
		{[]byte("bad \xff"), txn.TypeVarchar, Column{Type: "varchar", Charset: "utf8mb4"}, Options{}, "", false, true},
		{[]byte("nul\x00"), txn.TypeVarchar, Column{Type: "varchar", Charset: "utf8mb4"}, Options{}, "", false, true},
		{[]byte{0, 0xff}, txn.TypeBlob, Column{Type: "blob"}, Options{}, `\x00ff`, false, false},
		{[]byte{1}, txn.TypeString, Column{Type: "binary", Length: 4}, Options{}, `\x01000000`, false, false},
		{[]byte{0, 'A'}, txn.TypeString, Column{Type: "char", Length: 3, Charset: "binary"}, Options{}, `\x004100`, false, false},
		{[]byte{1}, txn.TypeVarchar, Column{Type: "varbinary", Length: 4}, Options{}, `\x01`, false, false},
		{[]byte(`{"a": 1}`), txn.TypeJSON, Column{Type: "json"}, Options{}, `{"a": 1}`, false, false},
		{[]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, txn.TypeGeometry, Column{Type: "point"}, Options{}, "", false, true},
	} {
		c.col.Name = "col"
		got, null, err := FromValue(c.v, c.colType, &c.col, c.o)
		if c.err {
			if err == nil {
				t.Errorf("%T %v as %s: no error, want one", c.v, c.v, c.col.Type)
			}
			continue
		}
		if err != nil || got != c.want || null != c.null {
			t.Errorf("%T %v as %s: got %q null=%v err=%v, want %q null=%v", c.v, c.v, c.col.Type, got, null, err, c.want, c.null)
		}
	}
}

// FromText of what snapshot.SourceExpr reads gives the same text as FromValue of
// the binlog's value.
func TestFromTextMatchesFromValue(t *testing.T) {
	for _, c := range []struct {
		raw string
		v   txn.Value
		ct  byte
		col Column
	}{
		{"3.4028234663852886e38", float32(3.4028235e38), txn.TypeFloat, Column{Type: "float"}},
		{"0.10000000149011612", float32(0.1), txn.TypeFloat, Column{Type: "float"}},
		{"18446744073709551615", txn.Bit(1<<64 - 1), txn.TypeBit, Column{Type: "bit", Length: 64}},
		{"x,z", txn.Set(5), txn.TypeString, Column{Type: "set", Elems: []string{"x", "y", "z"}}},
		{"2155", int64(2155), txn.TypeYear, Column{Type: "year"}},
		{"caf\xe9", []byte("caf\xe9"), txn.TypeVarchar, Column{Type: "varchar", Charset: "latin1"}},
	} {
		c.col.Name = "col"
		a, _, err1 := FromText([]byte(c.raw), &c.col, Options{})
		b, _, err2 := FromValue(c.v, c.ct, &c.col, Options{})
		if err1 != nil || err2 != nil || a != b {
			t.Errorf("%s %q: FromText %q (%v), FromValue %q (%v)", c.col.Type, c.raw, a, err1, b, err2)
		}
	}
}

// AppendCopyText writes the COPY field AppendCopy writes of FromText's
// text, or FromText's error, for each kind: its shortcuts included.
func TestAppendCopyTextMatchesFromText(t *testing.T) {
	for _, c := range []struct {
		raw string
		col Column
		o   Options
	}{
		{"-42", Column{Type: "int"}, Options{}},
		{"18446744073709551615", Column{Type: "bigint", Unsigned: true}, Options{}},
		{"-12.500", Column{Type: "decimal"}, Options{}},
		{"12a", Column{Type: "int"}, Options{}},
		{"", Column{Type: "int"}, Options{}},
		{"2155", Column{Type: "year"}, Options{}},
		{"h\xc3\xa9 \\ \t\n\r 😀", Column{Type: "varchar", Charset: "utf8mb4"}, Options{}},
		{"", Column{Type: "char", Charset: "utf8mb4"}, Options{}},
		{"bad \xff", Column{Type: "varchar", Charset: "utf8mb4"}, Options{}},
		{"nul\x00", Column{Type: "text", Charset: "utf8mb3"}, Options{}},
		{"plain\tascii", Column{Type: "varchar", Charset: "ascii"}, Options{}},
		{"caf\xe9\\\x81", Column{Type: "varchar", Charset: "latin1"}, Options{}},
		{"\x00\xff\\\n", Column{Type: "blob"}, Options{}},
		{"", Column{Type: "varbinary", Length: 4}, Options{}},
		{"\x01", Column{Type: "binary", Length: 4}, Options{}},
		{"0.10000000149011612", Column{Type: "float"}, Options{}},
		{"0000-00-00", Column{Type: "date"}, Options{ZeroDateNull: true}},
		{"0000-00-00", Column{Type: "date"}, Options{}},
		{"2038-01-19 03:14:07.999999", Column{Type: "timestamp"}, Options{}},
		{"a\tb", Column{Type: "enum", Elems: []string{"a\tb"}}, Options{}},
		{`{"a": "\n"}`, Column{Type: "json"}, Options{}},
		{"5", Column{Type: "bit", Length: 4}, Options{}},
		{"x", Column{Type: "inet6"}, Options{}},
	} {
		c.col.Name = "col"
		text, null, err1 := FromText([]byte(c.raw), &c.col, c.o)
		want := AppendCopy([]byte("pre|"), text, null)
		got, err2 := AppendCopyText([]byte("pre|"), []byte(c.raw), &c.col, c.o)
		if (err1 == nil) != (err2 == nil) || err1 == nil && string(got) != string(want) {
			t.Errorf("%s %q: AppendCopyText %q (%v), FromText then AppendCopy %q (%v)", c.col.Type, c.raw, got, err2, want, err1)
		}
	}
}

func BenchmarkAppendCopyText(b *testing.B) {
	cols := []Column{{Name: "id", Type: "int"}, {Name: "k", Type: "int"},
		{Name: "c", Type: "char", Length: 120, Charset: "utf8mb4"}, {Name: "pad", Type: "char", Length: 60, Charset: "utf8mb4"}}
	row := [][]byte{[]byte("123456"), []byte("49857"),
		[]byte("83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330"),
		[]byte("67847967377-48000963322-62604785301-91415491898-96926520291")}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		for i, v := range row {
			buf, _ = AppendCopyText(buf, v, &cols[i], Options{})
		}
	}
}
