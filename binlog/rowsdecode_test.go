package binlog

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// fastTypesDDL has a column of every type decodeRowsFast decodes.
const fastTypesDDL = `CREATE TABLE d.fast (
  id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED,
  mi MEDIUMINT, mu MEDIUMINT UNSIGNED, ii INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED,
  f FLOAT, dbl DOUBLE, yr YEAR, vc VARCHAR(10), vl VARCHAR(300) CHARACTER SET latin1, u8 CHAR(100) CHARACTER SET utf8mb4,
  ch CHAR(3), bn BINARY(4), vb VARBINARY(300), tb TINYBLOB, bl BLOB, mt MEDIUMTEXT, lb LONGBLOB, g POINT
) ENGINE=InnoDB`

// decodeBoth reads the server's binlog with decodeRowsFast and with
// go-mysql's decoding only.
func decodeBoth(t *testing.T, s *sandbox.Server) (fast, slow []*txn.Txn) {
	t.Helper()
	fast = readFiles(t, s, FileOptions{})
	decodeFast = false
	defer func() { decodeFast = true }()
	return fast, readFiles(t, s, FileOptions{})
}

// TestDecodeRowsFastMatchesGoMySQL: rows of every type decodeRowsFast
// knows, extreme values, NULLs, empty and long strings, several rows per
// event, full and minimal images, decode to the same transactions as
// with go-mysql's decoding and normalize.
func TestDecodeRowsFastMatchesGoMySQL(t *testing.T) {
	s := startSource(t, func(o *sandbox.Options) { o.BinlogRowMetadata = "FULL" })
	db := sandbox.MustOpen(t, s, "")
	db.SetMaxOpenConns(1)
	long := strings.Repeat("x", 290)
	sandbox.MustExec(t, db, "CREATE DATABASE d", fastTypesDDL,
		"INSERT INTO d.fast VALUES (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,"+
			" -9223372036854775808, 18446744073709551615, -1.5, 2.25e300, 2155, 'abc', '"+long+"', 'é😀', 'a', X'00FF', X'DEADBEEF',"+
			" 'tiny', X'000102', 'medium', X'FF', ST_GeomFromText('POINT(1 2)'))",
		"INSERT INTO d.fast (id) VALUES (2), (3), (4)",
		"INSERT INTO d.fast VALUES (5, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0,"+
			" 0, -0, 0, '', '', '', '', '', '', '', '', '', '', NULL)",
		"UPDATE d.fast SET ti = 7, vc = 'def', yr = 1901 WHERE id IN (1, 2, 5)",
		"DELETE FROM d.fast WHERE id = 3",
		"SET SESSION binlog_row_image = MINIMAL",
		"UPDATE d.fast SET vl = CONCAT(vl, 'y'), u8 = NULL WHERE id = 1",
		"INSERT INTO d.fast (id, bu) VALUES (6, 1)",
		"DELETE FROM d.fast WHERE id = 4",
	)
	fast, slow := decodeBoth(t, s)
	rows := 0
	for _, tx := range fast {
		rows += tx.Rows()
	}
	if rows < 10 {
		t.Fatalf("the binlog has %d row changes, want 10 or more", rows)
	}
	if len(fast) != len(slow) {
		t.Fatalf("%d transactions with decodeRowsFast, %d without", len(fast), len(slow))
	}
	for i := range fast {
		if !reflect.DeepEqual(fast[i], slow[i]) {
			t.Errorf("transaction %d differs:\nfast: %s\ngo-mysql: %s", i, describe(fast[i]), describe(slow[i]))
		}
	}
}

// TestNotFiniteFloatRefused: a FLOAT or DOUBLE row value that is NaN or
// infinite is damage (MySQL and MariaDB never store one) and is refused
// as a *FormatError on both decoding paths, naming the table and column,
// while the largest finite values decode. Found by FuzzDecodeRowsFast,
// which compared a NaN.
func TestNotFiniteFloatRefused(t *testing.T) {
	f32 := func(f float32) []byte { return binary.LittleEndian.AppendUint32(nil, math.Float32bits(f)) }
	f64 := func(f float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)) }
	cases := []struct {
		name string
		typ  byte
		meta []byte
		v    []byte
		ok   bool
	}{
		{"float max", txn.TypeFloat, []byte{4}, f32(math.MaxFloat32), true},
		{"float -0", txn.TypeFloat, []byte{4}, f32(float32(math.Copysign(0, -1))), true},
		{"float NaN", txn.TypeFloat, []byte{4}, f32(float32(math.NaN())), false},
		{"float +Inf", txn.TypeFloat, []byte{4}, f32(float32(math.Inf(1))), false},
		{"double max", txn.TypeDouble, []byte{8}, f64(-math.MaxFloat64), true},
		{"double NaN", txn.TypeDouble, []byte{8}, f64(math.NaN()), false},
		{"double -Inf", txn.TypeDouble, []byte{8}, f64(math.Inf(-1)), false},
	}
	defer func() { decodeFast = true }()
	for _, c := range cases {
		for _, fast := range []bool{true, false} {
			decodeFast = fast
			txns, err := decodeBytes("value.000001", valueEvents(seedFDE(t), c.typ, c.meta, false, c.v), Limits{})
			var fe *FormatError
			switch {
			case c.ok && (err != nil || len(txns) != 1):
				t.Errorf("%s, fast %v: %d transactions, %v; want it decoded", c.name, fast, len(txns), err)
			case !c.ok && (!errors.As(err, &fe) || !strings.Contains(err.Error(), "NaN or infinite") || !strings.Contains(err.Error(), "d.t column 1:") || len(txns) != 0):
				t.Errorf("%s, fast %v: %d transactions, %v; want a FormatError naming d.t column 1, for a value NaN or infinite", c.name, fast, len(txns), err)
			}
		}
	}
}

// TestGoMySQLCause: the dump go-mysql appends to a panic it recovered in
// its rows decoding (the event's bytes, %#v of the rows event and the
// table map, with pointer addresses) is cut from the error prepl reports;
// any other error is kept whole.
func TestGoMySQLCause(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`parse rows event panic runtime error: slice bounds out of range [:36] with capacity 20, data "\x12\x00", parsed rows &replication.RowsEvent{Version:1, Table:(*replication.TableMapEvent)(0x39ebd45b3b08)}, table map &replication.TableMapEvent{}`,
			"parse rows event panic runtime error: slice bounds out of range [:36] with capacity 20"},
		{"parse rows event panic oops", "parse rows event panic oops"},
		{`invalid table id 0, data "x"`, `invalid table id 0, data "x"`},
		{"", ""},
	} {
		if got := goMySQLCause(c.in); got != c.want {
			t.Errorf("goMySQLCause(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
