package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// MariaDB's pre-10.1 temporal format (mysql56_temporal_format=OFF, and
// every table of MariaDB 5.3 to 10.0 never rebuilt since): TIME, DATETIME
// and TIMESTAMP columns are logged with the old type codes and no
// metadata. Without fractional seconds their values are the classic
// ones (TIME a signed HHMMSS in 3 bytes, DATETIME YYYYMMDDhhmmss in 8,
// TIMESTAMP the epoch seconds in 4, all little-endian); with them, the
// "hires" packing of MariaDB's sql/field.cc (Field_time_hires,
// Field_datetime_hires, Field_timestamp_hires), big-endian, whose length
// and scale depend on the fractional digits (fsp). Those digits are in no
// event: the replica takes them from its own table (MariaDB's
// make_conversion_table_field for these types uses the target column's
// decimals). The reader decodes them as fsp 0, the only digits a MySQL
// binlog has for these types; the target's catalog decodes an event again
// with its columns' digits (txn.RowsEvent.Redecode).

// oldTemporal reports whether typ is a type code of the old temporal format.
func oldTemporal(typ byte) bool {
	return typ == txn.TypeTime || typ == txn.TypeDatetime || typ == txn.TypeTimestamp
}

// hasOldTemporal reports whether a table map has a column of the old
// temporal format.
func hasOldTemporal(types []byte) bool {
	for _, t := range types {
		if oldTemporal(t) {
			return true
		}
	}
	return false
}

// oldTemporalSize is the bytes a value of an old-format column of type
// typ with fsp fractional digits takes (Type_handler_*::hires_bytes).
func oldTemporalSize(typ byte, fsp int) int {
	switch typ {
	case txn.TypeTime:
		return [7]int{3, 4, 4, 5, 5, 5, 6}[fsp]
	case txn.TypeDatetime:
		return [7]int{8, 6, 6, 7, 7, 7, 8}[fsp]
	case txn.TypeTimestamp:
		return 4 + [7]int{0, 1, 1, 2, 2, 3, 3}[fsp]
	}
	return 0
}

var pow10 = [7]int64{1, 10, 100, 1000, 10000, 100000, 1000000}

// timeZeroPoint is what MariaDB adds to a packed TIME(fsp) to store it
// unsigned: (TIME_MAX_VALUE_SECONDS+1) seconds in units of 10^-fsp s.
func timeZeroPoint(fsp int) int64 { return 3020400 * pow10[fsp] }

func bigEndian(b []byte) int64 {
	var v int64
	for _, c := range b {
		v = v<<8 | int64(c)
	}
	return v
}

var errOldTemporal = errors.New("a value of MariaDB's pre-10.1 temporal format out of range")

// decodeOldTemporal decodes one value b (oldTemporalSize bytes) of an
// old-format column into the text the txn model holds: the text
// normalize gives the same value of a TIME2, DATETIME2 or TIMESTAMP2
// column of fsp digits (TIMESTAMP in UTC).
func decodeOldTemporal(typ byte, fsp int, b []byte) (string, error) {
	if fsp < 0 || fsp > 6 || len(b) != oldTemporalSize(typ, fsp) {
		return "", fmt.Errorf("column type %d with %d fractional digits: %d bytes, want %d", typ, fsp, len(b), oldTemporalSize(typ, fsp))
	}
	frac := func(usec int64) string {
		if fsp == 0 {
			return ""
		}
		return fmt.Sprintf(".%0*d", fsp, usec/pow10[6-fsp])
	}
	switch typ {
	case txn.TypeTime:
		var packed int64 // microseconds, signed
		if fsp == 0 {
			v := int64(int32(uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16) << 8 >> 8)
			sign := int64(1)
			if v < 0 {
				sign, v = -1, -v
			}
			packed = sign * ((v/10000*3600 + v/100%100*60 + v%100) * 1000000)
			if v%100 >= 60 || v/100%100 >= 60 {
				return "", errOldTemporal
			}
		} else {
			packed = (bigEndian(b) - timeZeroPoint(fsp)) * pow10[6-fsp]
		}
		sign := ""
		if packed < 0 {
			sign, packed = "-", -packed
		}
		secs := packed / 1000000
		return fmt.Sprintf("%s%02d:%02d:%02d%s", sign, secs/3600, secs/60%60, secs%60, frac(packed%1000000)), nil
	case txn.TypeDatetime:
		var year, month, day, hour, min, sec, usec uint64
		if fsp == 0 {
			v := binary.LittleEndian.Uint64(b)
			d, t := v/1000000, v%1000000
			year, month, day, hour, min, sec = d/10000, d/100%100, d%100, t/10000, t/100%100, t%100
			if hour > 23 || min > 59 || sec > 59 {
				return "", errOldTemporal
			}
		} else {
			p := uint64(bigEndian(b)) // at most 8 bytes: unsigned
			p *= uint64(pow10[6-fsp])
			if p/uint64(pow10[6-fsp]) != uint64(bigEndian(b)) {
				return "", errOldTemporal
			}
			usec, p = p%1000000, p/1000000
			sec, min, hour = p%60, p/60%60, p/3600%24
			p /= 3600 * 24
			day, month, year = p%32, p/32%13, p/(32*13)
		}
		if year > 9999 || month > 12 || day > 31 {
			return "", errOldTemporal
		}
		return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d%s", year, month, day, hour, min, sec, frac(int64(usec))), nil
	case txn.TypeTimestamp:
		var sec, usec int64
		if fsp == 0 {
			sec = int64(binary.LittleEndian.Uint32(b))
		} else {
			sec = int64(binary.BigEndian.Uint32(b))
			usec = bigEndian(b[4:]) * pow10[6-fsp]
			if usec >= 1000000 {
				return "", errOldTemporal
			}
		}
		if sec == 0 {
			return "0000-00-00 00:00:00" + frac(usec), nil
		}
		return time.Unix(sec, 0).UTC().Format(time.DateTime) + frac(usec), nil
	}
	return "", fmt.Errorf("column type %d is not a temporal type of the old format", typ)
}

// decodeRowsOld decodes the rows of e, whose table has old-format
// temporal columns, from data[pos:], with fsp fractional digits for
// column i (nil: 0 for every column), into e.Rows as go-mysql's
// DecodeData would for the other columns: go-mysql reads each old-format
// value as a BIT of its size (fixed length, big-endian), which is then
// decoded here.
func decodeRowsOld(e *replication.RowsEvent, data []byte, pos int, fsp []int) error {
	tm := e.Table
	cp := *tm
	cp.ColumnType = append([]byte(nil), tm.ColumnType...)
	cp.ColumnMeta = append([]uint16(nil), tm.ColumnMeta...)
	digits := func(i int) int {
		if i < len(fsp) {
			return fsp[i]
		}
		return 0
	}
	for i, t := range tm.ColumnType {
		if oldTemporal(t) {
			if f := digits(i); f < 0 || f > 6 {
				return fmt.Errorf("column %d: %d fractional digits", i+1, f)
			}
			cp.ColumnType[i] = txn.TypeBit
			cp.ColumnMeta[i] = uint16(oldTemporalSize(t, digits(i))) << 8
		}
	}
	e.Table = &cp
	err := e.DecodeData(pos, data)
	e.Table = tm
	if err != nil {
		return err
	}
	var buf [8]byte
	for _, row := range e.Rows {
		for i, t := range tm.ColumnType {
			if !oldTemporal(t) || i >= len(row) || row[i] == nil {
				continue
			}
			v, ok := row[i].(int64)
			if !ok {
				return fmt.Errorf("column %d: unexpected decoded value %T", i+1, row[i])
			}
			n := oldTemporalSize(t, digits(i))
			binary.BigEndian.PutUint64(buf[:], uint64(v))
			s, err := decodeOldTemporal(t, digits(i), buf[8-n:])
			if err != nil {
				return fmt.Errorf("column %d: %w", i+1, err)
			}
			row[i] = s
		}
	}
	return nil
}

// redecoder is txn.RowsEvent.Redecode of the rows event rowsRaw of table
// tbl (table map mapRaw, format description formatRaw), statement stmt.
func redecoder(formatRaw, mapRaw, rowsRaw []byte, tbl *txn.Table, stmt int) func(fsp []int) ([]txn.RowChange, error) {
	return func(fsp []int) ([]txn.RowChange, error) {
		rcs, err := redecodeRows(formatRaw, mapRaw, rowsRaw, fsp)
		if err != nil {
			return nil, fmt.Errorf("%s: decode its rows with the fractional digits of the target's columns %v: %w", tbl.QualifiedName(), fsp, err)
		}
		for i := range rcs {
			rcs[i].Table = tbl
			if rcs[i].Event != nil {
				rcs[i].Event.Statement = stmt
			}
		}
		return rcs, nil
	}
}

// redecodeRows decodes the rows event rowsRaw, of the table map mapRaw,
// under the format description formatRaw, with fsp[i] fractional digits
// for the old-format temporal column i, into row changes as the reader
// makes them.
func redecodeRows(formatRaw, mapRaw, rowsRaw []byte, fsp []int) (rcs []txn.RowChange, err error) {
	defer func() {
		if v := recover(); v != nil {
			rcs, err = nil, fmt.Errorf("decoding failed: %v", v)
		}
	}()
	p := newParser()
	p.SetRowsEventDecodeFunc(func(e *replication.RowsEvent, data []byte) error {
		data = data[:len(data):len(data)]
		pos, err := e.DecodeHeader(data)
		if err != nil {
			return err
		}
		if e.Table == nil || len(e.Table.ColumnType) != int(e.ColumnCount) || len(e.Table.ColumnMeta) != int(e.ColumnCount) {
			return errors.New("its table map does not fit it")
		}
		return decodeRowsOld(e, data, pos, fsp)
	})
	if _, err := p.Parse(formatRaw); err != nil {
		return nil, err
	}
	mev, err := p.Parse(mapRaw)
	if err != nil {
		return nil, err
	}
	tm, ok := mev.Event.(*replication.TableMapEvent)
	if !ok {
		return nil, errors.New("not a table map event")
	}
	if err := plainCompressed(tm, mapRaw); err != nil {
		return nil, err
	}
	rev, err := p.Parse(rowsRaw)
	if err != nil {
		return nil, err
	}
	re, ok := rev.Event.(*replication.RowsEvent)
	if !ok {
		return nil, errors.New("not a rows event")
	}
	a := newAssembler()
	a.redecoding = true
	a.cur = &txn.Txn{}
	if err := a.tableMap(tm, mapRaw); err != nil {
		return nil, err
	}
	ev := fromGoMySQL(re)
	if err := a.rows(&ev, rowsRaw); err != nil {
		return nil, err
	}
	for _, ch := range a.cur.Changes {
		rcs = append(rcs, *ch.Row)
	}
	return rcs, nil
}
