package binlog

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// compressedValue is a compressed column's stored form of v, as
// MariaDB's compress_zlib writes it: raw deflate, or zlib when wrap.
func compressedValue(t *testing.T, v []byte, wrap bool) []byte {
	var buf bytes.Buffer
	h := byte(0x80 | 2)
	if wrap {
		w := zlib.NewWriter(&buf)
		w.Write(v)
		w.Close()
	} else {
		h |= 0x08
		w, err := flate.NewWriter(&buf, flate.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(v)
		w.Close()
	}
	return append([]byte{h, byte(len(v) >> 8), byte(len(v))}, buf.Bytes()...)
}

// TestCompressedColumns: a table map of one compressed column and a row
// of it, through the whole decoding (go-mysql's and prepl's), as a
// MariaDB 10.3+ source writes them: the value read is the column's
// value, inflated; a damaged one is an error naming the event, never a
// value that differs.
func TestCompressedColumns(t *testing.T) {
	fde := seedFDE(t)
	long := []byte(strings.Repeat("compressed column ", 40))
	varchar := func(stored []byte) []byte { // 2 length bytes: a column of 800 bytes
		return append([]byte{byte(len(stored)), byte(len(stored) >> 8)}, stored...)
	}
	blob := func(stored []byte) []byte { // BLOB: 2 length bytes
		return append([]byte{byte(len(stored)), byte(len(stored) >> 8)}, stored...)
	}
	short := func(stored []byte) []byte { return append([]byte{byte(len(stored))}, stored...) } // VARCHAR(20)
	bad := compressedValue(t, long, false)
	bad[2]++ // the header's length, one more than the stream gives
	for _, c := range []struct {
		name    string
		typ     byte
		meta    []byte
		v       []byte
		want    []byte
		wantErr string
		lim     Limits
	}{
		{"varchar stored as it is", typeVarcharCompressed, []byte{0x20, 3}, varchar([]byte("\x00abc")), []byte("abc"), "", Limits{}},
		{"varchar raw deflate", typeVarcharCompressed, []byte{0x20, 3}, varchar(compressedValue(t, long, false)), long, "", Limits{}},
		{"varchar zlib", typeVarcharCompressed, []byte{0x20, 3}, varchar(compressedValue(t, long, true)), long, "", Limits{}},
		{"varchar empty", typeVarcharCompressed, []byte{0x20, 3}, varchar(nil), []byte{}, "", Limits{}},
		{"blob raw deflate", typeBlobCompressed, []byte{2}, blob(compressedValue(t, long, false)), long, "", Limits{}},
		{"blob stored", typeBlobCompressed, []byte{2}, blob([]byte{0, 0xde, 0xad}), []byte{0xde, 0xad}, "", Limits{}},
		{"length one more than the stream", typeBlobCompressed, []byte{2}, blob(bad), nil, "its header says", Limits{}},
		{"longer than the column", typeVarcharCompressed, []byte{20, 0}, short([]byte{0x81, 200, 0}), nil, "more than its column", Limits{}},
		{"unknown header", typeBlobCompressed, []byte{2}, blob([]byte{0x10, 1, 2}), nil, "header byte", Limits{}},
		{"no length bytes", typeBlobCompressed, []byte{2}, blob([]byte{0x80}), nil, "bytes of length", Limits{}},
		{"truncated stream", typeBlobCompressed, []byte{2}, blob(compressedValue(t, long, true)[:12]), nil, "does not inflate", Limits{}},
		// Every event, and what its rows decode to, is under
		// --max-event-size 2000, but the value inflates to 60,000 bytes.
		{"inflates past --max-event-size", typeBlobCompressed, []byte{2}, blob(compressedValue(t, bytes.Repeat([]byte{'a'}, 60000), false)), nil,
			"(2000; an event's values are bounded by --max-event-size)", Limits{MaxEvent: 2000}},
	} {
		t.Run(c.name, func(t *testing.T) {
			txns, err := decodeBytes("c.000001", valueEvents(fde, c.typ, c.meta, false, c.v), c.lim)
			if c.wantErr != "" {
				var fe *FormatError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "d.t column 1") {
					t.Fatalf("err = %v, want a *FormatError naming d.t column 1: %q", err, c.wantErr)
				}
				return
			}
			if err != nil || len(txns) != 1 || len(rowsOf(txns[0])) != 1 {
				t.Fatalf("decode: %d transactions, %v", len(txns), err)
			}
			got, _ := rowsOf(txns[0])[0].After[0].([]byte)
			if !bytes.Equal(got, c.want) {
				t.Fatalf("value = %q, want %q", got, c.want)
			}
			if want := int64(len(c.want)); txns[0].Inflated != want {
				t.Errorf("Inflated = %d, want %d", txns[0].Inflated, want)
			}
		})
	}
}

// TestCompressedMetadata: the metadata of the columns after a compressed
// one, which go-mysql misplaces, is read where the table map has it.
func TestCompressedMetadata(t *testing.T) {
	// id INT, b BLOB COMPRESSED (1 byte), v VARCHAR(50) COMPRESSED (2),
	// d DECIMAL(10,3) (2), at DATETIME(6) (1).
	types := []byte{txn.TypeLong, typeBlobCompressed, typeVarcharCompressed, txn.TypeNewDecimal, txn.TypeDatetime2}
	meta := []byte{2, 200, 0, 10, 3, 6}
	tm := []byte{7, 0, 0, 0, 0, 0, 0, 0, 1, 'd', 0, 1, 't', 0, byte(len(types))}
	tm = append(append(tm, types...), byte(len(meta)))
	tm = append(append(tm, meta...), 0x1f)
	g := newGuard(Limits{})
	if _, err := g.p.Parse(seedFDE(t)); err != nil {
		t.Fatal(err)
	}
	ev, err := g.parse(rawEvent(replication.TABLE_MAP_EVENT, tm))
	if err != nil {
		t.Fatal(err)
	}
	e := ev.Event.(*replication.TableMapEvent)
	wantTypes := []byte{txn.TypeLong, txn.TypeBlob, txn.TypeVarchar, txn.TypeNewDecimal, txn.TypeDatetime2}
	wantMeta := []uint16{0, 2, 200, 10<<8 | 3, 6}
	if !bytes.Equal(e.ColumnType, wantTypes) || !slices.Equal(e.ColumnMeta, wantMeta) {
		t.Fatalf("types %v meta %v, want %v %v", e.ColumnType, e.ColumnMeta, wantTypes, wantMeta)
	}
	// The metadata block one byte short: an error, not a guess.
	short := slices.Clone(tm)
	short[15+len(types)]--
	short = append(short[:15+len(types)+len(meta)], short[15+len(types)+len(meta)+1:]...)
	if _, err := g.parse(rawEvent(replication.TABLE_MAP_EVENT, short)); err == nil || !strings.Contains(err.Error(), "need more") {
		t.Fatalf("short metadata: err = %v", err)
	}
}
