package stream

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

const allTypesDDL = `CREATE TABLE d.all_types (
  id INT PRIMARY KEY,
  bu BIGINT UNSIGNED, bs BIGINT, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED,
  mi MEDIUMINT, mu MEDIUMINT UNSIGNED, ii INT, iu INT UNSIGNED,
  dec1 DECIMAL(65,30), dec2 DECIMAL(10,2), f FLOAT, dbl DOUBLE,
  b1 BIT(1), b64 BIT(64), e ENUM('a','b','c'), st SET('x','y','z'),
  dt DATE, dtm DATETIME(6), ts TIMESTAMP(6) NULL DEFAULT NULL, tm TIME(6), tm0 TIME, yr YEAR,
  l1 VARCHAR(20) CHARACTER SET latin1, u8 VARCHAR(20) CHARACTER SET utf8mb4, ch CHAR(5),
  vb VARBINARY(300), bl BLOB, js JSON, tx TEXT
) ENGINE=InnoDB`

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// allTypesRows are the expected after images of the three inserted rows.
func allTypesRows() [][]txn.Value {
	ab := allBytes()
	return [][]txn.Value{
		{int64(1), int64(-1), int64(math.MaxInt64), int64(127), int64(-1), int64(32767), int64(-1),
			int64(8388607), int64(-1), int64(math.MaxInt32), int64(-1),
			txn.Decimal("12345678901234567890123456789012345.123456789012345678901234567890"), txn.Decimal("99999999.99"),
			float32(1.5), float64(3.141592653589793),
			txn.Bit(1), txn.Bit(math.MaxUint64), txn.Enum(3), txn.Set(5),
			txn.Temporal("2024-02-29"), txn.Temporal("2024-02-29 13:14:15.123456"), txn.Temporal("2024-03-01 00:00:00.000001"),
			txn.Temporal("-838:59:59.000000"), txn.Temporal("12:34:56"), int64(2155),
			[]byte("caf\xe9"), []byte("😀 ok"), []byte("ab"), ab, ab, []byte(`{"a": [1, 2.5, "x"], "b": null}`), []byte("hello")},
		{int64(2), int64(0), int64(math.MinInt64), int64(-128), int64(0), int64(-32768), int64(0),
			int64(-8388608), int64(0), int64(math.MinInt32), int64(0),
			txn.Decimal("-0.000000000000000000000000000001"), txn.Decimal("-12.30"),
			float32(-0.25), float64(-1e308),
			txn.Bit(0), txn.Bit(0), txn.Enum(1), txn.Set(0),
			txn.Temporal("0000-00-00"), txn.Temporal("0000-00-00 00:00:00.000000"), txn.Temporal("0000-00-00 00:00:00.000000"),
			txn.Temporal("-00:00:01.500000"), txn.Temporal("-838:59:59"), int64(1901),
			[]byte{}, []byte{}, []byte{}, []byte{}, []byte{}, []byte("[]"), []byte{}},
		append([]txn.Value{int64(3)}, make([]txn.Value, 31)...),
	}
}

var allTypesInsert = strings.Join([]string{
	"INSERT INTO d.all_types VALUES (1, 18446744073709551615, 9223372036854775807, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,",
	" '12345678901234567890123456789012345.123456789012345678901234567890', 99999999.99, 1.5, 3.141592653589793,",
	" b'1', b'" + strings.Repeat("1", 64) + "', 'c', 'x,z', '2024-02-29', '2024-02-29 13:14:15.123456', '2024-03-01 02:00:00.000001',",
	" '-838:59:59', '12:34:56', 2155, _latin1 X'636166E9', '😀 ok', 'ab', X'" + fmt.Sprintf("%X", allBytes()) + "', X'" + fmt.Sprintf("%X", allBytes()) + "',",
	` '{"a": [1, 2.5, "x"], "b": null}', 'hello'),`,
	" (2, 0, -9223372036854775808, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0,",
	" '-0.000000000000000000000000000001', -12.30, -0.25, -1e308, b'0', 0, 'a', '', '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00',",
	" '-00:00:01.5', '-838:59:59', 1901, '', '', '', '', '', '[]', ''),",
	" (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,",
	" NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
}, "")

// runWorkload writes the test workload on one session; checkWorkload
// knows the 17 transactions it leaves in the binlog.
func runWorkload(t *testing.T, s *sandbox.Server) {
	t.Helper()
	db := sandbox.MustOpen(t, s, "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		"CREATE DATABASE d", // 1 DDL
		"CREATE TABLE d.t1 (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB", // 2 DDL
		"CREATE TABLE d.t2 (id INT PRIMARY KEY, n BIGINT) ENGINE=InnoDB",      // 3 DDL
		"CREATE TABLE d.m (id INT PRIMARY KEY) ENGINE=MyISAM",                 // 4 DDL
		allTypesDDL, // 5 DDL
		// 6: multi-statement transaction
		"BEGIN", "INSERT INTO d.t1 VALUES (1,'a'),(2,'b')", "UPDATE d.t1 SET v='c' WHERE id=1", "DELETE FROM d.t1 WHERE id=2", "COMMIT",
		// rolled back: not in the binlog
		"BEGIN", "INSERT INTO d.t1 VALUES (99,'no')", "ROLLBACK",
		// 7: multi-table
		"BEGIN", "INSERT INTO d.t1 VALUES (3,'x')", "INSERT INTO d.t2 VALUES (3, -5)", "UPDATE d.t1 SET v='y' WHERE id=3", "COMMIT",
		// 8: DDL in the middle, 9: a row of the new shape
		"ALTER TABLE d.t1 ADD COLUMN w INT",
		"INSERT INTO d.t1 VALUES (4,'z',7)",
		// 10: every type
		"SET SESSION sql_mode=''", "SET SESSION time_zone='+02:00'",
		"BEGIN", allTypesInsert, "COMMIT",
		"SET SESSION sql_mode=DEFAULT", "SET SESSION time_zone=DEFAULT",
		// 11: update and delete of typed rows
		"BEGIN", "UPDATE d.all_types SET ii=ii-1 WHERE id=1", "DELETE FROM d.all_types WHERE id=3", "COMMIT",
		// 12: non-transactional
		"INSERT INTO d.m VALUES (1)",
		// 13, 14: XA prepare then commit
		"XA START 'x1'", "INSERT INTO d.t2 VALUES (10, 10)", "XA END 'x1'", "XA PREPARE 'x1'", "XA COMMIT 'x1'",
		// 15: savepoint
		"BEGIN", "INSERT INTO d.t2 VALUES (11, 11)", "SAVEPOINT s1", "INSERT INTO d.t2 VALUES (12, 12)", "ROLLBACK TO SAVEPOINT s1", "COMMIT",
		// 16: rows with foreign_key_checks=0, 17: DDL with it
		"SET SESSION foreign_key_checks=0", "INSERT INTO d.t2 VALUES (13, 13)", "CREATE TABLE d.t3 (id INT PRIMARY KEY)", "SET SESSION foreign_key_checks=1",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestWorkloadFilesAndStream(t *testing.T) {
	for _, meta := range []string{"FULL", ""} {
		t.Run("metadata="+meta, func(t *testing.T) {
			t.Parallel()
			s := startSource(t, func(o *sandbox.Options) { o.BinlogRowMetadata = meta })
			runWorkload(t, s)
			files := readFiles(t, s, fileset.Options{})
			stream := readStream(t, streamConfig(s))
			if len(files) != len(stream) {
				t.Fatalf("files gave %d txns, stream %d", len(files), len(stream))
			}
			for i := range files {
				if !reflect.DeepEqual(files[i], stream[i]) {
					t.Errorf("txn %d differs:\nfile:   %s\nstream: %s", i, describe(files[i]), describe(stream[i]))
				}
			}
			checkWorkload(t, files, meta == "FULL")

			// Resume after the 7th transaction, from files and from the stream.
			resume := files[6]
			fromFile := readFiles(t, s, fileset.Options{StartFile: resume.End.File, StartOffset: resume.End.Offset})
			cfg := streamConfig(s)
			cfg.StartGTID = resume.GTID
			fromGTID := readStream(t, cfg)
			cfg.StartGTID, cfg.StartFile, cfg.StartPos = "", resume.End.File, resume.End.Offset
			fromPos := readStream(t, cfg)
			for name, got := range map[string][]*txn.Txn{"file": fromFile, "gtid": fromGTID, "pos": fromPos} {
				if len(got) != len(files)-7 {
					t.Fatalf("resume from %s: %d txns, want %d", name, len(got), len(files)-7)
				}
				for i, tx := range got {
					want := *files[7+i]
					want.Seq = uint64(i + 1)
					// A stream started mid-file gets the server's artificial
					// format description (no position, no creation time):
					// another encoding of the same format.
					if tx.Format != nil && want.Format != nil &&
						tx.Format.Flavor == want.Format.Flavor && tx.Format.Checksum == want.Format.Checksum {
						want.Format = tx.Format
					}
					if !reflect.DeepEqual(tx, &want) {
						t.Errorf("resume from %s: txn %d:\n got %s\nwant %s", name, i, describe(tx), describe(&want))
					}
				}
			}
		})
	}
}

func checkWorkload(t *testing.T, txns []*txn.Txn, full bool) {
	t.Helper()
	if len(txns) != 17 {
		for _, tx := range txns {
			t.Log(describe(tx))
		}
		t.Fatalf("%d txns, want 17", len(txns))
	}
	for i, tx := range txns {
		if tx.Seq != uint64(i+1) {
			t.Errorf("txn %d: Seq %d", i, tx.Seq)
		}
		want := fmt.Sprintf("0-1-%d", i+1)
		if tx.GTID != want || tx.Domain != 0 || tx.ServerID != 1 || tx.SeqNo != uint64(i+1) {
			t.Errorf("txn %d: GTID %q domain %d server %d seq %d, want %s", i, tx.GTID, tx.Domain, tx.ServerID, tx.SeqNo, want)
		}
		if tx.LastCommitted != -1 || tx.SequenceNumber != -1 {
			t.Errorf("txn %d: MySQL logical clock set on MariaDB", i)
		}
		if tx.Start.File != "binlog.000001" || tx.End.File != "binlog.000001" || tx.Size != int(tx.End.Offset-tx.Start.Offset) || tx.Size <= 0 {
			t.Errorf("txn %d: start %v end %v size %d", i, tx.Start, tx.End, tx.Size)
		}
		if i > 0 && tx.Start != txns[i-1].End {
			t.Errorf("txn %d starts at %v, previous ended at %v", i, tx.Start, txns[i-1].End)
		}
		if tx.Timestamp.IsZero() || tx.Timestamp.Location().String() != "UTC" {
			t.Errorf("txn %d: timestamp %v", i, tx.Timestamp)
		}
	}
	for _, i := range []int{0, 1, 2, 3, 4, 7, 16} {
		if !txns[i].IsDDL() || txns[i].Flags&txn.FlagDDL == 0 {
			t.Errorf("txn %d should be DDL: %s", i, describe(txns[i]))
		}
	}
	if st := txns[0].Changes[0].Stmt; st.SQL != "CREATE DATABASE d" || !st.HasSQLMode || st.CharsetClient != 45 || st.CollationConn != 45 || st.CollationServer != 45 || !st.ForeignKeyChecks || !st.UniqueChecks || !st.ExplicitDefaultsForTimestamp {
		t.Errorf("DDL session state: %+v", *st)
	}
	if st := txns[16].Changes[0].Stmt; st.ForeignKeyChecks || st.SQL != "CREATE TABLE d.t3 (id INT PRIMARY KEY)" {
		t.Errorf("DDL with foreign_key_checks=0: %+v", *st)
	}

	// 6: insert 2 rows, update, delete.
	rows := rowsOf(txns[5])
	if len(rows) != 4 || rows[0].Kind != txn.Insert || rows[2].Kind != txn.Update || rows[3].Kind != txn.Delete {
		t.Fatalf("txn 6 rows: %s", describe(txns[5]))
	}
	eqVals(t, "insert", rows[0].After, []txn.Value{int64(1), []byte("a")})
	eqVals(t, "update before", rows[2].Before, []txn.Value{int64(1), []byte("a")})
	eqVals(t, "update after", rows[2].After, []txn.Value{int64(1), []byte("c")})
	eqVals(t, "delete", rows[3].Before, []txn.Value{int64(2), []byte("b")})
	if rows[0].Before != nil || rows[3].After != nil || !reflect.DeepEqual(rows[2].AfterCols, []bool{true, true}) {
		t.Errorf("images: %+v %+v", rows[0], rows[3])
	}
	t1 := rows[0].Table
	if t1.Schema != "d" || t1.Name != "t1" || !reflect.DeepEqual(t1.Types, []byte{txn.TypeLong, txn.TypeVarchar}) ||
		!reflect.DeepEqual(t1.Nullable, []bool{false, true}) || t1.Meta[1] != 40 {
		t.Errorf("table t1: %+v", *t1)
	}
	if full {
		if !reflect.DeepEqual(t1.Names, []string{"id", "v"}) || !reflect.DeepEqual(t1.PrimaryKey, []int{0}) || !reflect.DeepEqual(t1.Unsigned, []bool{false, false}) {
			t.Errorf("table t1 metadata: %+v", *t1)
		}
	} else if t1.Names != nil || t1.PrimaryKey != nil || t1.Unsigned != nil {
		t.Errorf("table t1 metadata without binlog_row_metadata=FULL: %+v", *t1)
	}

	// 7: two tables; the t1 table is the same *Table as in 6.
	rows = rowsOf(txns[6])
	if len(rows) != 3 || rows[0].Table != t1 || rows[1].Table.Name != "t2" {
		t.Errorf("txn 7: %s", describe(txns[6]))
	}
	eqVals(t, "t2 insert", rows[1].After, []txn.Value{int64(3), int64(-5)})

	// 9: after ALTER, a new table shape.
	rows = rowsOf(txns[8])
	if len(rows) != 1 || rows[0].Table == t1 || len(rows[0].Table.Types) != 3 {
		t.Errorf("txn 9: %s", describe(txns[8]))
	}
	eqVals(t, "t1 after alter", rows[0].After, []txn.Value{int64(4), []byte("z"), int64(7)})

	// 10: every type.
	rows = rowsOf(txns[9])
	want := allTypesRows()
	if len(rows) != 3 {
		t.Fatalf("txn 10: %s", describe(txns[9]))
	}
	for i := range rows {
		eqVals(t, fmt.Sprintf("all_types row %d", i+1), rows[i].After, want[i])
		for c, ok := range rows[i].AfterCols {
			if !ok {
				t.Errorf("all_types row %d column %d absent", i+1, c)
			}
		}
	}
	at := rows[0].Table
	if full {
		wantUnsigned := make([]bool, 32)
		for _, c := range []int{1, 4, 6, 8, 10, 24} { // YEAR is unsigned too
			wantUnsigned[c] = true
		}
		if !reflect.DeepEqual(at.Unsigned, wantUnsigned) || at.Names[31] != "tx" {
			t.Errorf("all_types metadata: unsigned %v names %v", at.Unsigned, at.Names)
		}
	}
	if txn.Unsigned(at.Types[4], rows[0].After[4].(int64)) != 255 || txn.Unsigned(at.Types[8], rows[0].After[8].(int64)) != 16777215 ||
		txn.Unsigned(at.Types[1], rows[0].After[1].(int64)) != math.MaxUint64 {
		t.Errorf("unsigned reinterpretation failed")
	}

	// 11: update of one column (full image) and delete.
	rows = rowsOf(txns[10])
	if len(rows) != 2 || rows[0].Kind != txn.Update || rows[1].Kind != txn.Delete {
		t.Fatalf("txn 11: %s", describe(txns[10]))
	}
	after := append([]txn.Value(nil), want[0]...)
	after[9] = int64(math.MaxInt32 - 1)
	eqVals(t, "all_types update before", rows[0].Before, want[0])
	eqVals(t, "all_types update after", rows[0].After, after)
	eqVals(t, "all_types delete", rows[1].Before, want[2])

	// 12: MyISAM.
	if !txns[11].NonTransactional || txns[10].NonTransactional {
		t.Errorf("non-transactional flags: %v %v", txns[11].NonTransactional, txns[10].NonTransactional)
	}

	// 13, 14: XA.
	x1 := "X'7831',X'',1"
	ch := txns[12].Changes
	if !txns[12].XA || len(ch) != 4 || ch[0].Stmt.SQL != "XA START "+x1 || ch[1].Row == nil || ch[2].Stmt.SQL != "XA END "+x1 || ch[3].Stmt.SQL != "XA PREPARE "+x1 {
		t.Errorf("XA prepare: %s", describe(txns[12]))
	}
	ch = txns[13].Changes
	if !txns[13].XA || len(ch) != 1 || ch[0].Stmt.SQL != "XA COMMIT "+x1 || ch[0].Stmt.DDL {
		t.Errorf("XA commit: %s", describe(txns[13]))
	}

	// 15: savepoint statement kept in place; the rolled back row is not logged.
	ch = txns[14].Changes
	if len(ch) != 2 || ch[0].Row == nil || ch[1].Stmt == nil || !strings.HasPrefix(ch[1].Stmt.SQL, "SAVEPOINT") || ch[1].Stmt.DDL {
		t.Errorf("savepoint: %s", describe(txns[14]))
	}

	// 16: rows event flags carry foreign_key_checks=0.
	rows = rowsOf(txns[15])
	if len(rows) != 1 || rows[0].Flags&txn.RowsFlagNoForeignKeyChecks == 0 || rowsOf(txns[14])[0].Flags&txn.RowsFlagNoForeignKeyChecks != 0 {
		t.Errorf("rows flags: %s", describe(txns[15]))
	}
}

func eqVals(t *testing.T, what string, got, want []txn.Value) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, want %d", what, len(got), len(want))
		return
	}
	for i := range want {
		if reflect.TypeOf(got[i]) != reflect.TypeOf(want[i]) || !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s column %d: got %T(%v), want %T(%v)", what, i, got[i], show(got[i]), want[i], show(want[i]))
		}
	}
}

func show(v txn.Value) any {
	if b, ok := v.([]byte); ok {
		if len(b) > 40 {
			return fmt.Sprintf("%d bytes %x...", len(b), b[:20])
		}
		return fmt.Sprintf("%q", b)
	}
	return v
}

func describe(tx *txn.Txn) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "seq=%d gtid=%s cid=%d flags=%d start=%v end=%v size=%d xa=%v nt=%v lc=%d sn=%d ts=%v",
		tx.Seq, tx.GTID, tx.CommitID, tx.Flags, tx.Start, tx.End, tx.Size, tx.XA, tx.NonTransactional, tx.LastCommitted, tx.SequenceNumber, tx.Timestamp)
	for _, c := range tx.Changes {
		if c.Stmt != nil {
			fmt.Fprintf(&b, "\n   stmt %+v", *c.Stmt)
			continue
		}
		r := c.Row
		fmt.Fprintf(&b, "\n   %v %s flags=%d before=", r.Kind, r.Table.QualifiedName(), r.Flags)
		for _, v := range r.Before {
			fmt.Fprintf(&b, "%T(%v) ", v, show(v))
		}
		b.WriteString(" after=")
		for _, v := range r.After {
			fmt.Fprintf(&b, "%T(%v) ", v, show(v))
		}
	}
	return b.String()
}
