package snapshot

import (
	"strconv"

	"github.com/prepl/prepl/postgres"
)

// keyOrder is how copy and verify order a source table by a primary key
// column and bound a chunk by it: the MySQL expression in ORDER BY and in
// the (key, ...) > (?, ...) that starts the next chunk, and how a value
// read through it is passed back as that ?.
type keyOrder struct {
	expr    string
	numeric bool // integers: passed as integers
	bytes   bool // passed as bytes, not as text in the connection's charset
}

// orderOf returns the order of key column c. The column itself, with
// three exceptions. ENUM, SET and BIT are ordered as their numbers: ORDER BY
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
func orderOf(c *postgres.Column, bytewise bool) keyOrder {
	q := quoteMy(c.Name)
	k, _ := postgres.KindOf(c)
	switch {
	case bytewise && (k == postgres.KindText || k == postgres.KindEnum || k == postgres.KindSet):
		return keyOrder{expr: "CAST(CONVERT(" + q + " USING utf8mb4) AS BINARY)", bytes: true}
	case k == postgres.KindEnum || k == postgres.KindSet || k == postgres.KindBit:
		return keyOrder{expr: q + "+0", numeric: true}
	case k == postgres.KindInt || k == postgres.KindYear:
		return keyOrder{expr: q, numeric: true}
	case k == postgres.KindFloat:
		return keyOrder{expr: postgres.SourceExpr(c)}
	case k == postgres.KindBinary:
		return keyOrder{expr: q, bytes: true}
	}
	return keyOrder{expr: q}
}

// arg is a value read through o.expr as an argument compared with it.
// Integers go as integers: MySQL compares an integer column with a string
// as doubles, which cannot tell 2^53 from 2^53+1.
func (o keyOrder) arg(raw string) any {
	if o.numeric {
		if i, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(raw, 10, 64); err == nil {
			return u
		}
	}
	if o.bytes {
		return []byte(raw)
	}
	return raw
}

// keyOrders returns the order of each of t's key columns, and their
// expressions.
func keyOrders(t *table, bytewise bool) ([]keyOrder, []string) {
	var os []keyOrder
	var exprs []string
	for _, k := range t.key {
		o := orderOf(t.def.Column(k), bytewise)
		os = append(os, o)
		exprs = append(exprs, o.expr)
	}
	return os, exprs
}
