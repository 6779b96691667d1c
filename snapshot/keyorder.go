package snapshot

import "github.com/prepl/prepl/postgres"

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
func keyExpr(c *postgres.Column, bytewise bool) string {
	q := quoteMy(c.Name)
	k, _ := postgres.KindOf(c)
	switch {
	case bytewise && (k == postgres.KindText || k == postgres.KindEnum || k == postgres.KindSet):
		return "CAST(CONVERT(" + q + " USING utf8mb4) AS BINARY)"
	case k == postgres.KindEnum || k == postgres.KindSet || k == postgres.KindBit:
		return q + "+0"
	case k == postgres.KindFloat:
		return postgres.SourceExpr(c)
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
