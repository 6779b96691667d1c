package txn

// Value is one column value as the reader decoded it. The dynamic type is
// always one of:
//
//	nil        SQL NULL
//	int64      every integer type and YEAR, sign-extended from the column
//	           width; for an UNSIGNED column reinterpret with Unsigned
//	float32    FLOAT
//	float64    DOUBLE
//	Decimal    DECIMAL, exact decimal text ("-12.3400")
//	[]byte     CHAR, VARCHAR, TEXT, BINARY, VARBINARY, BLOB, JSON (text),
//	           GEOMETRY: the raw bytes in the column's character set
//	Temporal   DATE, DATETIME, TIMESTAMP (UTC), TIME: text in MySQL literal
//	           form with the column's fractional digits ("-838:59:59.000000",
//	           "0000-00-00 00:00:00")
//	Bit        BIT(n), right-aligned
//	Enum       ENUM, 1-based index into the member list (0 = the '' error value)
//	Set        SET, bitmask of members
type Value = any

// Decimal is exact decimal text.
type Decimal string

// Temporal is a date/time literal in MySQL's text form.
type Temporal string

// Bit is a BIT(n) value.
type Bit uint64

// Enum is a 1-based ENUM member index.
type Enum int64

// Set is a SET member bitmask.
type Set uint64

// Unsigned reinterprets a sign-extended integer of the given MYSQL_TYPE_*
// column type as the unsigned value the source stored.
func Unsigned(colType byte, v int64) uint64 {
	switch colType {
	case TypeTiny:
		return uint64(uint8(v))
	case TypeShort:
		return uint64(uint16(v))
	case TypeInt24:
		return uint64(v) & 0xFFFFFF
	case TypeLong:
		return uint64(uint32(v))
	}
	return uint64(v)
}

// MYSQL_TYPE_* codes used by the model (include/mysql_com.h).
const (
	TypeDecimal    byte = 0
	TypeTiny       byte = 1
	TypeShort      byte = 2
	TypeLong       byte = 3
	TypeFloat      byte = 4
	TypeDouble     byte = 5
	TypeNull       byte = 6
	TypeTimestamp  byte = 7
	TypeLongLong   byte = 8
	TypeInt24      byte = 9
	TypeDate       byte = 10
	TypeTime       byte = 11
	TypeDatetime   byte = 12
	TypeYear       byte = 13
	TypeNewDate    byte = 14
	TypeVarchar    byte = 15
	TypeBit        byte = 16
	TypeTimestamp2 byte = 17
	TypeDatetime2  byte = 18
	TypeTime2      byte = 19
	TypeJSON       byte = 245
	TypeNewDecimal byte = 246
	TypeEnum       byte = 247
	TypeSet        byte = 248
	TypeTinyBlob   byte = 249
	TypeMediumBlob byte = 250
	TypeLongBlob   byte = 251
	TypeBlob       byte = 252
	TypeVarString  byte = 253
	TypeString     byte = 254
	TypeGeometry   byte = 255
)

// PadBinary is a BINARY(n) value as the server stores it: the binlog
// leaves out its trailing zero bytes, which the server pads back. b is
// returned as it is when it holds n bytes or more.
func PadBinary(b []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	return append(b[:len(b):len(b)], make([]byte, n-len(b))...)
}
