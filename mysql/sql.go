package mysql

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prepl/prepl/tabledef"
	"github.com/prepl/prepl/txn"
)

// SQL is written by hand rather than through driver placeholders because
// a whole transaction (often many) goes to the server as one multi-statement
// text in one round trip, and values must be rendered losslessly by column
// type: the driver knows neither the column's charset nor its signedness.

// QuoteIdent quotes an identifier with backticks.
func QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// QuoteString quotes a string literal (for session values and positions),
// escaped as appendEscaped escapes values.
func QuoteString(s string) string { return string(appendEscaped(make([]byte, 0, len(s)+2), []byte(s))) }

// appendIdent appends s quoted as QuoteIdent does.
func appendIdent(b []byte, s string) []byte {
	b = append(b, '`')
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			b = append(b, '`')
		}
		b = append(b, s[i])
	}
	return append(b, '`')
}

// appendTable appends d's quoted schema.table.
func appendTable(b []byte, d *txn.TableDef) []byte {
	return appendIdent(append(appendIdent(b, d.Schema), '.'), d.Name)
}

// AppendLiteral appends v as an SQL literal for a column of binlog type
// colType declared as col on the target.
func AppendLiteral(b []byte, v txn.Value, colType byte, col *txn.ColumnDef) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "NULL"...), nil
	case int64:
		if col.Unsigned {
			return strconv.AppendUint(b, txn.Unsigned(colType, x), 10), nil
		}
		return strconv.AppendInt(b, x, 10), nil
	case float32:
		// The float's exact value widened to double: it stores back as the
		// same float and compares equal to the column in WHERE clauses.
		return strconv.AppendFloat(b, float64(x), 'g', -1, 64), nil
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64), nil
	case txn.Decimal:
		if !tabledef.Numeric(string(x)) {
			return b, fmt.Errorf("column %s: bad decimal %q", col.Name, string(x))
		}
		return append(b, x...), nil
	case txn.Temporal:
		if !isTemporal(string(x)) {
			return b, fmt.Errorf("column %s: bad temporal %q", col.Name, string(x))
		}
		b = append(b, '\'')
		b = append(b, x...)
		return append(b, '\''), nil
	case txn.Bit:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case txn.Enum:
		return strconv.AppendInt(b, int64(x), 10), nil
	case txn.Set:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case []byte:
		if n := col.FixedBytes(); n > 0 {
			x = txn.PadBinary(x, n) // a WHERE clause must name all n bytes too
		}
		cs := col.Charset
		if cs == "" && col.DataType == "json" {
			cs = "utf8mb4"
		}
		if cs != "" && cs != "binary" {
			b = append(b, '_')
			b = append(b, cs...)
			b = append(b, ' ')
		}
		if len(x) == 0 {
			return append(b, "''"...), nil
		}
		if !wideCharset(cs) {
			// Most text is plain ASCII, the same bytes in every charset
			// but the wide ones: quoted, it is half the size of hex.
			if out, ok := appendPrintable(b, x); ok {
				return out, nil
			}
		}
		if len(x) >= rawAbove {
			if cs == "" || cs == "binary" {
				b = append(b, "_binary "...) // not utf8mb4, the connection's charset
			}
			return appendEscaped(b, x), nil
		}
		b = append(b, "X'"...)
		b = hex.AppendEncode(b, x)
		return append(b, '\''), nil
	}
	return b, fmt.Errorf("column %s: unsupported value type %T", col.Name, v)
}

func isTemporal(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '-' || c == ':' || c == '.' || c == ' ') {
			return false
		}
	}
	return true
}

// AppendRowChange appends the statement that applies one row change. The
// caller checks that it affects exactly one row.
func AppendRowChange(b []byte, rc *txn.RowChange, d *txn.TableDef) ([]byte, error) {
	if rc.Event != nil && rc.Event.Undecoded {
		return b, errUndecoded(d.QualifiedName())
	}
	var err error
	types := rc.Table.Types
	name := func(b []byte, i int) ([]byte, error) { return appendIdent(b, d.Columns[i].Name), nil }
	after := func(b []byte, i int) ([]byte, error) { return AppendLiteral(b, rc.After[i], types[i], &d.Columns[i]) }
	switch rc.Kind {
	case txn.Insert:
		b = append(appendTable(append(b, "INSERT INTO "...), d), " ("...)
		if b, _, err = appendColumns(b, d, rc.AfterCols, ",", name); err != nil {
			return b, err
		}
		b = append(b, ") VALUES ("...)
		if b, _, err = appendColumns(b, d, rc.AfterCols, ",", after); err != nil {
			return b, err
		}
		return append(b, ')'), nil
	case txn.Update:
		b = append(appendTable(append(b, "UPDATE "...), d), " SET "...)
		var n int
		b, n, err = appendColumns(b, d, rc.AfterCols, ",", func(b []byte, i int) ([]byte, error) {
			b, _ = name(b, i)
			return after(append(b, '='), i)
		})
		if err != nil {
			return b, err
		}
		if n == 0 {
			return b, fmt.Errorf("update of %s carries no column in its after image", d.QualifiedName())
		}
		// An ON UPDATE CURRENT_TIMESTAMP column the row image lacks (one
		// only the target has) keeps its value, as on a replica: the
		// source changed it, or not, in the image.
		for i := range d.Columns {
			if c := &d.Columns[i]; c.OnUpdate && !c.Generated && rc.AfterCols != nil && i < len(rc.AfterCols) && !rc.AfterCols[i] {
				b = appendIdent(append(appendIdent(append(b, ','), c.Name), '='), c.Name)
			}
		}
		return appendWhere(b, rc, d)
	case txn.Delete:
		b = appendTable(append(b, "DELETE FROM "...), d)
		return appendWhere(b, rc, d)
	}
	return b, fmt.Errorf("unknown row change kind %v", rc.Kind)
}

// appendColumns appends f for every writable column present in the image,
// joined by sep, and counts them.
func appendColumns(b []byte, d *txn.TableDef, present []bool, sep string, f func([]byte, int) ([]byte, error)) ([]byte, int, error) {
	n := 0
	for i := range d.Columns {
		if !writable(d, present, i) {
			continue
		}
		if n > 0 {
			b = append(b, sep...)
		}
		var err error
		if b, err = f(b, i); err != nil {
			return b, n, err
		}
		n++
	}
	return b, n, nil
}

func writable(d *txn.TableDef, present []bool, i int) bool {
	return !d.Columns[i].Generated && (present == nil || present[i])
}

// appendWhere locates the before image: by primary key, else by a NOT NULL
// unique key, else by every before-image column with <=> and LIMIT 1.
// A table whose columns are all generated has nothing to compare: every
// row of it is the same row, and MariaDB's replica takes the first it
// finds, as LIMIT 1 alone does.
func appendWhere(b []byte, rc *txn.RowChange, d *txn.TableDef) ([]byte, error) {
	var err error
	where := len(b)
	b = append(b, " WHERE "...)
	if k := d.RowKey(); k != nil && hasAll(rc.BeforeCols, k.Columns) {
		for j, i := range k.Columns {
			if j > 0 {
				b = append(b, " AND "...)
			}
			b = appendIdent(b, d.Columns[i].Name)
			b = append(b, '=')
			if b, err = AppendLiteral(b, rc.Before[i], rc.Table.Types[i], &d.Columns[i]); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	b, n, err := appendColumns(b, d, rc.BeforeCols, " AND ", func(b []byte, i int) ([]byte, error) {
		b = append(appendIdent(b, d.Columns[i].Name), "<=>"...)
		return AppendLiteral(b, rc.Before[i], rc.Table.Types[i], &d.Columns[i])
	})
	if err != nil {
		return b, err
	}
	if n == 0 {
		if !allGenerated(d) {
			return b, fmt.Errorf("cannot locate a row of %s: its before image has no column", d.QualifiedName())
		}
		b = b[:where]
	}
	return append(b, " LIMIT 1"...), nil
}

func allGenerated(d *txn.TableDef) bool {
	for i := range d.Columns {
		if !d.Columns[i].Generated {
			return false
		}
	}
	return true
}

func hasAll(present []bool, cols []int) bool {
	if present == nil {
		return true
	}
	for _, c := range cols {
		if !present[c] {
			return false
		}
	}
	return true
}

// rawAbove is the size from which a value that is not printable ASCII
// goes as its own bytes, quoted and escaped, instead of in hex: hex
// doubles it, and the statement must fit in the target's
// max_allowed_packet (16 MiB by default on MariaDB), where MariaDB's
// replica takes a row of up to 1 GiB. Smaller values stay in hex, which
// --print-sql shows readably.
const rawAbove = 64 << 10

// appendEscaped appends x as a quoted string literal of its bytes: the
// quote, the backslash and NUL escaped, every other byte as it is. The
// session's character_set_client is utf8mb4, in which no multi-byte
// sequence holds a byte below 0x80, so the server's lexer cannot take an
// escape or the closing quote for part of a character; the introducer
// before the literal gives the bytes their charset.
func appendEscaped(b, x []byte) []byte {
	b = slices.Grow(b, len(x)+2)
	b = append(b, '\'')
	from := 0 // x[from:i] needs no escape: copied in one append
	for i, c := range x {
		var esc string
		switch c {
		case '\'':
			esc = "''"
		case '\\':
			esc = `\\`
		case 0:
			esc = `\0`
		default:
			continue
		}
		b = append(b, x[from:i]...)
		b = append(b, esc...)
		from = i + 1
	}
	b = append(b, x[from:]...)
	return append(b, '\'')
}

// appendPrintable appends x as appendEscaped does when every byte of x
// is a printable ASCII character, in one pass; else it reports false
// (b keeps its length, the bytes past it are scratch).
func appendPrintable(b, x []byte) ([]byte, bool) {
	b = slices.Grow(b, len(x)+2)
	b = append(b, '\'')
	from := 0 // x[from:i] needs no escape: copied in one append
	for i, c := range x {
		var esc string
		switch {
		case c < 0x20 || c > 0x7e:
			return nil, false
		case c == '\'':
			esc = "''"
		case c == '\\':
			esc = `\\`
		default:
			continue
		}
		b = append(b, x[from:i]...)
		b = append(b, esc...)
		from = i + 1
	}
	b = append(b, x[from:]...)
	return append(b, '\''), true
}

// wideCharset: charsets in which ASCII text is not one byte per character.
func wideCharset(cs string) bool {
	return cs == "ucs2" || cs == "utf16" || cs == "utf16le" || cs == "utf32"
}

// divergedRow names the row a statement did not find (or found already
// there) for a divergence error: ": no row with key (id=5) matches the
// before image (id=5, v=3)". "" when unknown.
func divergedRow(rc *txn.RowChange, d *txn.TableDef) string {
	if rc == nil || d == nil {
		return ""
	}
	img, present, what := rc.Before, rc.BeforeCols, "before image"
	if rc.Kind == txn.Insert {
		img, present, what = rc.After, rc.AfterCols, "after image"
	}
	cols := func(idx []int) string {
		var parts []string
		for _, i := range idx {
			if i >= len(img) || (present != nil && !present[i]) {
				continue
			}
			v, err := AppendLiteral(nil, img[i], rc.Table.Types[i], &d.Columns[i])
			if err != nil {
				v = []byte("?")
			}
			if len(v) > 64 {
				v = append(v[:60:60], "..."...)
			}
			parts = append(parts, d.Columns[i].Name+"="+string(v))
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	all := make([]int, len(d.Columns))
	for i := range all {
		all[i] = i
	}
	key := ""
	if k := d.RowKey(); k != nil {
		key = " with key " + cols(k.Columns)
	}
	if rc.Kind == txn.Insert {
		return fmt.Sprintf(": a row%s is already there; expected none, to insert the %s %s", key, what, cols(all))
	}
	return fmt.Sprintf(": no row%s matches the expected %s %s", key, what, cols(all))
}
