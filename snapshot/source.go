package snapshot

import (
	"strings"

	"github.com/prepl/prepl/tabledef"
)

// How the copy and verify read the source: one read for every target.
// Each writer converts the text SourceExpr gives (postgres.FromText and
// its COPY text, mysql's LOAD DATA text and INSERT literals), so the form
// of that text is the contract of Target.WriteChunk, stated here.

// SourceExpr is the MySQL select expression that reads c exactly, as text:
// FLOAT widened to DOUBLE (MySQL prints a FLOAT to 6 digits), BIT and
// YEAR as numbers, strings as their raw bytes in the column's charset
// (converted by the writer, as the binlog's bytes are). TIMESTAMP needs
// the session time zone '+00:00'.
func SourceExpr(c *tabledef.Column) string {
	q := quoteMy(c.Name)
	k, _ := tabledef.KindOf(c)
	switch k {
	case tabledef.KindFloat:
		return "CAST(" + q + " AS DOUBLE)"
	case tabledef.KindBit, tabledef.KindYear:
		return q + "+0"
	case tabledef.KindText:
		return "CAST(" + q + " AS BINARY)"
	case tabledef.KindDate, tabledef.KindDatetime, tabledef.KindTimestamp, tabledef.KindTime:
		// As text: a driver with parseTime would turn it into a time.Time.
		return "CAST(" + q + " AS CHAR)"
	}
	return q
}

func quoteMy(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// stringEscapes escapes a string literal as mysql.QuoteString does: the
// copy's sessions have an empty sql_mode, where backslashes escape.
var stringEscapes = strings.NewReplacer(`'`, `''`, `\`, `\\`, "\x00", `\0`)

func quoteString(s string) string { return "'" + stringEscapes.Replace(s) + "'" }

// keyExpr is the MySQL expression copy and verify order a source table by
// for its primary key column c, and bound a chunk by, in the (key, ...) >
// (?, ...) that starts the next chunk: the column itself, with three
// exceptions. ENUM, SET and BIT are ordered as their numbers: ORDER BY
// sorts an ENUM by member number but > compares it with a string as a
// string, so a chunk would not start where the last one ended. With
// bytewise (verify), strings, ENUM and SET are ordered by the bytes of
// their UTF-8 text, which is the order of PostgreSQL's "C" collation and
// of any other target, rather than by the column's collation: a _ci
// collation puts 'a' before 'B', PostgreSQL's C after, and a chunk bounded
// on one side must be the same rows on the other. That order uses no
// index (each chunk sorts the table); copy keeps the column's own order,
// it reads one side only. And FLOAT as the DOUBLE it is exactly: MySQL
// prints a FLOAT to 6 digits.
func keyExpr(c *tabledef.Column, bytewise bool) string {
	q := quoteMy(c.Name)
	k, _ := tabledef.KindOf(c)
	switch {
	case bytewise && (k == tabledef.KindText || k == tabledef.KindEnum || k == tabledef.KindSet):
		return "CAST(CONVERT(" + q + " USING utf8mb4) AS BINARY)"
	case k == tabledef.KindEnum || k == tabledef.KindSet || k == tabledef.KindBit:
		return q + "+0"
	case k == tabledef.KindFloat:
		return SourceExpr(c)
	}
	return q
}

// keyExprs is keyExpr of each of t's key columns.
func keyExprs(t *table, bytewise bool) []string {
	var out []string
	for _, k := range t.key {
		out = append(out, keyExpr(t.def.Column(k), bytewise))
	}
	return out
}
