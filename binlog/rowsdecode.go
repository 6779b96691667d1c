package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// Row images of the common column types (integers, floats, strings,
// blobs, DECIMAL, DATE, DATETIME and TIMESTAMP) are decoded here,
// straight into the values of the txn model, rather than by go-mysql: go-mysql boxes every integer in the type of
// its width, builds a map of the table's signedness and a list of skipped
// columns for every image, and returns strings that the model then had to
// copy. Those were most of prepl's CPU per row. A table with a column of
// any other type (old temporal, TIME, ENUM, SET, BIT, JSON), and every
// compressed or partial-JSON rows event, is decoded by go-mysql as before.
//
// The values are those go-mysql's decoding gives after normalize (the
// fuzz target FuzzDecodeRowsFast compares the two); strings and blobs are
// slices of the event, which the transaction keeps anyway
// (txn.RowsEvent).

// decodeFast turns decodeRowsFast on; tests turn it off to compare.
var decodeFast = true

// fastType reports whether decodeRowsFast decodes a column of binlog
// type typ with metadata meta.
func fastType(typ byte, meta uint16) bool {
	switch typ {
	case txn.TypeTiny, txn.TypeShort, txn.TypeInt24, txn.TypeLong, txn.TypeLongLong, txn.TypeYear,
		txn.TypeFloat, txn.TypeDouble, txn.TypeVarchar, txn.TypeVarString, txn.TypeBlob, txn.TypeGeometry:
		return true
	case txn.TypeString:
		_, rt := txn.StringLength(meta)
		return rt == txn.TypeString
	case txn.TypeNewDecimal:
		// Metadata a server writes: go-mysql panics on the others.
		prec, scale := int(meta>>8), int(meta&0xff)
		return prec >= 1 && prec <= maxDecimalDigits && scale <= prec
	case txn.TypeDatetime2, txn.TypeTimestamp2:
		return meta <= 6
	case txn.TypeDate:
		return true
	}
	return false
}

// maxDecimalDigits is the most digits a DECIMAL column has (MySQL and
// MariaDB: 65).
const maxDecimalDigits = 65

// fastRows reports whether the rows event e of type typ is decoded by
// decodeRowsFast: version 1 and 2 events, not compressed, of a table of
// fastType columns. (go-mysql reads version 0 updates as one image each.)
func fastRows(e *replication.RowsEvent, typ replication.EventType) bool {
	switch typ {
	case replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1,
		replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2:
		return fastTable(e.Table)
	}
	return false
}

// fastTable reports whether every column of the table map tm is of a
// fastType.
func fastTable(tm *replication.TableMapEvent) bool {
	if len(tm.ColumnMeta) != len(tm.ColumnType) {
		return false
	}
	for i, typ := range tm.ColumnType {
		if !fastType(typ, tm.ColumnMeta[i]) {
			return false
		}
	}
	return true
}

var errRowPastEnd = errors.New("a row image runs past the event's end")

// errNotFinite: MySQL and MariaDB store no NaN or infinity in a FLOAT or
// DOUBLE column (they refuse it, or store the largest value), so such a
// value in a row image is damage. Applied, it would be rendered as text
// the target cannot read (MySQL) or store what the source never had
// (PostgreSQL's float types take NaN and Infinity).
var errNotFinite = errors.New("a FLOAT or DOUBLE value that is NaN or infinite, which MySQL and MariaDB never store")

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// decodeRowsFast decodes the row images of e from data[pos:] into
// e.Rows, as go-mysql's DecodeData would with normalize applied. The
// caller checked fastRows.
func decodeRowsFast(e *replication.RowsEvent, data []byte, pos int, update bool) error {
	images := 1
	if update {
		images = 2
	}
	n := images * len(e.Table.ColumnType)
	slabs := newValueSlabs(0, n)
	var err error
	e.Rows, _, err = appendRows(make([][]any, 0, images), nil, e.Table, e.ColumnBitmap1, e.ColumnBitmap2, data, pos, update, &slabs)
	return err
}

// appendRows appends the row images at data[pos:] of a table of fastType
// columns to rows, two per row for an update (column bitmaps bitmap1 and
// bitmap2), one for the others (bitmap1). With raw non-nil, it appends
// each image's bytes too (null bitmap and values, a slice of data), one
// per row of rows.
func appendRows(rows [][]any, raw [][]byte, tm *replication.TableMapEvent, bitmap1, bitmap2, data []byte, pos int, update bool, slabs *valueSlabs) ([][]any, [][]byte, error) {
	n := len(tm.ColumnType)
	images := 1
	if update {
		images = 2
	}
	for pos < len(data) {
		vals := slabs.rows.take(images * n) // the row's images, together
		var err error
		for i := range images {
			bitmap := bitmap1
			if i == 1 {
				bitmap = bitmap2
			}
			row := vals[i*n : (i+1)*n : (i+1)*n]
			start := pos
			if pos, err = decodeImage(tm, row, bitmap, data, pos, slabs); err != nil {
				return rows, raw, err
			}
			rows = append(rows, row)
			if raw != nil {
				raw = append(raw, data[start:pos:pos])
			}
		}
	}
	return rows, raw, nil
}

// decodeImage decodes the row image at data[pos:] with column bitmap
// bitmap into row and returns the position after it.
func decodeImage(tm *replication.TableMapEvent, row []any, bitmap, data []byte, pos int, slabs *valueSlabs) (int, error) {
	n := len(row)
	nulls := (bitsSet(bitmap, n) + 7) / 8
	if nulls > len(data)-pos {
		return 0, fmt.Errorf("%s.%s: %w", tm.Schema, tm.Table, errRowPastEnd)
	}
	nullBitmap := data[pos : pos+nulls]
	pos += nulls
	ni := 0 // index in nullBitmap: one bit per present column
	for c := range n {
		if bitmap[c>>3]&(1<<(c&7)) == 0 {
			continue
		}
		null := nullBitmap[ni>>3]&(1<<(ni&7)) != 0
		ni++
		if null {
			continue
		}
		v, size, err := decodeValue(tm.ColumnType[c], tm.ColumnMeta[c], data[pos:], slabs)
		if err != nil {
			// Named as the go-mysql path names it (assemble.go), so a
			// DBA reads the same error whichever path decoded the row.
			return 0, fmt.Errorf("%s.%s column %d: %w", tm.Schema, tm.Table, c+1, err)
		}
		row[c] = v
		pos += size
	}
	return pos, nil
}

// decodeValue decodes one value of a fastType column at the start of b.
func decodeValue(typ byte, meta uint16, b []byte, slabs *valueSlabs) (txn.Value, int, error) {
	var i int64
	size := 0
	switch typ {
	case txn.TypeTiny:
		if size = 1; len(b) >= size {
			i = int64(int8(b[0]))
		}
	case txn.TypeShort:
		if size = 2; len(b) >= size {
			i = int64(int16(binary.LittleEndian.Uint16(b)))
		}
	case txn.TypeInt24:
		if size = 3; len(b) >= size {
			u := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
			i = int64(int32(u<<8) >> 8)
		}
	case txn.TypeLong:
		if size = 4; len(b) >= size {
			i = int64(int32(binary.LittleEndian.Uint32(b)))
		}
	case txn.TypeLongLong:
		if size = 8; len(b) >= size {
			i = int64(binary.LittleEndian.Uint64(b))
		}
	case txn.TypeYear:
		if size = 1; len(b) >= size && b[0] != 0 {
			i = int64(b[0]) + 1900
		}
	case txn.TypeFloat:
		if len(b) < 4 {
			return nil, 0, errRowPastEnd
		}
		f := math.Float32frombits(binary.LittleEndian.Uint32(b))
		if !finite(float64(f)) {
			return nil, 0, errNotFinite
		}
		return f, 4, nil
	case txn.TypeDouble:
		if len(b) < 8 {
			return nil, 0, errRowPastEnd
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if !finite(f) {
			return nil, 0, errNotFinite
		}
		return f, 8, nil
	case txn.TypeVarchar, txn.TypeVarString:
		return decodeString(b, int(meta), slabs)
	case txn.TypeString:
		length, _ := txn.StringLength(meta)
		return decodeString(b, length, slabs)
	case txn.TypeBlob, txn.TypeGeometry:
		return decodeBlob(b, int(meta), slabs)
	case txn.TypeNewDecimal:
		return decodeDecimal(b, int(meta>>8), int(meta&0xff), slabs)
	case txn.TypeDatetime2:
		return decodeDatetime2(b, int(meta), slabs)
	case txn.TypeTimestamp2:
		return decodeTimestamp2(b, int(meta), slabs)
	case txn.TypeDate:
		return decodeDate(b, slabs)
	default:
		return nil, 0, errors.New("decodeRowsFast: column type not decoded here")
	}
	if len(b) < size {
		return nil, 0, errRowPastEnd
	}
	if uint64(i) < 256 {
		return i, size, nil // the runtime boxes these without allocating
	}
	return slabs.ints.box(i), size, nil
}

// decodeString reads a CHAR or VARCHAR value: a length of one byte for
// columns of fewer than 256 bytes, else two.
func decodeString(b []byte, declared int, slabs *valueSlabs) (txn.Value, int, error) {
	if declared < 256 {
		return decodeBlob(b, 1, slabs)
	}
	return decodeBlob(b, 2, slabs)
}

// decodeBlob reads a value with a length prefix of packlen bytes.
func decodeBlob(b []byte, packlen int, slabs *valueSlabs) (txn.Value, int, error) {
	if packlen < 1 || packlen > 4 {
		return nil, 0, errors.New("invalid blob length size")
	}
	if len(b) < packlen {
		return nil, 0, errRowPastEnd
	}
	l := 0
	for i := range packlen {
		l |= int(b[i]) << (8 * i)
	}
	end := packlen + l
	if l < 0 || end > len(b) {
		return nil, 0, errRowPastEnd
	}
	return slabs.bytes.box(b[packlen:end:end]), end, nil
}
