package binlog

import (
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
