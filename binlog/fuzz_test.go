package binlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// Decoding any input allocates at most decodeAllocCap(len(input)) bytes
// in all: 1 MiB (the read buffer, the parser), plus 1 KiB per input byte.
// The worst case is a table of one column and rows of one byte (a NULL):
// each row costs go-mysql's row and skip slices and prepl's RowChange,
// images and Change, about 700 bytes (found by FuzzDecodeValue). Wider
// sparse rows are bounded by the guard (decodedRowsBytes).
func decodeAllocCap(n int) uint64 { return 1<<20 + 1024*uint64(n) }

// fuzzDecode decodes b as a binlog file and fails on an error that is not
// a *FormatError or on an allocation past the cap. A panic fails by itself.
func fuzzDecode(t *testing.T, b []byte) {
	var err error
	alloc := allocated(func() { _, err = decodeBytes("fuzz.000001", b, Limits{}) })
	var fe *FormatError
	if err != nil && !errors.As(err, &fe) {
		t.Fatalf("error is not a *FormatError: %v", err)
	}
	if fe != nil && fe.File != "fuzz.000001" {
		t.Fatalf("error names file %q: %v", fe.File, err)
	}
	if c := decodeAllocCap(len(b)); alloc > c {
		t.Fatalf("decoding %d bytes allocated %d, more than the cap %d", len(b), alloc, c)
	}
}

func addSeeds(f *testing.F) {
	for _, s := range seedBinlogs {
		b := readSeed(f, s)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
}

// FuzzReadFile: bytes, as a binlog file, to transactions. Must never
// panic, never allocate past the cap; errors are *FormatErrors.
func FuzzReadFile(f *testing.F) {
	addSeeds(f)
	f.Fuzz(fuzzDecode)
}

// FuzzReadFileFixedCRC is FuzzReadFile with the checksum of every event
// recomputed after mutation, so that mutations reach the event decoders
// instead of stopping at a checksum mismatch (as damage written by the
// server itself, or a binlog with binlog_checksum=NONE, would).
func FuzzReadFileFixedCRC(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzDecode(t, fixCRC(b)) })
}

// valueEvents builds a binlog (the format description of the seed without
// checksums) holding one transaction: a table map of one column of type
// typ with metadata meta, and a rows event with one row whose value is the
// bytes v, without checksums.
func valueEvents(fde []byte, typ byte, meta []byte, unsigned bool, v []byte) []byte {
	event := func(et replication.EventType, body []byte) []byte {
		h := make([]byte, replication.EventHeaderSize)
		h[4] = byte(et)
		binary.LittleEndian.PutUint32(h[5:], 1)
		binary.LittleEndian.PutUint32(h[9:], uint32(len(h)+len(body)))
		return append(h, body...)
	}
	tm := []byte{7, 0, 0, 0, 0, 0, 0, 0, 1, 'd', 0, 1, 't', 0, 1, typ}
	tm = append(tm, byte(len(meta)))
	tm = append(tm, meta...)
	tm = append(tm, 1) // nullable
	if unsigned {
		tm = append(tm, replication.TABLE_MAP_OPT_META_SIGNEDNESS, 1, 0x80)
	}
	rows := []byte{7, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0} // table 7, STMT_END, 1 column, bitmap, null bitmap
	rows = append(rows, v...)
	out := append([]byte(nil), replication.BinLogFileHeader...)
	out = append(out, fde...)
	out = append(out, event(replication.QUERY_EVENT, queryBody("BEGIN"))...)
	out = append(out, event(replication.TABLE_MAP_EVENT, tm)...)
	out = append(out, event(replication.WRITE_ROWS_EVENTv1, rows)...)
	out = append(out, event(replication.XID_EVENT, make([]byte, 8))...)
	// End positions, as a server writes them.
	for off := 4; off < len(out); {
		n := int(binary.LittleEndian.Uint32(out[off+9:]))
		binary.LittleEndian.PutUint32(out[off+13:], uint32(off+n))
		off += n
	}
	return out
}

func queryBody(sql string) []byte {
	b := make([]byte, 13) // thread id, exec time, schema length 0, error code, status vars length 0
	b = append(b, 0)      // empty schema, NUL
	return append(b, sql...)
}

// seedFDE is the format description event of the seed without checksums.
func seedFDE(tb testing.TB) []byte {
	b := readSeed(tb, seedBinlogs[1])
	n := binary.LittleEndian.Uint32(b[4+9:])
	return b[4 : 4+n]
}

// FuzzDecodeValue: one column value of any type, metadata and bytes,
// through go-mysql's value decoding and prepl's normalization. Must never
// panic or allocate past the cap; a decoded value has a type of the txn
// model.
func FuzzDecodeValue(f *testing.F) {
	fde := seedFDE(f)
	for _, c := range []struct {
		typ  byte
		meta []byte
		v    []byte
	}{
		{txn.TypeLong, nil, []byte{1, 2, 3, 4}},
		{txn.TypeLongLong, nil, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{txn.TypeVarchar, []byte{20, 0}, []byte{3, 'a', 'b', 'c'}},
		{txn.TypeString, []byte{txn.TypeEnum, 1}, []byte{2}},
		{txn.TypeString, []byte{txn.TypeSet, 1}, []byte{3}},
		{txn.TypeNewDecimal, []byte{10, 2}, []byte{0x80, 0, 0, 0, 12, 34}},
		{txn.TypeBlob, []byte{2}, []byte{2, 0, 0xde, 0xad}},
		{txn.TypeJSON, []byte{4}, []byte{3, 0, 0, 0, 4, 0, 1}},
		{txn.TypeDatetime2, []byte{3}, []byte{0x99, 0xb2, 0x7a, 0xc0, 0x00, 0x00, 0x7b}},
		{txn.TypeTime2, []byte{2}, []byte{0x80, 0x10, 0x83, 0x2d}},
		{txn.TypeBit, []byte{5, 0}, []byte{0x15}},
		{txn.TypeDouble, []byte{8}, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}},
		{txn.TypeYear, nil, []byte{124}},
		{typeVarcharCompressed, []byte{20, 0}, []byte{4, 0, 'a', 'b', 'c'}},
		{typeBlobCompressed, []byte{2}, []byte{9, 0, 0x8a, 0, 3, 0x4b, 0x4c, 0x4a, 0x06, 0}}, // "abc" raw deflate
	} {
		f.Add(c.typ, c.meta, false, c.v)
		f.Add(c.typ, c.meta, true, c.v)
	}
	f.Fuzz(func(t *testing.T, typ byte, meta []byte, unsigned bool, v []byte) {
		b := valueEvents(fde, typ, meta, unsigned, v)
		var txns []*txn.Txn
		var err error
		alloc := allocated(func() { txns, err = decodeBytes("fuzz.000001", b, Limits{}) })
		var fe *FormatError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("error is not a *FormatError: %v", err)
		}
		if c := decodeAllocCap(len(b)); alloc > c {
			t.Fatalf("decoding %d bytes allocated %d, more than the cap %d", len(b), alloc, c)
		}
		for _, tx := range txns {
			for _, r := range rowsOf(tx) {
				for _, val := range r.After {
					checkModelValue(t, val)
				}
			}
		}
	})
}

// checkModelValue fails on a value whose type txn/value.go does not list.
func checkModelValue(t *testing.T, v txn.Value) {
	switch v.(type) {
	case nil, int64, float32, float64, []byte, txn.Decimal, txn.Bit, txn.Enum, txn.Set, txn.Temporal:
		return
	}
	t.Fatalf("decoded value %#v (%T) is not of the txn model", v, v)
}

// TestFuzzSeedsDecode: the seeds the fuzz targets start from are real
// binlogs that decode whole, so mutations start from deep inside the
// decoders; valueEvents builds a decodable transaction.
func TestFuzzSeedsDecode(t *testing.T) {
	for _, s := range seedBinlogs {
		txns, err := decodeBytes("seed", readSeed(t, s), Limits{})
		if err != nil || len(txns) < 5 {
			t.Errorf("%s: %d txns, %v", s, len(txns), err)
		}
	}
	b := valueEvents(seedFDE(t), txn.TypeVarchar, []byte{20, 0}, false, []byte{3, 'a', 'b', 'c'})
	txns, err := decodeBytes("value", b, Limits{})
	if err != nil || len(txns) != 1 || len(rowsOf(txns[0])) != 1 || !bytes.Equal(rowsOf(txns[0])[0].After[0].([]byte), []byte("abc")) {
		t.Fatalf("value transaction: %v %v", txns, err)
	}
}

// FuzzDecodeRowsFast: one column value of any type, metadata and bytes,
// decoded with decodeRowsFast and with go-mysql's decoding only: the same
// transactions, or an error both ways.
func FuzzDecodeRowsFast(f *testing.F) {
	fde := seedFDE(f)
	for _, c := range []struct {
		typ  byte
		meta []byte
		v    []byte
	}{
		{txn.TypeTiny, nil, []byte{0x80}},
		{txn.TypeShort, nil, []byte{0xff, 0x7f}},
		{txn.TypeInt24, nil, []byte{0xff, 0xff, 0x80}},
		{txn.TypeLong, nil, []byte{1, 2, 3, 0x84}},
		{txn.TypeLongLong, nil, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{txn.TypeYear, nil, []byte{0}},
		{txn.TypeFloat, []byte{4}, []byte{0, 0, 0xc0, 0x3f}},
		{txn.TypeDouble, []byte{8}, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}},
		{txn.TypeVarchar, []byte{20, 0}, []byte{3, 'a', 'b', 'c'}},
		{txn.TypeVarchar, []byte{0x2c, 1}, []byte{2, 0, 'a', 'b'}},
		{txn.TypeString, []byte{txn.TypeString, 3}, []byte{1, 'a'}},
		{txn.TypeString, []byte{0xee, 0x90}, []byte{1, 0, 'a'}},
		{txn.TypeBlob, []byte{2}, []byte{2, 0, 0xde, 0xad}},
		{txn.TypeBlob, []byte{4}, []byte{1, 0, 0, 0, 0xde}},
		{txn.TypeGeometry, []byte{4}, []byte{0, 0, 0, 0}},
		{txn.TypeNewDecimal, []byte{12, 2}, []byte{0x80, 0, 0, 0, 0x0c, 0x22}},                      // 12.34
		{txn.TypeNewDecimal, []byte{12, 2}, []byte{0x7f, 0xff, 0xff, 0xff, 0xf3, 0xdd}},             // -12.34
		{txn.TypeNewDecimal, []byte{19, 9}, []byte{0x80, 0, 0, 0, 0x01, 0x3b, 0x9a, 0xc9, 0xff}},    // a group of ten digits
		{txn.TypeNewDecimal, []byte{4, 4}, []byte{0x80, 0x27, 0x0f}},                                // 0.9999
		{txn.TypeNewDecimal, []byte{70, 2}, []byte{0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, // no server's metadata
		{txn.TypeDatetime2, []byte{0}, []byte{0x99, 0xb2, 0x3e, 0x86, 0x1b}},                        // 2024-02-15 08:06:27
		{txn.TypeDatetime2, []byte{6}, []byte{0x80, 0, 0, 0, 0, 0x0f, 0x42, 0x3f}},                  // zero date, .999999
		{txn.TypeDatetime2, []byte{2}, []byte{0x00, 0, 0, 0, 0, 0xff}},                              // below the offset
		{txn.TypeTimestamp2, []byte{3}, []byte{0x65, 0x5c, 0x8e, 0x00, 0x03, 0xe7}},
		{txn.TypeTimestamp2, []byte{0}, []byte{0, 0, 0, 0}},
		{txn.TypeDate, nil, []byte{0x42, 0xd0, 0x0f}},
		{txn.TypeDate, nil, []byte{0, 0, 0}},
	} {
		f.Add(c.typ, c.meta, false, c.v)
		f.Add(c.typ, c.meta, true, c.v)
	}
	f.Fuzz(func(t *testing.T, typ byte, meta []byte, unsigned bool, v []byte) {
		b := valueEvents(fde, typ, meta, unsigned, v)
		fast, errFast := decodeBytes("fuzz.000001", b, Limits{})
		decodeFast = false
		slow, errSlow := decodeBytes("fuzz.000001", b, Limits{})
		decodeFast = true
		if (errFast == nil) != (errSlow == nil) {
			t.Fatalf("decodeRowsFast: %v; go-mysql: %v", errFast, errSlow)
		}
		// A Redecode hook (old temporal columns) is a closure, which
		// DeepEqual never finds equal: compare whether each side has one.
		checkImages(t, fast)
		checkImages(t, slow)
		if rf, rs := takeRedecode(fast), takeRedecode(slow); !slices.Equal(rf, rs) {
			t.Fatalf("Redecode hooks differ: decodeRowsFast %v, go-mysql %v", rf, rs)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("decodeRowsFast and go-mysql differ:\n%s\n%s", describeAll(fast), describeAll(slow))
		}
	})
}

// takeRedecode clears the Redecode hook of every rows event of txs,
// reporting for each change whether its event had one.
func takeRedecode(txs []*txn.Txn) []bool {
	var had []bool
	for _, tx := range txs {
		for _, c := range tx.Changes {
			if c.Row == nil || c.Row.Event == nil {
				continue
			}
			had = append(had, c.Row.Event.Redecode != nil)
			c.Row.Event.Redecode = nil
		}
	}
	return had
}

func describeAll(txs []*txn.Txn) string {
	var s []string
	for _, tx := range txs {
		s = append(s, describe(tx))
	}
	return strings.Join(s, "\n")
}
