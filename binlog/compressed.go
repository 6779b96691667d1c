package binlog

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// MariaDB compressed columns (VARCHAR, TEXT or BLOB ... COMPRESSED, since
// 10.3) have binlog types of their own in the table map, 141 and 140,
// with the metadata of VARCHAR (2 bytes: the length in bytes) and BLOB
// (1 byte: the width of the length), and their row values are what the
// column stores: a header byte, then the value either as it is or
// zlib-compressed (sql/field.cc, compress_zlib):
//
//   - header 0: the value follows as it is (too short to gain);
//   - header 0x80 | n | w: n (bits 0-2) bytes of the value's length,
//     big-endian, then a zlib stream, or a raw deflate stream when w
//     (0x08) is set (column_compression_zlib_wrap=OFF, the default).
//
// go-mysql knows neither type: it reads no metadata for them, so every
// later column's metadata is misplaced. prepl reads the table map's
// metadata itself, gives go-mysql (and its own rows decoding) the plain
// types, and inflates the values as it reads the rows: a target applies
// them as SQL, its own column compresses them again. A BINLOG statement
// (DESIGN.md, tables with triggers) carries the events as read.
const (
	typeVarcharCompressed = 141
	typeBlobCompressed    = 140
)

// hasCompressed reports whether a table map's column types include a
// compressed column.
func hasCompressed(types []byte) bool {
	return bytes.IndexByte(types, typeVarcharCompressed) >= 0 || bytes.IndexByte(types, typeBlobCompressed) >= 0
}

// plainCompressed gives e, which go-mysql decoded from raw (a table map
// event with its header), the plain types and the right metadata of its
// compressed columns, so that go-mysql decodes its rows events (the
// assembler finds the compressed columns in raw: compressedColumns).
func plainCompressed(e *replication.TableMapEvent, raw []byte) error {
	if !hasCompressed(e.ColumnType) {
		return nil
	}
	meta, err := tableMapMeta(raw, e)
	if err != nil {
		return err
	}
	types := bytes.Clone(e.ColumnType) // e's is a slice of raw, which BINLOG statements send as read
	for i, t := range types {
		switch t {
		case typeVarcharCompressed:
			types[i] = mysql.MYSQL_TYPE_VARCHAR
		case typeBlobCompressed:
			types[i] = mysql.MYSQL_TYPE_BLOB
		}
	}
	e.ColumnType, e.ColumnMeta = types, meta
	return nil
}

// rawColumnTypes is the column types of table map raw (with its
// header), whose names e's fields were decoded from, as the event holds
// them.
func rawColumnTypes(raw []byte, e *replication.TableMapEvent) (types []byte, end int, err error) {
	// Post-header: the table id (6 bytes) and flags (2); then the schema
	// and the table, each a length byte, the name and a NUL; the column
	// count and types.
	pos := replication.EventHeaderSize + 6 + 2 + 1 + len(e.Schema) + 1 + 1 + len(e.Table) + 1
	if pos >= len(raw) {
		return nil, 0, errors.New("table map shorter than its names")
	}
	count, _, n := mysql.LengthEncodedInt(raw[pos:])
	pos += n
	if n == 0 || count != uint64(len(e.ColumnType)) || pos+len(e.ColumnType) > len(raw) {
		return nil, 0, errors.New("table map column types do not fit the event")
	}
	return raw[pos : pos+len(e.ColumnType)], pos + len(e.ColumnType), nil
}

// compressedColumns reports the compressed columns of table map raw,
// decoded as e (nil when it has none).
func compressedColumns(raw []byte, e *replication.TableMapEvent) ([]bool, error) {
	types, _, err := rawColumnTypes(raw, e)
	if err != nil || !hasCompressed(types) {
		return nil, err
	}
	c := make([]bool, len(types))
	for i, t := range types {
		c[i] = t == typeVarcharCompressed || t == typeBlobCompressed
	}
	return c, nil
}

// tableMapMeta reads the column metadata of table map raw, whose header
// e's fields were decoded from, compressed types included.
func tableMapMeta(raw []byte, e *replication.TableMapEvent) ([]uint16, error) {
	_, pos, err := rawColumnTypes(raw, e)
	if err != nil {
		return nil, err
	}
	block, _, _, err := mysql.LengthEncodedString(raw[pos:])
	if err != nil {
		return nil, fmt.Errorf("table map column metadata: %v", err)
	}
	meta := make([]uint16, len(e.ColumnType))
	p := 0
	for i, t := range e.ColumnType {
		w := metaWidth(t)
		if p+w > len(block) {
			return nil, fmt.Errorf("table map column metadata of %d bytes, its column types need more", len(block))
		}
		switch w {
		case 1:
			meta[i] = uint16(block[p])
		case 2:
			if t == mysql.MYSQL_TYPE_STRING || t == mysql.MYSQL_TYPE_NEWDECIMAL {
				meta[i] = uint16(block[p])<<8 | uint16(block[p+1])
			} else {
				meta[i] = binary.LittleEndian.Uint16(block[p:])
			}
		}
		p += w
	}
	return meta, nil
}

// metaWidth is the bytes of table map metadata of a column of binlog
// type t, as go-mysql's TableMapEvent.decodeMeta reads them, and the two
// compressed types.
func metaWidth(t byte) int {
	switch t {
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_VARCHAR,
		mysql.MYSQL_TYPE_BIT, typeVarcharCompressed:
		return 2
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_DOUBLE, mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_GEOMETRY,
		mysql.MYSQL_TYPE_JSON, mysql.MYSQL_TYPE_TIME2, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2,
		typeBlobCompressed:
		return 1
	}
	return 0
}

// inflate returns the value a compressed column stored as b, at most
// most bytes long.
func inflate(b []byte, most int64) ([]byte, error) {
	if len(b) == 0 {
		return b, nil // the empty value is stored without a header
	}
	h := b[0]
	if h&0x80 == 0 {
		if h != 0 {
			return nil, fmt.Errorf("compressed column value with header byte %#02x, neither 0 nor zlib (0x80)", h)
		}
		return b[1:], nil
	}
	n := int(h & 0x07)
	if n == 0 || n > 4 || len(b) < 1+n {
		return nil, fmt.Errorf("compressed column value with header byte %#02x: %d bytes of length in a value of %d", h, n, len(b))
	}
	var size int64
	for _, c := range b[1 : 1+n] {
		size = size<<8 | int64(c)
	}
	if size > most {
		return nil, fmt.Errorf("compressed column value says it inflates to %d bytes, more than its column or one event holds "+
			"(%d; an event's values are bounded by --max-event-size)", size, most)
	}
	var r io.ReadCloser
	if h&0x08 != 0 {
		r = flate.NewReader(bytes.NewReader(b[1+n:]))
	} else {
		z, err := zlib.NewReader(bytes.NewReader(b[1+n:]))
		if err != nil {
			return nil, fmt.Errorf("compressed column value: %v", err)
		}
		r = z
	}
	defer r.Close()
	// Read to what the value gives, not to what its header claims: a
	// damaged header must not allocate a gigabyte.
	out, err := io.ReadAll(io.LimitReader(r, size+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("compressed column value of %d bytes does not inflate: %v", len(b), err)
	case int64(len(out)) != size:
		return nil, fmt.Errorf("compressed column value of %d bytes inflates to %d bytes, its header says %d", len(b), len(out), size)
	}
	return out, nil
}

// compressedMost is the longest value a compressed column of plain type
// typ (metadata meta) holds, and at most limit (what is left of
// --max-event-size: no statement could send a longer one).
func compressedMost(typ byte, meta uint16, limit int64) int64 {
	most := int64(1)<<32 - 1
	switch {
	case typ == txn.TypeVarchar:
		most = int64(meta)
	case meta >= 1 && meta <= 3:
		most = int64(1)<<(8*meta) - 1
	}
	return min(most, limit)
}
