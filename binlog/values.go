package binlog

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// realType is the column's MYSQL_TYPE_* with ENUM and SET recovered from
// the metadata of a MYSQL_TYPE_STRING column (the table map hides them).
func realType(typ byte, meta uint16) byte {
	if typ == txn.TypeString && meta >= 256 {
		rt := byte(meta >> 8)
		if rt == txn.TypeEnum || rt == txn.TypeSet {
			return rt
		}
	}
	return typ
}

// normalize turns what go-mysql decoded for one column into the dynamic
// types documented in txn/value.go. go-mysql must be configured with
// ParseTime=false, UseDecimal=false and TimestampStringLocation=UTC. A
// value decodeRowsFast made is already in the model and comes back as it
// is.
func normalize(v any, typ byte, meta uint16) (txn.Value, error) {
	if v == nil {
		return nil, nil
	}
	rt := realType(typ, meta)
	switch rt {
	case txn.TypeTiny, txn.TypeShort, txn.TypeInt24, txn.TypeLong, txn.TypeLongLong, txn.TypeYear:
		return normalizeInt(v, rt)
	case txn.TypeFloat:
		if f, ok := v.(float32); ok {
			if !finite(float64(f)) {
				return nil, errNotFinite
			}
			return v, nil
		}
	case txn.TypeDouble:
		if f, ok := v.(float64); ok {
			if !finite(f) {
				return nil, errNotFinite
			}
			return v, nil
		}
	case txn.TypeNewDecimal:
		switch s := v.(type) {
		case string:
			return txn.Decimal(s), nil
		case txn.Decimal: // decodeRowsFast's
			return v, nil
		}
	case txn.TypeBit:
		if i, ok := v.(int64); ok {
			return txn.Bit(uint64(i)), nil
		}
	case txn.TypeEnum:
		if i, ok := v.(int64); ok {
			return txn.Enum(i), nil
		}
	case txn.TypeSet:
		if i, ok := v.(int64); ok {
			return txn.Set(uint64(i)), nil
		}
	case txn.TypeTimestamp2:
		switch s := v.(type) {
		case string:
			return txn.Temporal(epochFraction(s)), nil
		case txn.Temporal: // decodeRowsFast's
			return v, nil
		}
	case txn.TypeTimestamp, txn.TypeDatetime, txn.TypeDatetime2,
		txn.TypeDate, txn.TypeNewDate, txn.TypeTime:
		switch s := v.(type) {
		case string:
			return txn.Temporal(s), nil
		case txn.Temporal: // decodeRowsFast's
			return v, nil
		}
	case txn.TypeTime2:
		if s, ok := v.(string); ok {
			return txn.Temporal(padFraction(s, int(meta))), nil
		}
	case txn.TypeVarchar, txn.TypeVarString, txn.TypeString, txn.TypeBlob, txn.TypeTinyBlob,
		txn.TypeMediumBlob, txn.TypeLongBlob, txn.TypeGeometry, txn.TypeJSON:
		switch b := v.(type) {
		case string:
			return []byte(b), nil
		case []byte: // a slice of the event, which the transaction keeps
			return v, nil
		case *replication.JsonDiff, *partialJSON:
			return nil, fmt.Errorf("%w: a JSON diff outside an update's after image", ErrPartialJSON)
		}
	}
	return nil, fmt.Errorf("column type %d: unexpected decoded value %T", typ, v)
}

// epochFraction corrects go-mysql's text of a TIMESTAMP(1..6) value of
// the second 0 with a fraction, which it writes as the zero date with
// that fraction ("0000-00-00 00:00:00.000001"). MariaDB reads those bytes
// as the first second of 1970 in UTC, '1970-01-01 00:00:00.000001', a
// value a session in UTC stores even in strict mode (main.type_timestamp,
// MDEV-34061), and the zero date only where the fraction is 0 too. As
// the zero date with a fraction the value stores nowhere: strict SQL
// refuses it, lax SQL drops the fraction.
func epochFraction(s string) string {
	frac, ok := strings.CutPrefix(s, zeroDatetime+".")
	if !ok || strings.Trim(frac, "0") == "" {
		return s
	}
	return "1970-01-01 00:00:00." + frac
}

// normalizeInt sign-extends from the column width, also when go-mysql
// returned an unsigned Go type because row metadata said UNSIGNED: the
// model keeps the bits and lets txn.Unsigned reinterpret them. A value
// already in the model (int64) is returned as it is, not boxed again.
func normalizeInt(v any, rt byte) (txn.Value, error) {
	switch i := v.(type) {
	case int64:
		return v, nil
	case int8:
		return int64(i), nil
	case int16:
		return int64(i), nil
	case int32:
		return int64(i), nil
	case int:
		return int64(i), nil // YEAR
	case uint8:
		return int64(int8(i)), nil
	case uint16:
		return int64(int16(i)), nil
	case uint32:
		if rt == txn.TypeInt24 {
			return int64(int32(i<<8) >> 8), nil
		}
		return int64(int32(i)), nil
	case uint64:
		return int64(i), nil
	}
	return nil, fmt.Errorf("integer column type %d: unexpected decoded value %T", rt, v)
}

// padFraction gives a TIME(dec) value all its fractional digits: go-mysql
// drops them when they are all zero ("10:00:00" for TIME(3) 10:00:00.000).
func padFraction(s string, dec int) string {
	if dec <= 0 || dec > 6 || strings.IndexByte(s, '.') >= 0 {
		return s
	}
	return s + "." + strings.Repeat("0", dec)
}
