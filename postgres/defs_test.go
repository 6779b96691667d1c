package postgres

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestTranslateDefsFollowsDDL runs DDL scripts through TranslateDefs and
// checks the definitions the binlog's row images are read with after
// each: column order (FIRST/AFTER), types, keys, renames and drops.
func TestTranslateDefsFollowsDDL(t *testing.T) {
	cases := []struct {
		name string
		ddl  []string
		want string // the definitions, one table a line (see showDefs)
	}{
		{"create", []string{"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))"},
			"db.t: id int pk, v varchar"},
		{"add column after and first", []string{"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))",
			"ALTER TABLE t ADD COLUMN a INT AFTER id, ADD COLUMN z BIGINT UNSIGNED FIRST, ADD w TEXT"},
			"db.t: z bigint unsigned, id int pk, a int, v varchar, w text"},
		{"modify, change, rename column", []string{"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), e ENUM('a'))",
			"ALTER TABLE t MODIFY v TEXT, CHANGE e e2 ENUM('a','b') AFTER id",
			"ALTER TABLE t RENAME COLUMN id TO k"},
			"db.t: k int pk, e2 enum(a,b), v text"},
		{"drop column and keys", []string{"CREATE TABLE t (id INT, a INT, b INT, PRIMARY KEY (id), UNIQUE KEY u (a, b))",
			"ALTER TABLE t DROP COLUMN a", "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (b)", "DROP INDEX u ON t"},
			"db.t: id int, b int pk"},
		{"create index", []string{"CREATE TABLE t (id INT, a INT NOT NULL)", "CREATE UNIQUE INDEX ua ON t (a)"},
			"db.t: id int, a int uk:ua"},
		{"rename table", []string{"CREATE TABLE t (id INT)", "CREATE TABLE u (id INT)", "RENAME TABLE t TO t2, u TO other.u",
			"ALTER TABLE t2 RENAME TO t3"},
			"db.t3: id int\nother.u: id int"},
		{"drop table and database", []string{"CREATE TABLE t (id INT)", "CREATE TABLE other.x (id INT)", "CREATE TABLE u (id INT)",
			"DROP TABLE IF EXISTS t", "DROP DATABASE other", "TRUNCATE TABLE u"},
			"db.u: id int"},
		{"create if not exists keeps the first", []string{"CREATE TABLE t (id INT)", "CREATE TABLE IF NOT EXISTS t (x TEXT)"},
			"db.t: id int"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defs := Defs{}
			for _, q := range c.ddl {
				before := defs.Clone()
				snapshot := showDefs(before)
				if _, err := TranslateDefs(q, "db", Options{}, defs); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if got := showDefs(before); got != snapshot {
					t.Fatalf("%s changed the definitions of before it in place:\n%s\nwas\n%s", q, got, snapshot)
				}
			}
			if got := showDefs(defs); got != c.want {
				t.Errorf("definitions:\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// showDefs prints each table as "schema.name: col type [unsigned] [pk|uk:NAME], ...".
func showDefs(d Defs) string {
	var lines []string
	for _, t := range d {
		var cols []string
		for _, c := range t.Columns {
			s := c.Name + " " + c.Type
			if len(c.Elems) > 0 {
				s += "(" + strings.Join(c.Elems, ",") + ")"
			}
			if c.Unsigned {
				s += " unsigned"
			}
			for _, ix := range t.Indexes {
				if len(ix.Columns) == 1 && strings.EqualFold(ix.Columns[0], c.Name) {
					if ix.Primary {
						s += " pk"
					} else if ix.Unique {
						s += " uk:" + ix.Name
					}
				}
			}
			cols = append(cols, s)
		}
		lines = append(lines, fmt.Sprintf("%s.%s: %s", t.Schema, t.Name, strings.Join(cols, ", ")))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestTableKnownNowhere: a table neither in the catalog nor described by
// its table map (no full row metadata) is an error naming it.
func TestTableKnownNowhere(t *testing.T) {
	c := newCatalog(Defs{})
	tb := &txn.Table{Schema: "shop", Name: "orders", Types: []byte{txn.TypeLong}}
	_, err := c.lookup(tb)
	if !errors.Is(err, ErrNoTable) || !strings.Contains(err.Error(), "shop.orders") || !strings.Contains(err.Error(), "binlog_row_metadata=FULL") {
		t.Fatalf("got %v, want ErrNoTable naming shop.orders and binlog_row_metadata=FULL", err)
	}
	tb.Names = []string{"id"}
	if _, err := c.lookup(tb); err != nil {
		t.Fatalf("with full row metadata: %v", err)
	}
}
