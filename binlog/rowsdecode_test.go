package binlog

import (
	"bytes"
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
	fast = readFiles(t, s)
	decodeFast = false
	defer func() { decodeFast = true }()
	slow = readFiles(t, s)
	if checkImages(t, fast) == 0 {
		t.Fatal("decodeRowsFast kept no raw row images")
	}
	checkImages(t, slow)
	return fast, slow
}

// checkImages fails unless the raw images the row changes of txs carry
// (txn.RowChange.BeforeImage, AfterImage) are, event by event and in
// order, exactly the bytes after the rows event's column bitmaps, and
// clears them (the go-mysql decoding keeps none, so the decodings then
// compare equal). It returns how many row changes had them.
func checkImages(t *testing.T, txs []*txn.Txn) (n int) {
	t.Helper()
	for _, tx := range txs {
		var ev *txn.RowsEvent
		var images []byte
		some, none := false, false
		end := func() {
			if ev == nil || !some {
				return
			}
			if none {
				t.Fatalf("%s: a rows event with raw images for some of its rows only", tx.GTID)
			}
			body := ev.Event[:len(ev.Event)-4] // the checksum
			if !bytes.HasSuffix(body, images) && !bytes.HasSuffix(ev.Event, images) {
				t.Fatalf("%s: the raw images of a rows event of %d bytes are not its rows: % x", tx.GTID, len(ev.Event), images)
			}
		}
		for _, c := range tx.Changes {
			rc := c.Row
			if rc == nil || rc.Event == nil {
				continue
			}
			if rc.Event != ev {
				end()
				ev, images, some, none = rc.Event, nil, false, false
			}
			for _, img := range [][]byte{rc.BeforeImage, rc.AfterImage} {
				images = append(images, img...)
			}
			has := rc.AfterImage != nil || rc.BeforeImage != nil
			some, none = some || has, none || !has
			if has {
				n++
			}
			rc.BeforeImage, rc.AfterImage = nil, nil
		}
		end()
	}
	return n
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

// textTypesDDL has a column of every type decodeRowsFast decodes as
// text (rowstext.go).
const textTypesDDL = `CREATE TABLE d.text (
  id INT PRIMARY KEY, d1 DECIMAL(4,4), d2 DECIMAL(12,2), d3 DECIMAL(65,30), d4 DECIMAL(10,0), d5 DECIMAL(1,0),
  d6 DECIMAL(19,9) UNSIGNED, d7 DECIMAL(38,38), dt DATETIME, dt1 DATETIME(1), dt3 DATETIME(3), dt6 DATETIME(6),
  ts TIMESTAMP NULL, ts2 TIMESTAMP(2) NULL, ts6 TIMESTAMP(6) NULL, dd DATE
) ENGINE=InnoDB`

// TestDecodeRowsFastTextMatchesGoMySQL: DECIMAL, DATETIME, TIMESTAMP and
// DATE values (extremes, zeros, negatives, zero dates, the second 0 of a
// TIMESTAMP with a fraction, every fractional precision, NULLs, full and
// minimal images) decode the same with
// decodeRowsFast as with go-mysql's decoding and normalize.
func TestDecodeRowsFastTextMatchesGoMySQL(t *testing.T) {
	s := startSource(t, func(o *sandbox.Options) { o.BinlogRowMetadata = "FULL" })
	db := sandbox.MustOpen(t, s, "")
	db.SetMaxOpenConns(1)
	big := strings.Repeat("9", 35) + "." + strings.Repeat("9", 30)
	sandbox.MustExec(t, db, "SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'", "CREATE DATABASE d", textTypesDDL,
		"INSERT INTO d.text VALUES (1, 0.9999, 9999999999.99, "+big+", 9999999999, 9, 9999999999.999999999, 0.12345678901234567890123456789012345678,"+
			" '9999-12-31 23:59:59', '9999-12-31 23:59:59.9', '2024-02-29 12:34:56.789', '1000-01-01 00:00:00.000001',"+
			" '2038-01-19 03:14:07', '1970-01-01 00:00:01.99', '2001-09-09 01:46:40.123456', '9999-12-31')",
		"INSERT INTO d.text VALUES (2, -0.9999, -9999999999.99, -"+big+", -1, -9, 0, -0.00000000000000000000000000000000000001,"+
			" '0000-00-00 00:00:00', '0000-00-00 00:00:00.0', '1000-01-01 00:00:00', '2000-01-01 00:00:00.5',"+
			" '0000-00-00 00:00:00', '0000-00-00 00:00:00.00', '1999-12-31 23:59:59.000001', '0000-00-00')",
		"INSERT INTO d.text VALUES (3, 0, 0, 0, 0, 0, 0.000000001, 0, '2020-00-00 00:00:00', NULL, NULL, NULL, NULL, NULL, NULL, '2020-00-00')",
		"INSERT INTO d.text (id) VALUES (4)",
		"INSERT INTO d.text VALUES (5, -0.0001, 100.5, 1000000000.000000001, 1000000000, 1, 123456789.123456789, 0.5,"+
			" '1970-01-01 00:00:00', '2024-06-01 10:20:30.4', '2024-06-01 10:20:30.004', '2024-06-01 10:20:30.000450',"+
			" '2024-06-01 10:20:30', '2024-06-01 10:20:30.05', '2024-06-01 10:20:30.999999', '1970-01-01')",
		"UPDATE d.text SET d2 = d2 - 1, dt3 = '2025-01-01 00:00:00.001', ts = NOW() WHERE id IN (1, 3, 5)",
		"DELETE FROM d.text WHERE id = 2",
		"INSERT INTO d.text (id, ts2, ts6) VALUES (7, '1970-01-01 00:00:00.01', '1970-01-01 00:00:00.000001')",
		"SET SESSION binlog_row_image = MINIMAL",
		"UPDATE d.text SET d3 = -d3, dd = '2000-02-29' WHERE id = 1",
		"INSERT INTO d.text (id, d1, dt6) VALUES (6, -0.5, '2024-01-01 00:00:00.1')",
		"DELETE FROM d.text WHERE id = 4",
	)
	fast, slow := decodeBoth(t, s)
	rows := 0
	for _, tx := range fast {
		for _, c := range tx.Changes {
			if c.Row == nil || c.Row.Table.Name != "text" {
				continue
			}
			rows++
			for i, typ := range c.Row.Table.Types {
				if !fastType(typ, c.Row.Table.Meta[i]) {
					t.Fatalf("column %d of d.text, type %d, is not decoded by decodeRowsFast", i+1, typ)
				}
			}
		}
	}
	if rows < 10 {
		t.Fatalf("the binlog has %d row changes of d.text, want 10 or more", rows)
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
