package depend

import (
	"strings"

	"github.com/prepl/prepl/txn"
)

// catalog is an in-memory txn.Catalog keyed by "schema.table".
type catalog map[string]*txn.TableDef

func (c catalog) Table(schema, name string) (*txn.TableDef, bool) {
	d, ok := c[schema+"."+name]
	return d, ok
}

func (c catalog) add(d *txn.TableDef) catalog {
	d.Transactional = true
	c[d.Schema+"."+d.Name] = d
	return c
}

func intCol(name string) txn.ColumnDef { return txn.ColumnDef{Name: name, DataType: "int"} }

func textCol(name, collation string) txn.ColumnDef {
	cs, _, _ := strings.Cut(collation, "_")
	return txn.ColumnDef{Name: name, DataType: "varchar", Charset: cs, Collation: collation, Nullable: true}
}

func pk(cols ...int) txn.IndexDef { return txn.IndexDef{Name: "PRIMARY", Primary: true, Columns: cols} }

func uk(name string, cols ...int) txn.IndexDef { return txn.IndexDef{Name: name, Columns: cols} }

func def(qname string, cols []txn.ColumnDef, ix ...txn.IndexDef) *txn.TableDef {
	s, n, _ := strings.Cut(qname, ".")
	return &txn.TableDef{Schema: s, Name: n, Columns: cols, Indexes: ix}
}

// testCatalog holds one table per rule.
func testCatalog() catalog {
	c := catalog{}
	c.add(def("s.t1", []txn.ColumnDef{intCol("id"), textCol("u", "utf8mb4_general_ci"), intCol("v")}, pk(0), uk("u", 1)))
	c.add(def("s2.t1", []txn.ColumnDef{intCol("id"), textCol("u", "utf8mb4_general_ci"), intCol("v")}, pk(0), uk("u", 1)))
	c.add(def("s.bin", []txn.ColumnDef{intCol("id"), textCol("u", "utf8mb4_bin")}, pk(0), uk("u", 1)))
	c.add(def("s.vb", []txn.ColumnDef{intCol("id"), {Name: "u", DataType: "varbinary"}}, pk(0), uk("u", 1)))
	pre := uk("u3", 1)
	pre.Prefix = []int{3}
	c.add(def("s.pre", []txn.ColumnDef{intCol("id"), textCol("u", "utf8mb4_general_ci")}, pk(0), pre))
	c.add(def("s.prebin", []txn.ColumnDef{intCol("id"), {Name: "u", DataType: "varbinary"}}, pk(0), pre))
	c.add(def("s.ab", []txn.ColumnDef{intCol("id"), intCol("a"), intCol("b")}, pk(0), uk("ab", 1, 2)))
	c.add(def("s.nokey", []txn.ColumnDef{intCol("a"), intCol("b")}))
	c.add(def("s.num", []txn.ColumnDef{{Name: "f", DataType: "double"}, {Name: "d", DataType: "decimal"}}, pk(0), uk("d", 1)))
	c.add(def("s.uns", []txn.ColumnDef{{Name: "id", DataType: "tinyint", Unsigned: true}}, pk(0)))
	p := def("s.parent", []txn.ColumnDef{intCol("id"), intCol("v")}, pk(0))
	c.add(p)
	p.Referenced = true
	p.Cascades = []txn.CascadeRef{{Child: "s.child", Name: "fk", Columns: []int{0}, OnDelete: true, OnUpdate: true}}
	ch := def("s.child", []txn.ColumnDef{intCol("id"), intCol("pid")}, pk(0))
	ch.ForeignKeys = []txn.ForeignKeyDef{{Name: "fk", Columns: []int{1}, RefSchema: "s", RefTable: "parent", RefColumns: []string{"id"},
		OnDelete: "CASCADE", OnUpdate: "CASCADE"}}
	c.add(ch)
	// s.rparent and s.rchild: a foreign key without a cascading action.
	rp := def("s.rparent", []txn.ColumnDef{intCol("id"), intCol("v")}, pk(0))
	rp.Referenced = true
	c.add(rp)
	rc := def("s.rchild", []txn.ColumnDef{intCol("id"), intCol("pid")}, pk(0))
	rc.ForeignKeys = []txn.ForeignKeyDef{{Name: "fk", Columns: []int{1}, RefSchema: "s", RefTable: "rparent", RefColumns: []string{"id"},
		OnDelete: "RESTRICT", OnUpdate: "NO ACTION"}}
	c.add(rc)
	// s.rchildv: the same foreign key, on a row with a column besides it.
	rcv := def("s.rchildv", []txn.ColumnDef{intCol("id"), intCol("pid"), intCol("v")}, pk(0))
	rcv.ForeignKeys = []txn.ForeignKeyDef{{Name: "fkv", Columns: []int{1}, RefSchema: "s", RefTable: "rparent", RefColumns: []string{"id"},
		OnDelete: "NO ACTION", OnUpdate: "NO ACTION"}}
	c.add(rcv)
	c.add(def("s.trig", []txn.ColumnDef{intCol("id")}, pk(0)))
	c["s.trig"].HasTriggers = true
	// PRIMARY KEY (id, p WITHOUT OVERLAPS), PERIOD FOR p (s, e): the
	// key's columns are id, e, s; UNIQUE (n, p WITHOUT OVERLAPS) has a
	// nullable n.
	dateCol := func(name string) txn.ColumnDef { return txn.ColumnDef{Name: name, DataType: "date"} }
	per := pk(0, 3, 2)
	per.WithoutOverlaps = true
	perN := uk("n", 4, 3, 2)
	perN.WithoutOverlaps = true
	nullable := intCol("n")
	nullable.Nullable = true
	c.add(def("s.period", []txn.ColumnDef{intCol("id"), intCol("f"), dateCol("s"), dateCol("e"), nullable}, per, perN))
	c.add(def("s.myisam", []txn.ColumnDef{intCol("id")}, pk(0)))
	c["s.myisam"].Transactional = false
	return c
}

func table(qname string) *txn.Table {
	s, n, _ := strings.Cut(qname, ".")
	return &txn.Table{Schema: s, Name: n}
}

func all(vals []txn.Value) []bool {
	b := make([]bool, len(vals))
	for i := range b {
		b[i] = true
	}
	return b
}

func row(vals ...txn.Value) []txn.Value { return vals }

func ins(qname string, after ...txn.Value) txn.Change {
	return txn.Change{Row: &txn.RowChange{Kind: txn.Insert, Table: table(qname), After: after, AfterCols: all(after)}}
}

func del(qname string, before ...txn.Value) txn.Change {
	return txn.Change{Row: &txn.RowChange{Kind: txn.Delete, Table: table(qname), Before: before, BeforeCols: all(before)}}
}

func upd(qname string, before, after []txn.Value) txn.Change {
	return txn.Change{Row: &txn.RowChange{Kind: txn.Update, Table: table(qname),
		Before: before, BeforeCols: all(before), After: after, AfterCols: all(after)}}
}

// minimal marks columns of the before image absent (binlog_row_image=MINIMAL).
func minimal(c txn.Change, absentBefore ...int) txn.Change {
	for _, i := range absentBefore {
		c.Row.Before[i] = nil
		c.Row.BeforeCols[i] = false
	}
	return c
}

func ddl(schema, sql string) txn.Change {
	return txn.Change{Stmt: &txn.Statement{SQL: sql, Schema: schema, DDL: true}}
}

func stmt(schema, sql string) txn.Change {
	return txn.Change{Stmt: &txn.Statement{SQL: sql, Schema: schema}}
}

func mk(changes ...txn.Change) *txn.Txn {
	return &txn.Txn{Changes: changes, LastCommitted: -1, SequenceNumber: -1}
}

func str(s string) []byte { return []byte(s) }

func date(s string) txn.Temporal { return txn.Temporal(s) }
