package binlog

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

func TestClassifyQuery(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want queryKind
	}{
		{"BEGIN", qkBegin},
		{"START TRANSACTION", qkBegin},
		{"COMMIT", qkCommit},
		{"ROLLBACK", qkRollback},
		{"ROLLBACK TO `s1`", qkSavepoint},
		{"SAVEPOINT `s1`", qkSavepoint},
		{"XA START X'7831',X'',1", qkXAStart},
		{"XA END X'7831',X'',1", qkXAEnd},
		{"XA COMMIT X'7831',X'',1", qkXAComplete},
		{"XA ROLLBACK X'7831',X'',1", qkXAComplete},
		{"XA COMMIT X'7831',X'',1 ONE PHASE", qkXAOnePhase},
		{"insert into t values (1)", qkDML},
		{"/* app */ UPDATE t SET a=1", qkDML},
		{"  -- c\nDELETE FROM t", qkDML},
		{"REPLACE INTO t VALUES (1)", qkDML},
		{"LOAD DATA INFILE 'x' INTO TABLE t", qkDML},
		{"CREATE TABLE t (id INT)", qkDDL},
		{"ALTER TABLE t ADD COLUMN c INT", qkDDL},
		{"DROP TEMPORARY TABLE IF EXISTS `t`", qkDDL},
		{"", qkDDL},
	} {
		if got := classifyQuery(c.sql); got != c.want {
			t.Errorf("classifyQuery(%q) = %d, want %d", c.sql, got, c.want)
		}
	}
	for sql, want := range map[string]bool{
		"CREATE TABLE `d`.`t2` (\n  `a` int(11) NOT NULL\n) ENGINE=InnoDB": true,
		"/* x */ create or replace table t (a int)":                        true,
		"CREATE TEMPORARY TABLE t (a int)":                                 false,
		"CREATE OR REPLACE TEMPORARY TABLE t (a int)":                      false,
		"DROP TEMPORARY TABLE IF EXISTS `t`":                               false,
		"CREATE TABLESPACE ts":                                             false,
		"CREATE":                                                           false,
	} {
		if got := createsTable(sql); got != want {
			t.Errorf("createsTable(%q) = %v, want %v", sql, got, want)
		}
	}
	if got := xaArgs("XA END X'7831',X'',1"); got != "X'7831',X'',1" {
		t.Errorf("xaArgs: %q", got)
	}
}

func TestStatusVars(t *testing.T) {
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	le64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	for _, c := range []struct {
		name     string
		vars     []byte
		mariadb  bool
		want     txn.Statement
		complete bool
	}{
		{"empty", nil, true, txn.Statement{ForeignKeyChecks: true, UniqueChecks: true, CheckConstraintChecks: true}, true},
		{"mariadb ddl", cat([]byte{qFlags2}, le32(1<<24), []byte{qSQLMode}, le64(1411383296), []byte{qCatalogNZ, 3}, []byte("std"),
			[]byte{qCharset, 45, 0, 46, 0, 8, 0}, []byte{qTimeZone, 6}, []byte("+02:00")), true,
			txn.Statement{SQLMode: 1411383296, HasSQLMode: true, CharsetClient: 45, CollationConn: 46, CollationServer: 8,
				TimeZone: "+02:00", ForeignKeyChecks: true, UniqueChecks: true, CheckConstraintChecks: true, ExplicitDefaultsForTimestamp: true, HasExplicitDefaults: true}, true},
		{"checks off", cat([]byte{qFlags2}, le32(optionNoForeignKeyChecks|optionRelaxedUniqueChecks)), true,
			txn.Statement{HasExplicitDefaults: true, CheckConstraintChecks: true}, true},
		{"mariadb check constraints off", cat([]byte{qFlags2}, le32(optionNoCheckConstraints)), true,
			txn.Statement{HasExplicitDefaults: true, ForeignKeyChecks: true, UniqueChecks: true}, true},
		{"mariadb time, auto-increment, locale", cat([]byte{qAutoIncrement, 5, 0, 3, 0}, []byte{qMariaHRNow, 0x40, 0xe2, 0x01},
			[]byte{qLCTimeNames, 10, 0}), true,
			txn.Statement{AutoIncrementIncrement: 5, AutoIncrementOffset: 3, UnixMicro: 123456, LCTimeNames: 10, ForeignKeyChecks: true, UniqueChecks: true, CheckConstraintChecks: true}, true},
		{"mysql", cat([]byte{qFlags2}, le32(1<<24), []byte{qUpdatedDBNames, 2}, []byte("a\x00b\x00"), []byte{qMicroseconds, 1, 2, 3},
			[]byte{qExplicitDefaultsForTS, 1}, []byte{qDefaultCollationUTF8MB4, 255, 0}), false,
			txn.Statement{ForeignKeyChecks: true, UniqueChecks: true, CheckConstraintChecks: true, ExplicitDefaultsForTimestamp: true, HasExplicitDefaults: true,
				UnixMicro: 0x030201}, true},
		{"flags2 of MySQL says nothing of explicit defaults", cat([]byte{qFlags2}, le32(1<<24)), false,
			txn.Statement{ForeignKeyChecks: true, UniqueChecks: true, CheckConstraintChecks: true}, true},
		{"unknown code stops", cat([]byte{qSQLMode}, le64(2), []byte{99, 1, 2}, []byte{qCharset, 1, 0, 1, 0, 1, 0}), true,
			txn.Statement{SQLMode: 2, HasSQLMode: true, ForeignKeyChecks: true, UniqueChecks: true, CheckConstraintChecks: true}, false},
		{"truncated", []byte{qSQLMode, 1, 2}, true, txn.Statement{ForeignKeyChecks: true, UniqueChecks: true, CheckConstraintChecks: true}, false},
	} {
		var st txn.Statement
		complete := applyStatusVars(&st, c.vars, c.mariadb)
		if st != c.want || complete != c.complete {
			t.Errorf("%s: got %+v complete=%v, want %+v complete=%v", c.name, st, complete, c.want, c.complete)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, c := range []struct {
		in   any
		typ  byte
		meta uint16
		want txn.Value
	}{
		{int8(-1), txn.TypeTiny, 0, int64(-1)},
		{uint8(255), txn.TypeTiny, 0, int64(-1)},
		{uint16(65535), txn.TypeShort, 0, int64(-1)},
		{uint32(0xFFFFFF), txn.TypeInt24, 0, int64(-1)},
		{uint32(0x7FFFFF), txn.TypeInt24, 0, int64(0x7FFFFF)},
		{uint32(0xFFFFFFFF), txn.TypeLong, 0, int64(-1)},
		{uint64(1 << 63), txn.TypeLongLong, 0, int64(-1 << 63)},
		{int(2024), txn.TypeYear, 0, int64(2024)},
		{"1.50", txn.TypeNewDecimal, 0x0302, txn.Decimal("1.50")},
		{int64(-1), txn.TypeBit, 0x0800, txn.Bit(1<<64 - 1)},
		{int64(2), txn.TypeString, uint16(txn.TypeEnum)<<8 | 1, txn.Enum(2)},
		{int64(6), txn.TypeString, uint16(txn.TypeSet)<<8 | 1, txn.Set(6)},
		{"ab", txn.TypeString, 20, []byte("ab")},
		{[]byte{0, 1}, txn.TypeBlob, 2, []byte{0, 1}},
		{`{"a": 1}`, txn.TypeJSON, 4, []byte(`{"a": 1}`)},
		{"10:00:00", txn.TypeTime2, 3, txn.Temporal("10:00:00.000")},
		{"-00:00:01.5", txn.TypeTime2, 1, txn.Temporal("-00:00:01.5")},
		{"12:00:00", txn.TypeTime2, 0, txn.Temporal("12:00:00")},
		{"2024-01-01 00:00:00.000", txn.TypeTimestamp2, 3, txn.Temporal("2024-01-01 00:00:00.000")},
		{nil, txn.TypeLong, 0, nil},
	} {
		got, err := normalize(c.in, c.typ, c.meta)
		if err != nil || reflect.TypeOf(got) != reflect.TypeOf(c.want) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("normalize(%T %v, type %d): %T(%v) %v, want %T(%v)", c.in, c.in, c.typ, got, got, err, c.want, c.want)
		}
	}
	b := []byte{1, 2}
	got, _ := normalize(b, txn.TypeBlob, 2)
	if &got.([]byte)[0] != &b[0] {
		t.Error("normalize copies blobs: they are slices of the event, which the transaction keeps")
	}
	if _, err := normalize(&replication.JsonDiff{}, txn.TypeJSON, 4); err == nil {
		t.Error("partial JSON accepted")
	}
	if _, err := normalize("x", txn.TypeLong, 0); err == nil {
		t.Error("string for INT accepted")
	}
}

// Synthetic event sequences for what a MariaDB sandbox does not write:
// ROLLBACK groups, MySQL GTID events, statement DML.
type evs struct {
	pos uint32
	out []*replication.BinlogEvent
}

func (s *evs) add(typ replication.EventType, size uint32, e replication.Event) *evs {
	s.pos += size
	s.out = append(s.out, &replication.BinlogEvent{
		Header: &replication.EventHeader{EventType: typ, ServerID: 7, EventSize: size, LogPos: s.pos, Timestamp: 1700000000},
		Event:  e,
	})
	return s
}

func (s *evs) query(sql string) *evs {
	return s.add(replication.QUERY_EVENT, 60, &replication.QueryEvent{Query: []byte(sql), Schema: []byte("d")})
}

func feed(t *testing.T, s *evs) ([]*txn.Txn, error) {
	t.Helper()
	a := newAssembler()
	a.setFile("binlog.000001")
	var out []*txn.Txn
	for _, ev := range s.out {
		tx, err := a.add(ev)
		if err != nil {
			return out, err
		}
		if tx != nil {
			out = append(out, tx)
		}
	}
	if a.open() {
		t.Errorf("transaction left open")
	}
	return out, nil
}

func TestAssemblerMySQLAndRollback(t *testing.T) {
	sid := []byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	s := &evs{pos: 4}
	s.add(replication.GTID_EVENT, 65, &replication.GTIDEvent{SID: sid, GNO: 23, LastCommitted: 4, SequenceNumber: 6}).
		query("BEGIN").query("COMMIT")
	s.add(replication.GTID_EVENT, 65, &replication.GTIDEvent{SID: sid, GNO: 24, LastCommitted: 5, SequenceNumber: 7}).
		query("BEGIN").query("ROLLBACK")
	s.add(replication.GTID_EVENT, 65, &replication.GTIDEvent{SID: sid, GNO: 25, LastCommitted: 6, SequenceNumber: 8}).
		query("CREATE TABLE d.x (id INT)")
	s.add(replication.GTID_EVENT, 65, &replication.GTIDEvent{SID: sid, GNO: 26, LastCommitted: 6, SequenceNumber: 9}).
		query("XA START X'01',X'',1").query("XA END X'01',X'',1").
		add(replication.XA_PREPARE_LOG_EVENT, 40, &replication.GenericEvent{Data: []byte{1}})
	s.query("BEGIN").query("SAVEPOINT a").add(replication.XID_EVENT, 31, &replication.XIDEvent{XID: 9}) // no GTID at all
	got, err := feed(t, s)
	if err != nil || len(got) != 4 {
		t.Fatalf("%d txns, %v", len(got), err)
	}
	first := got[0]
	if first.GTID != "3e11fa47-71ca-11e1-9e33-c80aa9429562:23" || first.SeqNo != 23 || first.LastCommitted != 4 || first.SequenceNumber != 6 ||
		first.Start.Offset != 4 || first.End.Offset != 4+65+60+60 || first.Size != 185 || first.ServerID != 7 || first.Timestamp.Unix() != 1700000000 {
		t.Errorf("first: %s", describe(first))
	}
	if got[1].GTID != "3e11fa47-71ca-11e1-9e33-c80aa9429562:25" || !got[1].IsDDL() || got[1].Seq != 2 || got[1].Start.Offset != got[0].End.Offset+65+120 {
		t.Errorf("after the rolled back txn: %s", describe(got[1]))
	}
	ch := got[2].Changes
	if !got[2].XA || len(ch) != 3 || ch[0].Stmt.SQL != "XA START X'01',X'',1" || ch[2].Stmt.SQL != "XA COMMIT X'01',X'',1 ONE PHASE" {
		t.Errorf("MySQL XA one phase: %s", describe(got[2]))
	}
	if got[3].GTID != "" || got[3].LastCommitted != -1 || len(got[3].Changes) != 1 || got[3].NonTransactional {
		t.Errorf("no GTID: %s", describe(got[3]))
	}
}

// TestAssemblerRelayRollback: a relay log's transaction that goes on
// into the next relay file and is rolled back there leaves nothing to the
// transaction after it, whose size is its own bytes.
func TestAssemblerRelayRollback(t *testing.T) {
	sid := []byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	add := func(a *assembler, s *evs) *txn.Txn {
		t.Helper()
		var last *txn.Txn
		for _, ev := range s.out {
			tx, err := a.add(ev)
			if err != nil {
				t.Fatal(err)
			}
			if tx != nil {
				last = tx
			}
		}
		return last
	}
	a := newAssembler()
	a.setFile("relay-bin.000001")
	a.startRelay(true)
	add(a, (&evs{pos: 4}).add(replication.GTID_EVENT, 65, &replication.GTIDEvent{SID: sid, GNO: 1}).query("BEGIN"))
	a.relayNext = "relay-bin.000002"
	if err := a.carryRelay(a.lastEnd, "relay-bin.000002"); err != nil {
		t.Fatal(err)
	}
	a.setFile("relay-bin.000002")
	a.startRelay(false)
	s := (&evs{pos: 4}).query("ROLLBACK")
	s.add(replication.GTID_EVENT, 65, &replication.GTIDEvent{SID: sid, GNO: 2}).query("BEGIN").query("COMMIT")
	got := add(a, s)
	if got == nil || got.GTID != "3e11fa47-71ca-11e1-9e33-c80aa9429562:2" || got.Size != 65+60+60 {
		t.Fatalf("the transaction after the rolled back one: %s", describe(got))
	}
}

func TestAssemblerStatementDML(t *testing.T) {
	s := &evs{pos: 4}
	s.add(replication.MARIADB_GTID_EVENT, 42, &replication.MariadbGTIDEvent{Flags: txn.FlagTransactional}).
		query("INSERT INTO t VALUES (1)").add(replication.XID_EVENT, 31, &replication.XIDEvent{})
	_, err := feed(t, s)
	var fe *FormatError
	if !errors.As(err, &fe) || !errors.Is(err, ErrNotRowBased) || fe.Offset != 46 || fe.File != "binlog.000001" || fe.GTID != "0-0-0" {
		t.Fatalf("got %v", err)
	}
	// The error names the transaction the statement is in, by its GTID.
	if !strings.HasPrefix(err.Error(), "binlog.000001 at offset 46 (in transaction 0-0-0): "+ErrNotRowBased.Error()+": a statement writing `d`.t ") {
		t.Errorf("message: %s", err)
	}
}

// TestDMLTable: the table a statement-logged DML writes, named in the
// refusal.
func TestDMLTable(t *testing.T) {
	for _, c := range []struct{ sql, schema, want string }{
		{"INSERT INTO t (id, v) VALUES (1, 1)", "tp", "`tp`.t"},
		{"insert ignore into `a.b` values (1)", "tp", "`tp`.`a.b`"},
		{"/* app */ UPDATE LOW_PRIORITY d.t SET v = 1", "tp", "d.t"},
		{"DELETE QUICK FROM `d` . `t` WHERE id = 2", "", "`d` . `t`"},
		{"REPLACE t2 VALUES (1)", "", "t2"},
		{"LOAD DATA INFILE 'f' INTO TABLE tl", "x", "`x`.tl"},
		{"DELETE t1, t2 FROM t1 JOIN t2", "x", ""},
		{"WITH c AS (SELECT 1) UPDATE t SET v = 1", "x", ""},
	} {
		if got := dmlTable(c.sql, c.schema); got != c.want {
			t.Errorf("dmlTable(%q, %q) = %q, want %q", c.sql, c.schema, got, c.want)
		}
	}
}

// TestTimestampEpochFraction: a TIMESTAMP(1..6) of the second 0 with a
// fraction is '1970-01-01 00:00:00.FRACTION' in UTC on both decoding
// paths, as MariaDB reads it (main.type_timestamp, MDEV-34061 stores
// '1970-01-01 00:00:00.000001' in a UTC session); only the second 0
// with the fraction 0 is the zero date. go-mysql writes the zero date
// with the fraction, which no SQL stores.
func TestTimestampEpochFraction(t *testing.T) {
	for _, c := range []struct {
		bytes []byte
		dec   int
		want  txn.Temporal
	}{
		{[]byte{0, 0, 0, 0, 0, 0, 1}, 6, "1970-01-01 00:00:00.000001"},
		{[]byte{0, 0, 0, 0, 10}, 1, "1970-01-01 00:00:00.1"},
		{[]byte{0, 0, 0, 0, 0x03, 0xE7}, 3, "1970-01-01 00:00:00.099"},
		{[]byte{0, 0, 0, 0, 0, 0, 0}, 6, "0000-00-00 00:00:00.000000"},
		{[]byte{0, 0, 0, 0}, 0, "0000-00-00 00:00:00"},
		{[]byte{0, 0, 0, 1, 0, 0, 1}, 6, "1970-01-01 00:00:01.000001"},
	} {
		slabs := newValueSlabs(1, 1)
		got, n, err := decodeTimestamp2(c.bytes, c.dec, &slabs)
		if err != nil || n != len(c.bytes) || got != c.want {
			t.Errorf("decodeTimestamp2(% x, %d) = %v, %d, %v; want %q", c.bytes, c.dec, got, n, err, c.want)
		}
		// go-mysql's text of the same bytes: the zero date, the fraction kept.
		frac := strings.TrimPrefix(string(c.want), "1970-01-01 00:00:00")
		if strings.HasPrefix(string(c.want), "1970-01-01 00:00:00") {
			goText := "0000-00-00 00:00:00" + frac
			if got, err := normalize(goText, txn.TypeTimestamp2, uint16(c.dec)); err != nil || got != c.want {
				t.Errorf("normalize(%q, TIMESTAMP(%d)) = %v, %v; want %q", goText, c.dec, got, err, c.want)
			}
		}
	}
	if got, _ := normalize("0000-00-00 00:00:00.00", txn.TypeTimestamp2, 2); got != txn.Temporal("0000-00-00 00:00:00.00") {
		t.Errorf("normalize of the zero TIMESTAMP(2) = %v, want it as it is", got)
	}
}

// TestAssemblerRolledBackDrop: a group ended by ROLLBACK that holds a
// DROP TABLE (MariaDB's log of a failed CREATE OR REPLACE TABLE, which
// had dropped the old table) is that DROP as a DDL transaction, as the
// replica runs it; one holding a DROP TEMPORARY TABLE and rows is still
// rolled back, and leaves nothing to the transaction after it.
func TestAssemblerRolledBackDrop(t *testing.T) {
	drop := "DROP TABLE IF EXISTS `d`.`t`/* Generated to handle failed CREATE OR REPLACE */"
	s := &evs{pos: 4}
	s.add(replication.MARIADB_GTID_EVENT, 42, &replication.MariadbGTIDEvent{GTID: mysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 64}, Flags: txn.FlagDDL}).
		query("BEGIN").query(drop).query("ROLLBACK")
	s.add(replication.MARIADB_GTID_EVENT, 42, &replication.MariadbGTIDEvent{GTID: mysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 65}}).
		query("BEGIN").query("DROP TEMPORARY TABLE IF EXISTS `tmp`").query("ROLLBACK")
	s.add(replication.MARIADB_GTID_EVENT, 42, &replication.MariadbGTIDEvent{GTID: mysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 66}, Flags: txn.FlagStandalone | txn.FlagDDL}).
		query("CREATE TABLE t (i INT)")
	got, err := feed(t, s)
	if err != nil || len(got) != 2 {
		t.Fatalf("%d txns, %v", len(got), err)
	}
	d := got[0]
	if d.GTID != "0-1-64" || !d.IsDDL() || len(d.Changes) != 1 || d.Changes[0].Stmt.SQL != drop ||
		d.Start.Offset != 4 || d.End.Offset != 4+42+3*60 {
		t.Errorf("the rolled back group's DROP: %s", describe(d))
	}
	if got[1].GTID != "0-1-66" || !got[1].IsDDL() || got[1].Start.Offset != d.End.Offset+42+3*60 {
		t.Errorf("after the rolled back DROP TEMPORARY: %s", describe(got[1]))
	}
}
