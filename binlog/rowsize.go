package binlog

import (
	"errors"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// Row counts for the event guard. decodedRowsBytes bounds what decoding a
// rows event allocates by the most rows its bytes could hold (rows of
// nothing but null bitmaps), which is right for a damaged event and far
// too much for a real one that holds one big row: a 12 MiB BLOB in a
// table of three columns could be 12 million rows of NULLs, 11 GiB
// decoded. When that bound is over the limit, the guard counts the rows
// instead, walking the images by the encoded sizes of their values
// (nothing decoded), with the column types of the table map.

// errUnsized is returned by valueSize for a column type it does not know:
// the guard then keeps the bound of the most rows.
var errUnsized = errors.New("column type of unknown size")

// countRows counts the row images in data (a rows event's rows, after the
// column bitmaps), images per row (2 for updates), for table map tm; an
// error when an image runs past the end or a type cannot be sized.
func countRows(tm *replication.TableMapEvent, bitmap1, bitmap2 []byte, images int, data []byte) (int, error) {
	n := len(tm.ColumnType)
	if len(tm.ColumnMeta) != n {
		return 0, errUnsized
	}
	rows := 0
	for pos := 0; pos < len(data); rows++ {
		for i := range images {
			bitmap := bitmap1
			if i == 1 {
				bitmap = bitmap2
			}
			var err error
			if pos, err = imageEnd(tm, bitmap, data, pos); err != nil {
				return 0, err
			}
		}
	}
	return rows, nil
}

// imageEnd returns the position after the row image at data[pos:]. It
// walks the image as decodeImage does, sizing instead of decoding: the
// walk is written twice so that decodeImage, prepl's hottest loop, keeps
// no indirect call per value.
func imageEnd(tm *replication.TableMapEvent, bitmap, data []byte, pos int) (int, error) {
	n := len(tm.ColumnType)
	nulls := (bitsSet(bitmap, n) + 7) / 8
	if nulls > len(data)-pos {
		return 0, errRowPastEnd
	}
	nullBitmap := data[pos : pos+nulls]
	pos += nulls
	ni := 0
	for c := range n {
		if bitmap[c>>3]&(1<<(c&7)) == 0 {
			continue
		}
		null := nullBitmap[ni>>3]&(1<<(ni&7)) != 0
		ni++
		if null {
			continue
		}
		size, err := valueSize(tm.ColumnType[c], tm.ColumnMeta[c], data[pos:])
		if err != nil {
			return 0, err
		}
		if size > len(data)-pos {
			return 0, errRowPastEnd
		}
		pos += size
	}
	return pos, nil
}

// digitBytes is the bytes of a packed DECIMAL part of 0 to 9 digits.
var digitBytes = [10]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}

// valueSize is the encoded size of a value of binlog type typ with
// metadata meta at the start of b, as go-mysql decodes it.
func valueSize(typ byte, meta uint16, b []byte) (int, error) {
	if typ == txn.TypeString && meta >= 256 {
		length, real := stringLength(meta)
		switch real {
		case txn.TypeEnum, txn.TypeSet:
			return length, nil // the pack length: 1 or 2, 1 to 8
		case txn.TypeString:
			return stringSize(b, length)
		}
		return 0, errUnsized
	}
	switch typ {
	case txn.TypeNull:
		return 0, nil
	case txn.TypeTiny, txn.TypeYear:
		return 1, nil
	case txn.TypeShort:
		return 2, nil
	case txn.TypeInt24, txn.TypeDate, txn.TypeNewDate, txn.TypeTime:
		return 3, nil
	case txn.TypeLong, txn.TypeFloat, txn.TypeTimestamp:
		return 4, nil
	case txn.TypeLongLong, txn.TypeDouble, txn.TypeDatetime:
		return 8, nil
	case txn.TypeTimestamp2:
		return 4 + (int(meta)+1)/2, nil
	case txn.TypeDatetime2:
		return 5 + (int(meta)+1)/2, nil
	case txn.TypeTime2:
		return 3 + (int(meta)+1)/2, nil
	case txn.TypeNewDecimal:
		prec, scale := int(meta>>8), int(meta&0xff)
		if scale > prec {
			return 0, errUnsized
		}
		intg := prec - scale
		return intg/9*4 + digitBytes[intg%9] + scale/9*4 + digitBytes[scale%9], nil
	case txn.TypeBit:
		return (int(meta>>8)*8 + int(meta&0xff) + 7) / 8, nil
	case txn.TypeString, txn.TypeVarchar, txn.TypeVarString:
		return stringSize(b, int(meta))
	case txn.TypeBlob, txn.TypeGeometry, txn.TypeJSON:
		_, n, err := decodeBlob(b, int(meta)) // a slice of b: nothing copied
		return n, err
	}
	return 0, errUnsized
}

// stringSize is the size of a CHAR or VARCHAR value of at most declared
// bytes, as decodeString reads it.
func stringSize(b []byte, declared int) (int, error) {
	_, n, err := decodeString(b, declared)
	return n, err
}
