package binlog

import (
	"encoding/binary"
	"errors"
	"strconv"
	"time"

	"github.com/prepl/prepl/txn"
)

// DECIMAL, DATE, DATETIME and TIMESTAMP values (the new formats, MySQL
// 5.6's) as decodeRowsFast decodes them: the text go-mysql's decodeValue
// gives with the parser's settings (newParser: no time.Time, no
// decimal.Decimal, TIMESTAMP in UTC), digit for digit, also for the
// bytes no server writes (FuzzDecodeRowsFast compares the two); where
// go-mysql panics, an error. The text goes to the slabs' arena, not to a
// string of its own.

// errDecimalDigits: a DECIMAL group of nine digits holds a number of ten,
// which go-mysql cannot format (it panics).
var errDecimalDigits = errors.New("a DECIMAL value with a group of more than nine digits")

const digitsPerGroup = 9

// decimalGroupBytes is the bytes of a group of 0 to 9 digits.
var decimalGroupBytes = [digitsPerGroup + 1]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}

// decimalGroup reads a big-endian group of size bytes, each XORed with
// mask (negative numbers are stored inverted).
func decimalGroup(b []byte, size int, mask byte) uint32 {
	var v uint32
	for i := range size {
		v = v<<8 | uint32(b[i]^mask)
	}
	return v
}

// decodeDecimal decodes a DECIMAL(precision, scale) value as go-mysql's
// decodeDecimal does; fastType checked 1 <= precision <= 65 and
// scale <= precision.
func decodeDecimal(b []byte, precision, scale int, slabs *valueSlabs) (txn.Value, int, error) {
	integral := precision - scale
	fullInt, fullFrac := integral/digitsPerGroup, scale/digitsPerGroup
	partInt, partFrac := integral%digitsPerGroup, scale%digitsPerGroup
	size := fullInt*4 + decimalGroupBytes[partInt] + fullFrac*4 + decimalGroupBytes[partFrac]
	if len(b) < size {
		return nil, 0, errRowPastEnd
	}
	var buf [40]byte // 65 digits take at most 30 bytes
	data := buf[:size]
	copy(data, b)
	out := slabs.text.start(precision + 3 + 2*(fullInt+fullFrac+2))
	var mask byte
	if data[0]&0x80 == 0 {
		mask = 0xff
		out = append(out, '-')
	}
	data[0] ^= 0x80
	pos := decimalGroupBytes[partInt]
	leading := true // no digit written yet
	if v := decimalGroup(data, pos, mask); v != 0 {
		leading = false
		out = strconv.AppendUint(out, uint64(v), 10)
	}
	for range fullInt {
		v := decimalGroup(data[pos:], 4, mask)
		pos += 4
		switch {
		case leading && v != 0:
			leading = false
			out = strconv.AppendUint(out, uint64(v), 10)
		case !leading:
			if v > 999_999_999 {
				return nil, 0, errDecimalDigits
			}
			out = appendPadded(out, int64(v), digitsPerGroup)
		}
	}
	if leading {
		out = append(out, '0')
	}
	if pos < len(data) {
		out = append(out, '.')
		for range fullFrac {
			v := decimalGroup(data[pos:], 4, mask)
			pos += 4
			if v > 999_999_999 {
				return nil, 0, errDecimalDigits
			}
			out = appendPadded(out, int64(v), digitsPerGroup)
		}
		if n := decimalGroupBytes[partFrac]; n > 0 {
			// go-mysql pads the last group to its digits, and writes
			// more when it holds more.
			out = appendPadded(out, int64(decimalGroup(data[pos:], n, mask)), partFrac)
			pos += n
		}
	}
	return slabs.decimals.box(txn.Decimal(slabs.text.text(out))), pos, nil
}

// appendPadded appends v in decimal with at least width characters, as
// fmt's %0*d does (zeros after the sign).
func appendPadded(b []byte, v int64, width int) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = uint64(-v) // also right for the smallest int64
		width--
	}
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], u, 10)
	for range width - len(d) {
		b = append(b, '0')
	}
	return append(b, d...)
}

// appendFraction appends ".%06d" of frac cut to dec digits, as go-mysql's
// formatDatetime and formatZeroTime do (frac may hold more than six
// digits: the cut takes 6-dec characters off the end).
func appendFraction(b []byte, frac int64, dec int) []byte {
	if dec == 0 {
		return b
	}
	b = append(b, '.')
	b = appendPadded(b, frac, 6)
	return b[:len(b)-(6-dec)]
}

// temporalFraction is the microseconds of a DATETIME2, TIMESTAMP2 or
// TIME2 value's fractional part of dec digits, b its bytes.
func temporalFraction(b []byte, dec int) int64 {
	switch dec {
	case 1, 2:
		return int64(b[0]) * 10000
	case 3, 4:
		return int64(binary.BigEndian.Uint16(b)) * 100
	case 5, 6:
		return int64(uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]))
	}
	return 0
}

const zeroDatetime = "0000-00-00 00:00:00"

// temporal boxes the text appended to out since slabs.text.start.
func temporal(out []byte, slabs *valueSlabs) txn.Value {
	return slabs.temporals.box(txn.Temporal(slabs.text.text(out)))
}

// decodeDatetime2 decodes a DATETIME(dec) value as go-mysql's
// decodeDatetime2 does without parseTime; fastType checked dec <= 6.
func decodeDatetime2(b []byte, dec int, slabs *valueSlabs) (txn.Value, int, error) {
	n := 5 + (dec+1)/2
	if len(b) < n {
		return nil, 0, errRowPastEnd
	}
	var u uint64
	for _, c := range b[:5] {
		u = u<<8 | uint64(c)
	}
	intPart := int64(u) - 0x8000000000
	frac := temporalFraction(b[5:], dec)
	out := slabs.text.start(40)
	if intPart == 0 {
		out = appendFraction(append(out, zeroDatetime...), frac, dec)
		return temporal(out, slabs), n, nil
	}
	tmp := intPart<<24 + frac
	if tmp < 0 {
		tmp = -tmp
	}
	ymdhms := tmp >> 24
	ymd, hms := ymdhms>>17, ymdhms%(1<<17)
	ym := ymd >> 5
	out = appendPadded(out, ym/13, 4)
	out = appendPadded(append(out, '-'), ym%13, 2)
	out = appendPadded(append(out, '-'), ymd%(1<<5), 2)
	out = appendPadded(append(out, ' '), hms>>12, 2)
	out = appendPadded(append(out, ':'), (hms>>6)%(1<<6), 2)
	out = appendPadded(append(out, ':'), hms%(1<<6), 2)
	return temporal(appendFraction(out, frac, dec), slabs), n, nil
}

// fracTimeFormat is go-mysql's layout of a TIMESTAMP(dec) value.
var fracTimeFormat = [7]string{
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05.0",
	"2006-01-02 15:04:05.00",
	"2006-01-02 15:04:05.000",
	"2006-01-02 15:04:05.0000",
	"2006-01-02 15:04:05.00000",
	"2006-01-02 15:04:05.000000",
}

// decodeTimestamp2 decodes a TIMESTAMP(dec) value in UTC as go-mysql's
// decodeTimestamp2 does (newParser), but for the second 0 with a
// fraction (epochFraction); fastType checked dec <= 6.
func decodeTimestamp2(b []byte, dec int, slabs *valueSlabs) (txn.Value, int, error) {
	n := 4 + (dec+1)/2
	if len(b) < n {
		return nil, 0, errRowPastEnd
	}
	sec := int64(binary.BigEndian.Uint32(b))
	usec := temporalFraction(b[4:], dec)
	out := slabs.text.start(40)
	if sec == 0 && usec == 0 {
		out = appendFraction(append(out, zeroDatetime...), 0, dec)
	} else {
		out = time.Unix(sec, usec*1000).UTC().AppendFormat(out, fracTimeFormat[dec])
	}
	return temporal(out, slabs), n, nil
}

// decodeDate decodes a DATE value as go-mysql does.
func decodeDate(b []byte, slabs *valueSlabs) (txn.Value, int, error) {
	if len(b) < 3 {
		return nil, 0, errRowPastEnd
	}
	d := int64(b[0]) | int64(b[1])<<8 | int64(b[2])<<16
	out := slabs.text.start(16)
	if d == 0 {
		return temporal(append(out, "0000-00-00"...), slabs), 3, nil
	}
	out = appendPadded(out, d/(16*32), 4)
	out = appendPadded(append(out, '-'), d/32%16, 2)
	out = appendPadded(append(out, '-'), d%32, 2)
	return temporal(out, slabs), 3, nil
}
