package postgres

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	xunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"

	"github.com/prepl/prepl/tabledef"
	"github.com/prepl/prepl/txn"
)

// Values travel as PostgreSQL's text input form: the text a column of the
// mapped type accepts (in a quoted literal, a COPY row or a text-format
// parameter) and gives back unchanged in value. FromText converts what
// the source returns for snapshot.SourceExpr (copy, verify); FromValue
// converts a value decoded from the binlog (replicate, replay). Both give
// the same text for the same stored value.

// FromText converts the source's text for c (read through
// snapshot.SourceExpr) to PostgreSQL's input text; null is true for a
// value stored as NULL (a zero date with ZeroDateNull).
func FromText(raw []byte, c *Column, o Options) (text string, null bool, err error) {
	k, err := KindOf(c)
	if err != nil {
		return "", false, err
	}
	s := string(raw)
	switch k {
	case KindInt, KindYear, KindDecimal:
		if !tabledef.Numeric(s) {
			return "", false, fmt.Errorf("column %s: bad number %q", c.Name, s)
		}
		return s, false, nil
	case KindFloat, KindDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return "", false, fmt.Errorf("column %s: bad float %q", c.Name, s)
		}
		if k == KindFloat {
			return strconv.FormatFloat(float64(float32(f)), 'g', -1, 32), false, nil
		}
		return strconv.FormatFloat(f, 'g', -1, 64), false, nil
	case KindBit:
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return "", false, fmt.Errorf("column %s: bad bit value %q", c.Name, s)
		}
		return bitText(u, c.Length), false, nil
	case KindEnum, KindSet:
		return checkText(c, s)
	case KindDate, KindDatetime, KindTimestamp, KindTime:
		return temporal(c, k, s, o)
	case KindText:
		return decodeText(c, raw)
	case KindBinary:
		return `\x` + hex.EncodeToString(raw), false, nil
	case KindJSON:
		return checkText(c, s)
	case KindSpatial:
		return spatial(c, raw, o)
	}
	return "", false, fmt.Errorf("column %s: kind %d: %w", c.Name, k, ErrUnsupported)
}

// FromValue converts a binlog value (see txn.Value) of binlog type
// colType to PostgreSQL's input text; null is true for NULL.
func FromValue(v txn.Value, colType byte, c *Column, o Options) (text string, null bool, err error) {
	switch x := v.(type) {
	case nil:
		return "", true, nil
	case int64:
		if c.Unsigned {
			return strconv.FormatUint(txn.Unsigned(colType, x), 10), false, nil
		}
		return strconv.FormatInt(x, 10), false, nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), false, nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), false, nil
	case txn.Decimal:
		return FromText([]byte(x), c, o)
	case txn.Temporal:
		return FromText([]byte(x), c, o)
	case txn.Bit:
		return bitText(uint64(x), c.Length), false, nil
	case txn.Enum:
		if x == 0 {
			return "", false, nil
		}
		if int(x) > len(c.Elems) {
			return "", false, fmt.Errorf("column %s: enum index %d past its %d members", c.Name, x, len(c.Elems))
		}
		return c.Elems[x-1], false, nil
	case txn.Set:
		if bits.Len64(uint64(x)) > len(c.Elems) {
			return "", false, fmt.Errorf("column %s: set bits %#x past its %d members", c.Name, uint64(x), len(c.Elems))
		}
		var m []string
		for i, e := range c.Elems {
			if x&(1<<i) != 0 {
				m = append(m, e)
			}
		}
		return strings.Join(m, ","), false, nil
	case []byte:
		if k, _ := KindOf(c); k == KindBinary && (c.Type == "binary" || c.Type == "char") {
			x = txn.PadBinary(x, c.Length) // the column holds n bytes
		}
		return FromText(x, c, o)
	}
	return "", false, fmt.Errorf("column %s: unsupported value type %T", c.Name, v)
}

// bitText is BIT(n)'s value as n binary digits.
func bitText(u uint64, n int) string {
	if n <= 0 {
		n = 1
	}
	s := strconv.FormatUint(u, 2)
	if len(s) < n {
		s = strings.Repeat("0", n-len(s)) + s
	}
	return s
}

// checkText refuses what PostgreSQL text cannot hold: a NUL byte, or
// bytes that are not UTF-8 in text the source already gave as UTF-8.
func checkText(c *Column, s string) (string, bool, error) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return "", false, fmt.Errorf("column %s: a NUL byte at offset %d, which PostgreSQL text cannot hold (make the column binary on the source, or exclude the table): %w", c.Name, i, ErrUnsupported)
	}
	if !utf8.ValidString(s) {
		return "", false, fmt.Errorf("column %s: bytes that are not UTF-8 in %q: %w", c.Name, s, ErrUnsupported)
	}
	return s, false, nil
}

// decodeText converts a string of c's charset to UTF-8. Charsets with a
// byte for every value (latin1: MySQL's latin1 is cp1252, its 5 unassigned
// bytes mapped to the C1 controls as MySQL does) never fail; UTF-8 that is
// not valid is an error, never dropped or replaced.
func decodeText(c *Column, raw []byte) (string, bool, error) {
	cs := c.Charset
	var s string
	switch {
	case utf8Charset(cs):
		s = string(raw)
	case cs == "latin1":
		s = latin1(raw)
	default:
		e, ok := charsets[cs]
		if !ok {
			return "", false, fmt.Errorf("column %s: character set %s: %w", c.Name, cs, ErrUnsupported)
		}
		out, err := e.NewDecoder().Bytes(raw)
		if err != nil || (bytes.ContainsRune(out, utf8.RuneError) && !bytes.ContainsRune(raw, utf8.RuneError)) {
			return "", false, fmt.Errorf("column %s: bytes %q are not valid %s: %w", c.Name, raw, cs, ErrUnsupported)
		}
		s = string(out)
	}
	return checkText(c, s)
}

// latin1 decodes MySQL's latin1: cp1252, with the 5 bytes cp1252 leaves
// unassigned (0x81, 0x8D, 0x8F, 0x90, 0x9D) mapped to the C1 controls of
// the same code, as MySQL converts them.
func latin1(raw []byte) string {
	b := make([]rune, 0, len(raw))
	for _, c := range raw {
		r := charmap.Windows1252.DecodeByte(c)
		if r == utf8.RuneError {
			r = rune(c)
		}
		b = append(b, r)
	}
	return string(b)
}

// charsets maps MySQL character sets to their decoders.
var charsets = map[string]encoding.Encoding{
	"latin1":   charmap.Windows1252,
	"latin2":   charmap.ISO8859_2,
	"latin5":   charmap.ISO8859_9,
	"latin7":   charmap.ISO8859_13,
	"cp1250":   charmap.Windows1250,
	"cp1251":   charmap.Windows1251,
	"cp1256":   charmap.Windows1256,
	"cp1257":   charmap.Windows1257,
	"cp850":    charmap.CodePage850,
	"cp866":    charmap.CodePage866,
	"koi8r":    charmap.KOI8R,
	"koi8u":    charmap.KOI8U,
	"greek":    charmap.ISO8859_7,
	"hebrew":   charmap.ISO8859_8,
	"macroman": charmap.Macintosh,
	"sjis":     japanese.ShiftJIS,
	"cp932":    japanese.ShiftJIS,
	"ujis":     japanese.EUCJP,
	"eucjpms":  japanese.EUCJP,
	"euckr":    korean.EUCKR,
	"gbk":      simplifiedchinese.GBK,
	"gb2312":   simplifiedchinese.GBK,
	"gb18030":  simplifiedchinese.GB18030,
	"big5":     traditionalchinese.Big5,
	"ucs2":     xunicode.UTF16(xunicode.BigEndian, xunicode.IgnoreBOM),
	"utf16":    xunicode.UTF16(xunicode.BigEndian, xunicode.IgnoreBOM),
	"utf16le":  xunicode.UTF16(xunicode.LittleEndian, xunicode.IgnoreBOM),
	"utf32":    utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM),
}

// temporal converts MySQL date/time text. A zero date (zero year, month
// or day in a DATE, DATETIME or TIMESTAMP) has no PostgreSQL value: NULL
// with ZeroDateNull, else an error naming the column.
func temporal(c *Column, k Kind, s string, o Options) (string, bool, error) {
	if !temporalText(s) {
		return "", false, fmt.Errorf("column %s: bad temporal %q", c.Name, s)
	}
	if k == KindTime {
		return s, false, nil
	}
	if zeroDate(s) {
		if o.ZeroDateNull {
			return "", true, nil
		}
		return "", false, fmt.Errorf("column %s: zero date %q has no PostgreSQL value (run with --zero-dates=null to store NULL): %w", c.Name, s, ErrUnsupported)
	}
	if k == KindTimestamp {
		return s + "+00", false, nil
	}
	return s, false, nil
}

func temporalText(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '-' || c == ':' || c == '.' || c == ' ') {
			return false
		}
	}
	return true
}

// zeroDate: year, month or day 0 ("YYYY-MM-DD..."). Year 0 alone
// ('0000-01-01') is a real MySQL date PostgreSQL cannot hold either (it
// has no year 0).
func zeroDate(s string) bool {
	if len(s) < 10 {
		return false
	}
	return s[0:4] == "0000" || s[5:7] == "00" || s[8:10] == "00"
}

// spatial: MySQL's internal geometry (4-byte little-endian SRID, then WKB)
// as PostGIS EWKB hex text.
func spatial(c *Column, raw []byte, o Options) (string, bool, error) {
	if !o.PostGIS {
		return "", false, fmt.Errorf("column %s: spatial type %s needs PostGIS on the target: %w", c.Name, c.Type, ErrUnsupported)
	}
	if len(raw) < 9 {
		return "", false, fmt.Errorf("column %s: geometry of %d bytes", c.Name, len(raw))
	}
	srid := raw[:4]
	wkb := append([]byte(nil), raw[4:]...)
	if wkb[0] != 1 {
		return "", false, fmt.Errorf("column %s: big-endian WKB: %w", c.Name, ErrUnsupported)
	}
	// EWKB: the SRID flag in the type word, then the SRID.
	wkb[4] |= 0x20
	out := append(append(append([]byte{}, wkb[:5]...), srid...), wkb[5:]...)
	return strings.ToUpper(hex.EncodeToString(out)), false, nil
}

// Literal is text as a PostgreSQL literal (NULL when null): a quoted
// string the column's type reads.
func Literal(text string, null bool) string {
	if null {
		return "NULL"
	}
	return QuoteString(text)
}

// AppendCopyText appends FromText(raw, c, o) to b as one field of COPY's
// text format (AppendCopy), without the string in between for the kinds
// whose text is the source's own bytes: numbers, UTF-8 and ASCII strings,
// binary strings. raw is not NULL.
func AppendCopyText(b, raw []byte, c *Column, o Options) ([]byte, error) {
	k, err := KindOf(c)
	if err != nil {
		return b, err
	}
	switch {
	case k == KindInt || k == KindYear || k == KindDecimal:
		if tabledef.Numeric(raw) {
			return append(b, raw...), nil // nothing to escape
		}
	case k == KindText && utf8Charset(c.Charset):
		if bytes.IndexByte(raw, 0) < 0 && utf8.Valid(raw) {
			return appendCopyEscaped(b, raw), nil
		}
	case k == KindBinary:
		return hex.AppendEncode(append(b, `\\x`...), raw), nil
	}
	text, null, err := FromText(raw, c, o)
	if err != nil {
		return b, err
	}
	return AppendCopy(b, text, null), nil
}

// utf8Charset: a column of charset cs holds UTF-8 as it is.
func utf8Charset(cs string) bool {
	switch cs {
	case "", "utf8", "utf8mb3", "utf8mb4", "ascii":
		return true
	}
	return false
}

// AppendCopy appends text as one field of COPY's text format.
func AppendCopy(b []byte, text string, null bool) []byte {
	if null {
		return append(b, `\N`...)
	}
	return appendCopyEscaped(b, text)
}

// appendCopyEscaped appends text with COPY's escapes of backslash, newline,
// carriage return and tab; the runs between them in one append each.
func appendCopyEscaped[T string | []byte](b []byte, text T) []byte {
	from := 0
	for i := 0; i < len(text); i++ {
		var e byte
		switch text[i] {
		case '\\':
			e = '\\'
		case '\n':
			e = 'n'
		case '\r':
			e = 'r'
		case '\t':
			e = 't'
		default:
			continue
		}
		b = append(append(b, text[from:i]...), '\\', e)
		from = i + 1
	}
	return append(b, text[from:]...)
}
