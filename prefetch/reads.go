package prefetch

import (
	"strings"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/txn"
)

// chunkRows is the rows of one table whose index entries one SELECT
// reads: small, so that a unit's reads spread over every connection and
// keep close behind the worker, and large enough that a SELECT's round
// trip and parsing are shared by several page reads.
const chunkRows = 4

// table is what reading ahead needs of a target table: its definition
// (the catalog's) and every index of it, the non-unique ones included
// (the catalog holds only the unique ones): each is an index tree whose
// leaf page a row change touches.
type table struct {
	def     *txn.TableDef
	indexes []index
}

// index is one index of a table: its name and the columns of its entries,
// its own then the primary key's (an InnoDB secondary index entry carries
// the primary key), so that a lookup names exactly one entry.
type index struct {
	name    string
	primary bool
	columns []int // positions in def.Columns
}

// tables returns a table's read-ahead definition; nil when it has none
// (unknown, no primary key, or an error loading it).
type tables func(schema, name string) *table

// read is one SELECT and the place in its unit of the first row it
// reads for: the rows the unit changes before that one.
type read struct {
	sql string
	row int
}

// reads are the SELECTs that bring into the target's buffer pool the
// index pages the row changes of txs will touch, in the order a rendered
// unit touches them (table by table in first-touch order, a table's rows
// in first-touch order: a compacted unit's order when it only updates,
// as a lagging replica's units mostly do): for each row, its primary
// key's entry, and for each secondary index the entry of its before image
// (which an update or delete removes) and of its after image (which an
// insert or update writes). A row changed several times is read once,
// where it is first changed. Each SELECT reads one index for up to
// chunkRows rows of one table.
func reads(txs []*txn.Txn, lookup tables) []read {
	type row struct{ images [][]txn.Value } // before and after images
	type rows struct {
		t     *table
		types []byte // the binlog's column types (table map)
		byKey map[string]int
		rows  []row
	}
	byName := map[string]*rows{}
	var order []*rows
	for _, tx := range txs {
		for _, ch := range tx.Changes {
			rc := ch.Row
			if rc == nil {
				continue
			}
			r := byName[rc.Table.QualifiedName()]
			if r == nil {
				t := lookup(rc.Table.Schema, rc.Table.Name)
				if t == nil {
					continue
				}
				r = &rows{t: t, types: rc.Table.Types, byKey: map[string]int{}}
				byName[rc.Table.QualifiedName()] = r
				order = append(order, r)
			}
			img := rc.Before
			if len(img) == 0 {
				img = rc.After
			}
			key, ok := tuple(r.t.def, r.t.indexes[0], r.types, img)
			i, seen := r.byKey[key]
			if !ok || !seen {
				i = len(r.rows)
				r.rows = append(r.rows, row{})
				if ok {
					r.byKey[key] = i
				}
			}
			for _, img := range [][]txn.Value{rc.Before, rc.After} {
				if len(img) > 0 {
					r.rows[i].images = append(r.rows[i].images, img)
				}
			}
		}
	}
	var out []read
	at := 0
	for _, r := range order {
		for lo := 0; lo < len(r.rows); lo += chunkRows {
			var images [][]txn.Value
			for _, rw := range r.rows[lo:min(lo+chunkRows, len(r.rows))] {
				images = append(images, rw.images...)
			}
			for _, ix := range r.t.indexes {
				if q := selectEntries(r.t.def, ix, r.types, images); q != "" {
					out = append(out, read{sql: q, row: at + lo})
				}
			}
		}
		at += len(r.rows)
	}
	return out
}

// selectEntries is the SELECT of index ix's entries for images, read
// through the index alone: the SELECT list is the entry's columns, so
// InnoDB need not visit the rows for a secondary index. "" when no image
// gives a tuple.
func selectEntries(def *txn.TableDef, ix index, types []byte, images [][]txn.Value) string {
	seen := map[string]bool{}
	var tuples []string
	for _, img := range images {
		t, ok := tuple(def, ix, types, img)
		if ok && !seen[t] {
			seen[t] = true
			tuples = append(tuples, t)
		}
	}
	if len(tuples) == 0 {
		return ""
	}
	cols := make([]string, len(ix.columns))
	for i, c := range ix.columns {
		cols[i] = mysql.QuoteIdent(def.Columns[c].Name)
	}
	list := strings.Join(cols, ",")
	var b strings.Builder
	b.WriteString("SELECT " + list + " FROM " + mysql.QuoteIdent(def.Schema) + "." + mysql.QuoteIdent(def.Name) +
		" FORCE INDEX (" + mysql.QuoteIdent(ix.name) + ") WHERE (" + list + ") IN (")
	b.WriteString(strings.Join(tuples, ","))
	b.WriteString(")")
	return b.String()
}

// tuple is the literal (a,b,...) of an image's entry in ix; false when
// the image lacks a column, holds a NULL (an IN list finds no NULL) or a
// value with no literal.
func tuple(def *txn.TableDef, ix index, types []byte, img []txn.Value) (string, bool) {
	b := []byte{'('}
	for i, c := range ix.columns {
		if c >= len(img) || c >= len(types) || img[c] == nil {
			return "", false
		}
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = mysql.AppendLiteral(b, img[c], types[c], &def.Columns[c]); err != nil {
			return "", false
		}
	}
	return string(append(b, ')')), true
}
