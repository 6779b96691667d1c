package compact

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/prepl/prepl/txn"
)

// Tables of the cases: k (id PK, v), u (id PK, e UNIQUE), fk (id PK, FK
// without a cascading action), cp (id PK, v; parent of a foreign key ON
// DELETE CASCADE ON UPDATE CASCADE on id), nk (no key), wo (a key
// WITHOUT OVERLAPS).
func defs() map[string]*txn.TableDef {
	col := func(n string) txn.ColumnDef { return txn.ColumnDef{Name: n, DataType: "int"} }
	pk := txn.IndexDef{Name: "PRIMARY", Primary: true, Columns: []int{0}}
	return map[string]*txn.TableDef{
		"k":  {Schema: "s", Name: "k", Columns: []txn.ColumnDef{col("id"), col("v")}, Indexes: []txn.IndexDef{pk}, Transactional: true},
		"u":  {Schema: "s", Name: "u", Columns: []txn.ColumnDef{col("id"), col("e")}, Indexes: []txn.IndexDef{pk, {Name: "e", Columns: []int{1}}}, Transactional: true},
		"fk": {Schema: "s", Name: "fk", Columns: []txn.ColumnDef{col("id"), col("p")}, Indexes: []txn.IndexDef{pk}, Transactional: true, ForeignKeys: []txn.ForeignKeyDef{{Name: "f", Columns: []int{1}}}},
		"cp": {Schema: "s", Name: "cp", Columns: []txn.ColumnDef{col("id"), col("v")}, Indexes: []txn.IndexDef{pk}, Transactional: true,
			Referenced: true, Cascades: []txn.CascadeRef{{Child: "s.c", Name: "f", Columns: []int{0}, OnDelete: true, OnUpdate: true}}},
		"nk":  {Schema: "s", Name: "nk", Columns: []txn.ColumnDef{col("a"), col("b")}, Transactional: true},
		"m":   {Schema: "s", Name: "m", Columns: []txn.ColumnDef{col("id"), col("v")}, Indexes: []txn.IndexDef{pk}},
		"mnk": {Schema: "s", Name: "mnk", Columns: []txn.ColumnDef{col("a"), col("b")}},
		// wo: a primary key WITHOUT OVERLAPS, as far as compaction asks
		// (a real one has columns before the period's end and start).
		"wo": {Schema: "s", Name: "wo", Columns: []txn.ColumnDef{col("e"), col("s")}, Indexes: []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: []int{0, 1}, WithoutOverlaps: true}}, Transactional: true},
	}
}

func lookup(schema, name string) (*txn.TableDef, error) {
	if d, ok := defs()[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("no table %s", name)
}

var maps = map[string]*txn.Table{}

func tbl(name string) *txn.Table {
	if maps[name] == nil {
		maps[name] = &txn.Table{Schema: "s", Name: name, Types: []byte{3, 3}}
	}
	return maps[name]
}

func row(vs ...int64) []txn.Value {
	out := make([]txn.Value, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

func ins(t string, after []txn.Value) txn.Change {
	return txn.Change{Row: &txn.RowChange{Kind: txn.Insert, Table: tbl(t), After: after, AfterCols: []bool{true, true}}}
}
func upd(t string, before, after []txn.Value) txn.Change {
	return txn.Change{Row: &txn.RowChange{Kind: txn.Update, Table: tbl(t), Before: before, After: after,
		BeforeCols: []bool{true, true}, AfterCols: []bool{true, true}}}
}
func del(t string, before []txn.Value) txn.Change {
	return txn.Change{Row: &txn.RowChange{Kind: txn.Delete, Table: tbl(t), Before: before, BeforeCols: []bool{true, true}}}
}
func tx(ch ...txn.Change) *txn.Txn { return &txn.Txn{Changes: ch} }

type want struct {
	deletes, inserts, updates [][]txn.Value
}

func TestUnit(t *testing.T) {
	partial := upd("k", row(1, 1), row(1, 2))
	partial.Row.BeforeCols = []bool{true, false}
	relaxed := ins("k", row(9, 9))
	relaxed.Row.Flags = txn.RowsFlagRelaxedUniqueCheck
	cases := []struct {
		name    string
		txs     []*txn.Txn
		ok      bool
		nets    map[string]want // by table
		ordered int
		dropped int
		fk      bool // the plan has foreign keys (checks off on the target)
	}{
		{name: "updates of one row collapse to its final image",
			txs: []*txn.Txn{tx(upd("k", row(1, 1), row(1, 2))), tx(upd("k", row(1, 2), row(1, 3)))},
			ok:  true, nets: map[string]want{"k": {updates: [][]txn.Value{row(1, 3)}}}, dropped: 1},
		{name: "delete then insert of one key is an overwrite",
			txs: []*txn.Txn{tx(del("k", row(1, 1))), tx(ins("k", row(1, 5)))},
			ok:  true, nets: map[string]want{"k": {updates: [][]txn.Value{row(1, 5)}}}, dropped: 1},
		{name: "insert then delete leaves nothing",
			txs: []*txn.Txn{tx(ins("k", row(2, 1))), tx(del("k", row(2, 1)))},
			ok:  true, nets: map[string]want{"k": {}}, dropped: 2},
		{name: "a row changed and changed back is not written",
			txs: []*txn.Txn{tx(upd("k", row(1, 1), row(1, 2)), upd("k", row(1, 2), row(1, 1)))},
			ok:  true, nets: map[string]want{"k": {}}, dropped: 2},
		{name: "a key update moves the row: delete the old key, insert the new",
			txs: []*txn.Txn{tx(upd("k", row(1, 1), row(7, 1)))},
			ok:  true, nets: map[string]want{"k": {deletes: [][]txn.Value{row(1, 1)}, inserts: [][]txn.Value{row(7, 1)}}}, dropped: -1},
		{name: "a key swap through a free key overwrites both",
			txs: []*txn.Txn{tx(upd("k", row(1, 10), row(3, 10)), upd("k", row(2, 20), row(1, 20)), upd("k", row(3, 10), row(2, 10)))},
			ok:  true, nets: map[string]want{"k": {updates: [][]txn.Value{row(1, 20), row(2, 10)}}}, dropped: 1},
		{name: "a second unique key keeps the table in source order",
			txs: []*txn.Txn{tx(upd("u", row(1, 1), row(1, 2)), ins("k", row(4, 4)))},
			ok:  true, ordered: 1, nets: map[string]want{"k": {inserts: [][]txn.Value{row(4, 4)}}}},
		{name: "a foreign key without a cascading action compacts, with checks off",
			txs: []*txn.Txn{tx(ins("fk", row(1, 1)), ins("fk", row(2, 1))), tx(upd("fk", row(1, 1), row(1, 2)))},
			ok:  true, fk: true, nets: map[string]want{"fk": {inserts: [][]txn.Value{row(1, 2), row(2, 1)}}}, dropped: 1},
		{name: "a cascading parent's inserts and updates of other columns compact",
			txs: []*txn.Txn{tx(ins("cp", row(1, 1))), tx(upd("cp", row(1, 1), row(1, 2)), upd("cp", row(3, 1), row(3, 2)))},
			ok:  true, fk: true, nets: map[string]want{"cp": {inserts: [][]txn.Value{row(1, 2)}, updates: [][]txn.Value{row(3, 2)}}}, dropped: 1},
		{name: "a delete from a cascading parent keeps the unit in source order",
			txs: []*txn.Txn{tx(ins("k", row(1, 1))), tx(del("cp", row(1, 1)))}, ok: false},
		{name: "an update of a cascading parent's key keeps the unit in source order",
			txs: []*txn.Txn{tx(upd("cp", row(1, 1), row(2, 1)))}, ok: false},
		{name: "no key keeps the table in source order",
			txs: []*txn.Txn{tx(ins("nk", row(1, 1)))}, ok: true, ordered: 1, nets: map[string]want{}},
		{name: "a key WITHOUT OVERLAPS keeps the table in source order",
			txs: []*txn.Txn{tx(upd("wo", row(2, 1), row(3, 1))), tx(ins("wo", row(5, 3)))}, ok: true, ordered: 2, nets: map[string]want{}},
		{name: "a partial image keeps the table in source order",
			txs: []*txn.Txn{tx(partial, ins("k", row(5, 5)))}, ok: true, ordered: 2, nets: map[string]want{}},
		{name: "relaxed unique checks keep the table in source order",
			txs: []*txn.Txn{tx(relaxed)}, ok: true, ordered: 1, nets: map[string]want{}},
		{name: "an insert of a row the unit holds contradicts: no plan",
			txs: []*txn.Txn{tx(ins("k", row(1, 1))), tx(ins("k", row(1, 2)))}, ok: false},
		{name: "an update of a row the unit deleted contradicts: no plan",
			txs: []*txn.Txn{tx(del("k", row(1, 1))), tx(upd("k", row(1, 1), row(1, 2)))}, ok: false},
		{name: "statements keep the unit in source order",
			txs: []*txn.Txn{tx(txn.Change{Stmt: &txn.Statement{SQL: "DO 1"}})}, ok: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ok, err := Unit(c.txs, lookup)
			if err != nil {
				t.Fatal(err)
			}
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			if len(p.Ordered) != c.ordered {
				t.Fatalf("%d ordered steps, want %d", len(p.Ordered), c.ordered)
			}
			if p.Dropped != c.dropped {
				t.Fatalf("dropped %d, want %d", p.Dropped, c.dropped)
			}
			if p.ForeignKeys != c.fk {
				t.Fatalf("ForeignKeys = %v, want %v", p.ForeignKeys, c.fk)
			}
			got := map[string]want{}
			for _, n := range p.Nets {
				got[n.Def.Name] = want{n.Deletes, n.Inserts, n.Updates}
			}
			if !reflect.DeepEqual(got, c.nets) {
				t.Fatalf("nets = %v\nwant   %v", got, c.nets)
			}
		})
	}
}

// TestIdempotent: every key a unit touched ends deleted or overwritten
// with its final image, whatever part of the unit had taken effect; what
// keys cannot decide is refused.
func TestIdempotent(t *testing.T) {
	cases := []struct {
		name string
		txs  []*txn.Txn
		ok   bool
		nets map[string]want // by table: deletes and updates (overwrites) only
	}{
		{name: "a non-transactional table qualifies (Unit leaves it in order)",
			txs: []*txn.Txn{tx(ins("m", row(1, 1)), upd("m", row(2, 2), row(2, 3)))},
			ok:  true, nets: map[string]want{"m": {updates: [][]txn.Value{row(1, 1), row(2, 3)}}}},
		{name: "a row inserted then deleted is deleted (a crash may have left the insert)",
			txs: []*txn.Txn{tx(ins("m", row(2, 1))), tx(del("m", row(2, 1)))},
			ok:  true, nets: map[string]want{"m": {deletes: [][]txn.Value{row(2, 1)}}}},
		{name: "a row changed and changed back is written back",
			txs: []*txn.Txn{tx(upd("m", row(1, 1), row(1, 2)), upd("m", row(1, 2), row(1, 1)))},
			ok:  true, nets: map[string]want{"m": {updates: [][]txn.Value{row(1, 1)}}}},
		{name: "a key update deletes the old key and overwrites the new",
			txs: []*txn.Txn{tx(upd("m", row(1, 1), row(7, 1)))},
			ok:  true, nets: map[string]want{"m": {deletes: [][]txn.Value{row(1, 1)}, updates: [][]txn.Value{row(7, 1)}}}},
		{name: "transactional tables in the same unit qualify too",
			txs: []*txn.Txn{tx(ins("k", row(3, 3)), del("m", row(4, 4)))},
			ok:  true, nets: map[string]want{"k": {updates: [][]txn.Value{row(3, 3)}}, "m": {deletes: [][]txn.Value{row(4, 4)}}}},
		{name: "a table without a key cannot be written idempotently",
			txs: []*txn.Txn{tx(ins("mnk", row(1, 1)))}},
		{name: "a second unique key: an overwrite could meet another row",
			txs: []*txn.Txn{tx(ins("m", row(1, 1)), upd("u", row(1, 1), row(1, 2)))}},
		{name: "foreign keys refuse",
			txs: []*txn.Txn{tx(ins("fk", row(1, 1)))}},
		{name: "statements refuse",
			txs: []*txn.Txn{tx(txn.Change{Stmt: &txn.Statement{SQL: "DO 1"}})}},
		{name: "contradicting changes refuse",
			txs: []*txn.Txn{tx(ins("m", row(1, 1))), tx(ins("m", row(1, 2)))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ok, err := Idempotent(c.txs, lookup)
			if err != nil {
				t.Fatal(err)
			}
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			got := map[string]want{}
			for _, n := range p.Nets {
				if len(n.Inserts) > 0 {
					t.Fatalf("%s: plain inserts %v: a retry would meet its own rows", n.Def.Name, n.Inserts)
				}
				got[n.Def.Name] = want{deletes: n.Deletes, updates: n.Updates}
			}
			if !reflect.DeepEqual(got, c.nets) {
				t.Fatalf("nets = %v\nwant   %v", got, c.nets)
			}
		})
	}
}

func TestUnknownTableIsAnError(t *testing.T) {
	x := ins("k", row(1, 1))
	x.Row.Table = &txn.Table{Schema: "s", Name: "missing", Types: []byte{3, 3}}
	if _, _, err := Unit([]*txn.Txn{tx(x)}, lookup); err == nil {
		t.Fatal("want the lookup error")
	}
}
