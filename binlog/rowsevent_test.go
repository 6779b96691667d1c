package binlog

import (
	"encoding/binary"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// decodeBothWays decodes the binlog b with prepl's own decoding of
// repeated table maps and rows events, and with go-mysql's Parse of every
// event, as before it (the row images of fastType tables are decoded by
// decodeRowsFast both ways).
func decodeBothWays(b []byte) (own, goMySQL []*txn.Txn, errOwn, errGoMySQL error) {
	own, errOwn = decodeBytes("both.000001", b, Limits{})
	decodeOwn = false
	defer func() { decodeOwn = true }()
	goMySQL, errGoMySQL = decodeBytes("both.000001", b, Limits{})
	return own, goMySQL, errOwn, errGoMySQL
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sameDecoding fails unless both decodings of b give the same
// transactions and the same error.
func sameDecoding(t *testing.T, b []byte) {
	t.Helper()
	own, goMySQL, errOwn, errGoMySQL := decodeBothWays(b)
	checkImages(t, own)
	checkImages(t, goMySQL)
	if errText(errOwn) != errText(errGoMySQL) {
		t.Fatalf("errors differ:\nown: %v\ngo-mysql: %v", errOwn, errGoMySQL)
	}
	// A re-decoding hook is a closure, which DeepEqual never finds equal
	// to another: compare whether each side has one, then leave it out.
	if a, b := redecodeHooks(own), redecodeHooks(goMySQL); !reflect.DeepEqual(a, b) {
		t.Fatalf("re-decoding hooks differ: own %v, go-mysql %v", a, b)
	}
	if !reflect.DeepEqual(own, goMySQL) {
		t.Fatalf("decodings differ:\nown: %s\ngo-mysql: %s", describeAll(own), describeAll(goMySQL))
	}
}

// redecodeHooks says, for each row change of txs in order, whether its
// rows event has a Redecode hook, and clears the hooks.
func redecodeHooks(txs []*txn.Txn) []bool {
	var has []bool
	for _, tx := range txs {
		for _, c := range tx.Changes {
			if c.Row != nil && c.Row.Event != nil {
				has = append(has, c.Row.Event.Redecode != nil)
				c.Row.Event.Redecode = nil
			}
		}
	}
	return has
}

// ownRowsEvents counts the rows events of b that decodeRows decodes, up
// to the first error.
func ownRowsEvents(t *testing.T, b []byte) int {
	t.Helper()
	g, n := newGuard(Limits{}), 0
	for _, e := range eventsOf(t, b) {
		raw := append([]byte(nil), b[e.off:e.off+e.size]...)
		if e.typ == replication.FORMAT_DESCRIPTION_EVENT {
			raw[17] &^= logEventBinlogInUse
		}
		ev, err := g.decode(raw)
		if err != nil {
			break
		}
		if _, ok := ev.Event.(*rowsEvent); ok {
			n++
		}
	}
	return n
}

// Synthetic MySQL 8.4 binlogs (version 2 rows events) of two tables of
// schema d: f (id INT, c VARCHAR(20)), whose rows prepl decodes, and s
// (id INT, e ENUM), whose rows go-mysql decodes.
var (
	fastCols = []byte{txn.TypeLong, txn.TypeVarchar}
	fastMeta = []byte{20, 0}
	slowCols = []byte{txn.TypeLong, txn.TypeString}
	slowMeta = []byte{txn.TypeEnum, 1}
)

func (f *mysql84File) tableMap(id uint16, name string, types, meta []byte) {
	b := binary.LittleEndian.AppendUint16(nil, id)
	b = append(b, 0, 0, 0, 0, 1, 0, 1, 'd', 0, byte(len(name)))
	b = append(append(b, name...), 0, byte(len(types)))
	b = append(append(b, types...), byte(len(meta)))
	b = append(append(b, meta...), 0b11) // both columns nullable
	f.event(byte(replication.TABLE_MAP_EVENT), b)
}

// rows appends a rows event of two columns, all present, with extra
// data extra (version 2) and the row images images.
func (f *mysql84File) rows(typ replication.EventType, id uint16, end bool, extra []byte, images ...[]byte) {
	b := binary.LittleEndian.AppendUint16(nil, id)
	b = append(b, 0, 0, 0, 0)
	var flags uint16
	if end {
		flags = replication.RowsEventStmtEndFlag
	}
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint16(b, uint16(2+len(extra)))
	b = append(append(b, extra...), 2, 0b11)
	if isUpdateRows(typ) {
		b = append(b, 0b11)
	}
	for _, im := range images {
		b = append(b, im...)
	}
	f.event(byte(typ), b)
}

func fastRow(id uint32, c string) []byte {
	b := binary.LittleEndian.AppendUint32([]byte{0}, id)
	return append(append(b, byte(len(c))), c...)
}

func slowRow(id uint32, e byte) []byte {
	return append(binary.LittleEndian.AppendUint32([]byte{0}, id), e)
}

func (f *mysql84File) begin()  { f.event(byte(replication.QUERY_EVENT), queryEventBody("d", "BEGIN")) }
func (f *mysql84File) commit() { f.event(byte(replication.XID_EVENT), make([]byte, 8)) }

// mixedFile has statements on f and s alone and together, in either
// order, each statement repeating its table maps; ids says the table ids
// of f and s.
func mixedFile(fid, sid uint16) []byte {
	f := newMySQL84File()
	for i := range uint32(3) {
		f.begin()
		f.tableMap(fid, "f", fastCols, fastMeta)
		f.rows(replication.WRITE_ROWS_EVENTv2, fid, true, nil, fastRow(i, "a"), fastRow(i+10, "bb"))
		f.tableMap(fid, "f", fastCols, fastMeta)
		f.tableMap(sid, "s", slowCols, slowMeta)
		f.rows(replication.UPDATE_ROWS_EVENTv2, fid, false, nil, fastRow(i, "a"), fastRow(i, "c"))
		f.rows(replication.WRITE_ROWS_EVENTv2, sid, true, nil, slowRow(i, 1))
		f.tableMap(sid, "s", slowCols, slowMeta)
		f.tableMap(fid, "f", fastCols, fastMeta)
		f.rows(replication.DELETE_ROWS_EVENTv2, sid, false, nil, slowRow(i, 1))
		f.rows(replication.DELETE_ROWS_EVENTv2, fid, true, nil, fastRow(i+10, "bb"))
		f.commit()
	}
	return f.b
}

// TestDecodeEventsMatchesGoMySQL: binlogs decode to the same
// transactions, and fail with the same error, with prepl's own decoding
// of repeated table maps and rows events as with go-mysql's of every
// event.
func TestDecodeEventsMatchesGoMySQL(t *testing.T) {
	seed := func(path string) func() []byte {
		return func() []byte { return readSeed(t, path) }
	}
	file := func(build func(f *mysql84File)) func() []byte {
		return func() []byte {
			f := newMySQL84File()
			build(f)
			return f.b
		}
	}
	cases := []struct {
		name  string
		bytes func() []byte
		own   int // rows events decoded by decodeRows
	}{
		{"MariaDB seed, CRC32 (no fast table)", seed("testdata/binlog/crc32.000001"), 0},
		{"MariaDB seed, no checksums", seed("testdata/binlog/nochecksum.000001"), 0},
		{"MariaDB oltp, version 1 rows events", seed("testdata/binlog/oltp.000001"), 12},
		{"fast and slow tables in one statement", func() []byte { return mixedFile(100, 101) }, 9},
		{"the same with the slow table first", func() []byte { return mixedFile(101, 100) }, 9},
		{"version 2 extra data (a partition)", file(func(f *mysql84File) {
			f.begin()
			f.tableMap(100, "f", fastCols, fastMeta)
			f.rows(replication.WRITE_ROWS_EVENTv2, 100, true, []byte{1, 3, 0}, fastRow(1, "a"))
			f.tableMap(100, "f", fastCols, fastMeta)
			f.rows(replication.UPDATE_ROWS_EVENTv2, 100, true, []byte{1, 3, 0, 4, 0}, fastRow(1, "a"), fastRow(1, "b"))
			f.commit()
		}), 0},
		{"a table id given to another table", file(func(f *mysql84File) {
			f.begin()
			f.tableMap(100, "s", slowCols, slowMeta)
			f.rows(replication.WRITE_ROWS_EVENTv2, 100, true, nil, slowRow(1, 2))
			f.tableMap(100, "f", fastCols, fastMeta)
			f.rows(replication.WRITE_ROWS_EVENTv2, 100, true, nil, fastRow(1, "a"))
			f.tableMap(100, "s", slowCols, slowMeta)
			f.rows(replication.WRITE_ROWS_EVENTv2, 100, true, nil, slowRow(2, 1))
			f.commit()
		}), 1},
		{"a row image past the event's end", file(func(f *mysql84File) {
			f.begin()
			f.tableMap(100, "f", fastCols, fastMeta)
			f.rows(replication.WRITE_ROWS_EVENTv2, 100, true, nil, fastRow(1, "a")[:6])
			f.commit()
		}), 0},
		{"an odd number of update images", file(func(f *mysql84File) {
			f.begin()
			f.tableMap(100, "f", fastCols, fastMeta)
			f.rows(replication.UPDATE_ROWS_EVENTv2, 100, true, nil, fastRow(1, "a"), fastRow(1, "b"), fastRow(2, "c"))
			f.commit()
		}), 0},
		{"a rows event without rows", file(func(f *mysql84File) {
			f.begin()
			f.tableMap(100, "f", fastCols, fastMeta)
			f.rows(replication.WRITE_ROWS_EVENTv2, 100, true, nil)
			f.commit()
		}), 1},
		{"more slow tables than go-mysql's parser keeps", func() []byte { return manySlowTables(maxParsed + 10) }, maxParsed + 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.bytes()
			sameDecoding(t, b)
			if n := ownRowsEvents(t, b); n != c.own {
				t.Errorf("%d rows events decoded by decodeRows, want %d", n, c.own)
			}
		})
	}
	for _, name := range []string{"mysql-bin.checksum-crc32", "mysql-bin.checksum-none", "mysql-bin.compressed", "mysql-bin.aurora-padding"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(fixtures + name)
			if err != nil {
				t.Skip(err)
			}
			sameDecoding(t, b)
		})
	}
}

// manySlowTables has n transactions, each of a statement on a table of
// its own that go-mysql decodes, and on f. Every statement ends with a
// rows event decodeRows decodes, so go-mysql's parser never sees a
// statement end and drops the table maps it was given.
func manySlowTables(n int) []byte {
	f := newMySQL84File()
	for i := range uint16(n) {
		f.begin()
		f.tableMap(1000+i, "s", slowCols, slowMeta)
		f.tableMap(100, "f", fastCols, fastMeta)
		f.rows(replication.WRITE_ROWS_EVENTv2, 1000+i, false, nil, slowRow(uint32(i), 1))
		f.rows(replication.WRITE_ROWS_EVENTv2, 100, true, nil, fastRow(uint32(i), "a"))
		f.commit()
	}
	return f.b
}

// TestParserTablesBounded: go-mysql's parser, which decodeRows keeps from
// seeing the end of statements, holds at most maxParsed table maps.
func TestParserTablesBounded(t *testing.T) {
	b := manySlowTables(3 * maxParsed)
	g := newGuard(Limits{})
	for _, e := range eventsOf(t, b) {
		if _, err := g.decode(b[e.off : e.off+e.size]); err != nil {
			t.Fatal(err)
		}
		if len(g.parsed) > maxParsed {
			t.Fatalf("go-mysql's parser holds %d table maps", len(g.parsed))
		}
	}
}

// FuzzDecodeEvents: bytes, as a binlog file (checksums recomputed),
// decode to the same transactions and the same error with prepl's own
// decoding of table maps and rows events as with go-mysql's.
func FuzzDecodeEvents(f *testing.F) {
	for _, s := range append(seedBinlogs, "testdata/binlog/oltp.000001") {
		b := readSeed(f, s)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add(mixedFile(100, 101))
	f.Add(mixedFile(101, 100))
	f.Fuzz(func(t *testing.T, b []byte) { sameDecoding(t, fixCRC(b)) })
}

// TestSlowRowsStopAtEventEnd: a value that runs past its rows event's
// row data is damage on go-mysql's path too (a table with an ENUM, so
// go-mysql decodes its rows). It used to read on into the event's
// checksum and decode a value made of it. Both decodings refuse it.
func TestSlowRowsStopAtEventEnd(t *testing.T) {
	f := newMySQL84File()
	f.begin()
	// d.m (e ENUM, c VARCHAR(20)): the row says c holds 4 bytes and
	// holds none; the event's 4 checksum bytes follow.
	f.tableMap(7, "m", []byte{txn.TypeString, txn.TypeVarchar}, []byte{txn.TypeEnum, 1, 20, 0})
	f.rows(replication.WRITE_ROWS_EVENTv2, 7, true, nil, []byte{0, 1, 4})
	f.commit()
	for _, own := range []bool{true, false} {
		decodeOwn = own
		txns, err := decodeBytes("binlog.000001", f.b, Limits{})
		if err == nil || !strings.Contains(err.Error(), "corrupted") {
			t.Errorf("decodeOwn %v: %d transactions, error %v; want the rows event refused as corrupted", own, len(txns), err)
		}
	}
	decodeOwn = true
}
