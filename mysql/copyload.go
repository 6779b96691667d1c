package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/prepl/prepl/tabledef"
)

// A chunk goes to a MySQL/MariaDB target as LOAD DATA LOCAL INFILE of
// tab-separated text streamed from memory (the driver's reader handler):
// the server reads each field straight into its column, where a
// multi-row INSERT of hex literals is parsed as SQL first (about twice
// the bytes, and the parser's CPU). The values are the source's own
// (snapshot.SourceExpr) and keep every byte:
//
//   - The file is CHARACTER SET binary: no conversion, each string
//     column receives the bytes it had on the source (SourceExpr reads
//     strings as BINARY, in the column's own character set).
//   - NULL is \N; backslash, tab, newline, carriage return and NUL are
//     backslash-escaped, so a value never ends a field or a line early
//     and the two characters \N are not NULL.
//   - Values that are not a column's own bytes go through a user variable
//     and a SET: BIT is read as its number (a field would be stored as the
//     bytes of its digits), YEAR as its number (the string '0' is 2000, the
//     number 0 is 0000), ENUM, SET and JSON as the utf8mb4 text the
//     source session sent. The AUTO_INCREMENT column too: MariaDB's LOAD
//     DATA gives a field of 0 the next number despite NO_AUTO_VALUE_ON_ZERO,
//     where a SET stores it as it is.
//
// LOCAL turns errors on rows (a duplicate key, a bad value) into
// warnings, as the server cannot stop the client's stream; the rows
// affected are checked, so a row skipped as a duplicate fails the chunk
// as the INSERT's duplicate-key error would. Bad values are warnings in
// the copy's non-strict sql_mode for INSERT too.

// loadable reports whether every column of d can go through LOAD DATA.
// Spatial columns go as INSERT literals, and so do strings in ucs2,
// utf16, utf16le and utf32: MariaDB 10.11 loads them exactly from binary
// text (TestMySQLCopyExact does, with this check removed), but MySQL's
// manual says LOAD DATA cannot read those character sets.
func loadable(d *tabledef.Table) bool {
	for i := range d.Columns {
		c := &d.Columns[i]
		if c.Generated != "" {
			continue
		}
		k, err := tabledef.KindOf(c)
		if err != nil || k == tabledef.KindSpatial {
			return false
		}
		switch strings.ToLower(c.Charset) {
		case "ucs2", "utf16", "utf16le", "utf32":
			return false
		}
	}
	return true
}

// loadTargets is LOAD DATA's column list and SET clause for d: the
// columns the file fills, a user variable for each one converted.
func loadTargets(d *tabledef.Table) (cols, set string) {
	var cs, ss []string
	for i := range d.Columns {
		c := &d.Columns[i]
		if c.Generated != "" {
			continue
		}
		k, _ := tabledef.KindOf(c)
		v := "@v" + strconv.Itoa(i)
		switch {
		case c.AutoInc:
			ss = append(ss, QuoteIdent(c.Name)+" = "+v)
		case k == tabledef.KindBit:
			ss = append(ss, QuoteIdent(c.Name)+" = CAST("+v+" AS UNSIGNED)")
		case k == tabledef.KindYear:
			ss = append(ss, QuoteIdent(c.Name)+" = CAST("+v+" AS SIGNED)")
		case k == tabledef.KindEnum || k == tabledef.KindSet || k == tabledef.KindJSON:
			ss = append(ss, QuoteIdent(c.Name)+" = CONVERT("+v+" USING utf8mb4)")
		default:
			cs = append(cs, QuoteIdent(c.Name))
			continue
		}
		cs = append(cs, v)
	}
	cols = "(" + strings.Join(cs, ",") + ")"
	if len(ss) > 0 {
		set = " SET " + strings.Join(ss, ", ")
	}
	return cols, set
}

// escapes maps each byte that appendField escapes to the letter after
// its backslash.
var escapes = [256]byte{'\\': '\\', '\t': 't', '\n': 'n', '\r': 'r', 0: '0'}

// appendField appends v as one field of LOAD DATA's text.
func appendField(b []byte, v []byte) []byte {
	if v == nil {
		return append(b, '\\', 'N')
	}
	from := 0
	for i, c := range v {
		if e := escapes[c]; e != 0 {
			b = append(b, v[from:i]...)
			b = append(b, '\\', e)
			from = i + 1
		}
	}
	return append(b, v[from:]...)
}

// loadText is rows as LOAD DATA's text: generated columns left out.
func loadText(d *tabledef.Table, rows [][][]byte, size int) []byte {
	b := make([]byte, 0, size+size/16+len(rows)*len(d.Columns)+64)
	for _, row := range rows {
		n := 0
		for i, v := range row {
			if d.Columns[i].Generated != "" {
				continue
			}
			if n > 0 {
				b = append(b, '\t')
			}
			n++
			b = appendField(b, v)
		}
		b = append(b, '\n')
	}
	return b
}

var loadSeq atomic.Uint64

// loadChunk runs LOAD DATA LOCAL INFILE of rows into d on c, inside the
// caller's transaction, and checks that every row was inserted.
func loadChunk(ctx context.Context, c *sql.Conn, d *tabledef.Table, rows [][][]byte) error {
	size := 0
	for _, row := range rows {
		for _, v := range row {
			size += len(v)
		}
	}
	text := loadText(d, rows, size)
	name := "prepl-copy-" + strconv.FormatUint(loadSeq.Add(1), 10)
	gomysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(text) })
	defer gomysql.DeregisterReaderHandler(name)
	cols, set := loadTargets(d)
	q := "LOAD DATA LOCAL INFILE 'Reader::" + name + "' INTO TABLE " + QuoteIdent(d.Schema) + "." + QuoteIdent(d.Name) +
		" CHARACTER SET binary FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' " + cols + set
	res, err := c.ExecContext(ctx, q)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != int64(len(rows)) {
		return fmt.Errorf("LOAD DATA inserted %d of %d rows (a row already on the target? the server skips a duplicate key with a warning)", n, len(rows))
	}
	return nil
}
