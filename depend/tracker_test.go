package depend

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prepl/prepl/txn"
)

// driver feeds a tracker and checks what it lets start.
type driver struct {
	tb  testing.TB
	tr  *Tracker
	seq uint64
}

func newDriver(tb testing.TB, mode Mode, cat txn.Catalog) *driver {
	return &driver{tb: tb, tr: New(mode, cat)}
}

func (d *driver) add(txs ...*txn.Txn) {
	for _, tx := range txs {
		d.seq++
		tx.Seq = d.seq
		d.tr.Add(tx)
	}
}

// ready checks that exactly want may start now, and returns their reasons.
func (d *driver) ready(want ...uint64) []Reason {
	d.tb.Helper()
	got := d.tr.Ready()
	var seqs []uint64
	var reasons []Reason
	for _, s := range got {
		seqs = append(seqs, s.Seq)
		reasons = append(reasons, s.Reason)
	}
	if !slices.Equal(seqs, want) {
		d.tb.Fatalf("Ready() = %v, want %v", seqs, want)
	}
	return reasons
}

func (d *driver) done(seqs ...uint64) {
	for _, s := range seqs {
		d.tr.Done(s)
	}
}

// TestWritesetPairs: for each pair, a is added, then b; b either starts at
// once (want ReasonNone) or waits for a with reason want.
func TestWritesetPairs(t *testing.T) {
	neg0 := -0.0
	cases := []struct {
		name string
		a, b *txn.Txn
		want Reason
	}{
		{"same primary key", mk(ins("s.t1", 1, str("a"), 1)), mk(upd("s.t1", row(1, str("a"), 1), row(1, str("a"), 2))), ReasonKeyConflict},
		{"different rows", mk(ins("s.t1", 1, str("a"), 1)), mk(ins("s.t1", 2, str("b"), 1)), ReasonNone},
		{"same values other table", mk(ins("s.t1", 1, str("a"), 1)), mk(ins("s2.t1", 1, str("a"), 1)), ReasonNone},
		{"before image of delete vs insert", mk(del("s.t1", 5, str("x"), 0)), mk(ins("s.t1", 5, str("y"), 0)), ReasonKeyConflict},
		{"primary key moved away", mk(upd("s.t1", row(1, str("a"), 0), row(2, str("a"), 0))), mk(ins("s.t1", 1, str("z"), 0)), ReasonKeyConflict},
		{"primary key moved onto", mk(del("s.t1", 2, str("q"), 0)), mk(upd("s.t1", row(1, str("a"), 0), row(2, str("a"), 0))), ReasonKeyConflict},
		{"bug 86078 delete then insert unique under other pk", mk(del("s.t1", 1, str("a"), 0)), mk(ins("s.t1", 2, str("a"), 0)), ReasonKeyConflict},
		{"swap unique values", mk(upd("s.t1", row(1, str("a"), 0), row(1, str("b"), 0))), mk(upd("s.t1", row(2, str("b"), 0), row(2, str("a"), 0))), ReasonKeyConflict},
		{"null unique: no key", mk(ins("s.t1", 1, nil, 0)), mk(ins("s.t1", 2, nil, 0)), ReasonNone},
		{"null part of composite unique", mk(ins("s.ab", 1, 7, nil)), mk(ins("s.ab", 2, 7, nil)), ReasonNone},
		{"composite unique equal", mk(ins("s.ab", 1, 7, 8)), mk(ins("s.ab", 2, 7, 8)), ReasonKeyConflict},
		{"composite unique differs", mk(ins("s.ab", 1, 7, 8)), mk(ins("s.ab", 2, 7, 9)), ReasonNone},
		{"ci collation case", mk(ins("s.t1", 1, str("a"), 0)), mk(ins("s.t1", 2, str("A"), 0)), ReasonKeyConflict},
		{"ci collation pad space", mk(ins("s.t1", 1, str("abc"), 0)), mk(ins("s.t1", 2, str("abc "), 0)), ReasonKeyConflict},
		{"ci collation accent", mk(ins("s.t1", 1, str("é"), 0)), mk(ins("s.t1", 2, str("E"), 0)), ReasonKeyConflict},
		{"ci collation sharp s", mk(ins("s.t1", 1, str("ß"), 0)), mk(ins("s.t1", 2, str("s"), 0)), ReasonKeyConflict},
		{"bin collation case", mk(ins("s.bin", 1, str("a"))), mk(ins("s.bin", 2, str("A"))), ReasonNone},
		{"bin collation pad space", mk(ins("s.bin", 1, str("abc"))), mk(ins("s.bin", 2, str("abc "))), ReasonKeyConflict},
		{"prefix index: same prefix", mk(ins("s.pre", 1, str("abcX"))), mk(ins("s.pre", 2, str("ABCy"))), ReasonKeyConflict},
		{"prefix index: characters, not bytes", mk(ins("s.pre", 1, str("äöüX"))), mk(ins("s.pre", 2, str("AOUY"))), ReasonKeyConflict},
		{"prefix index: short value", mk(ins("s.pre", 1, str("ab"))), mk(ins("s.pre", 2, str("ab X"))), ReasonKeyConflict},
		{"prefix index: other prefix", mk(ins("s.pre", 1, str("abcX"))), mk(ins("s.pre", 2, str("abdX"))), ReasonNone},
		{"binary prefix index: bytes", mk(ins("s.prebin", 1, str("ä1X"))), mk(ins("s.prebin", 2, str("ä1Y"))), ReasonKeyConflict},
		{"binary prefix index: other bytes", mk(ins("s.prebin", 1, str("äX"))), mk(ins("s.prebin", 2, str("äY"))), ReasonNone},
		{"varbinary trailing space", mk(ins("s.vb", 1, str("abc"))), mk(ins("s.vb", 2, str("abc "))), ReasonNone},
		{"varbinary case", mk(ins("s.vb", 1, str("a"))), mk(ins("s.vb", 2, str("A"))), ReasonNone},
		{"minus zero", mk(ins("s.num", 0.0, txn.Decimal("1"))), mk(ins("s.num", neg0, txn.Decimal("2"))), ReasonKeyConflict},
		{"decimal forms", mk(ins("s.num", 1.0, txn.Decimal("1.50"))), mk(ins("s.num", 2.0, txn.Decimal("01.5"))), ReasonKeyConflict},
		{"decimal zeros", mk(ins("s.num", 1.0, txn.Decimal("-0.00"))), mk(ins("s.num", 2.0, txn.Decimal("0"))), ReasonKeyConflict},
		{"decimal differs", mk(ins("s.num", 1.0, txn.Decimal("1.5"))), mk(ins("s.num", 2.0, txn.Decimal("1.05"))), ReasonNone},
		{"unsigned sign-extended", mk(ins("s.uns", int64(-1))), mk(ins("s.uns", int64(255))), ReasonKeyConflict},
		{"no-key table", mk(ins("s.nokey", 1, 2)), mk(ins("s.nokey", 3, 4)), ReasonNoKey},
		{"no-key table vs keyed table", mk(ins("s.nokey", 1, 2)), mk(ins("s.t1", 3, str("c"), 4)), ReasonNone},
		{"no-key table vs keyed row of it", mk(upd("s.t1", row(1, str("a"), 0), row(1, str("b"), 0))), mk(minimal(del("s.t1", 9, str("z"), 0), 1)), ReasonNoKey},
		{"key column missing from image", mk(minimal(del("s.t1", 9, str("z"), 0), 1)), mk(ins("s.t1", 3, str("c"), 4)), ReasonNoKey},
		{"fk children of one parent row", mk(ins("s.child", 1, 5)), mk(ins("s.child", 2, 5)), ReasonNone},
		{"fk child null reference", mk(ins("s.child", 1, nil)), mk(ins("s.child", 2, nil)), ReasonNone},
		{"fk parent change after child", mk(ins("s.child", 1, 5)), mk(del("s.parent", 5, 0)), ReasonForeignKey},
		{"fk child after parent change", mk(ins("s.parent", 5, 0)), mk(ins("s.child", 1, 5)), ReasonForeignKey},
		// An update that keeps its reference (and its key) checks nothing
		// and locks no parent row: it does not wait for a change to the
		// parent row. One that sets, drops or moves it does.
		{"fk child update keeping its reference, after a parent change",
			mk(upd("s.rparent", row(5, 0), row(5, 1))), mk(upd("s.rchildv", row(1, 5, 0), row(1, 5, 1))), ReasonNone},
		{"fk child update setting its reference, after a parent change",
			mk(upd("s.rparent", row(5, 0), row(5, 1))), mk(upd("s.rchildv", row(1, 6, 0), row(1, 5, 0))), ReasonForeignKey},
		{"fk parent delete after a child update dropping its reference",
			mk(upd("s.rchildv", row(1, 5, 0), row(1, 6, 0))), mk(del("s.rparent", 5, 0)), ReasonForeignKey},
		{"fk parent delete after a child update from NULL",
			mk(upd("s.rchildv", row(1, nil, 0), row(1, 5, 0))), mk(del("s.rparent", 5, 0)), ReasonForeignKey},
		{"fk child update moving its key, keeping its reference, after a parent change",
			mk(upd("s.rparent", row(5, 0), row(5, 1))), mk(upd("s.rchildv", row(1, 5, 0), row(2, 5, 0))), ReasonForeignKey},
		{"fk child update keeping its reference, image without it",
			mk(upd("s.rparent", row(5, 0), row(5, 1))), mk(minimal(upd("s.rchildv", row(1, 5, 0), row(1, 5, 1)), 1)), ReasonForeignKey},
		{"without overlaps: same id, overlapping periods, other bounds",
			mk(del("s.period", 1, 0, date("2000-01-01"), date("2000-03-01"), nil)),
			mk(ins("s.period", 1, 0, date("2000-02-01"), date("2000-04-01"), nil)), ReasonKeyConflict},
		{"without overlaps: a period moved onto another row's",
			mk(upd("s.period", row(1, 0, date("2000-02-01"), date("2000-04-01"), nil), row(1, 0, date("2000-02-01"), date("2000-02-15"), nil))),
			mk(ins("s.period", 1, 1, date("2000-02-15"), date("2000-05-01"), nil)), ReasonKeyConflict},
		{"without overlaps: other id", mk(ins("s.period", 1, 0, date("2000-01-01"), date("2000-03-01"), nil)),
			mk(ins("s.period", 2, 0, date("2000-01-01"), date("2000-03-01"), nil)), ReasonNone},
		{"without overlaps: same nullable part", mk(ins("s.period", 1, 0, date("2000-01-01"), date("2000-03-01"), 7)),
			mk(ins("s.period", 2, 0, date("2000-02-01"), date("2000-04-01"), 7)), ReasonKeyConflict},
		{"without overlaps: null part", mk(ins("s.period", 1, 0, date("2000-01-01"), date("2000-03-01"), nil)),
			mk(ins("s.period", 2, 0, date("2000-02-01"), date("2000-04-01"), nil)), ReasonNone},
		{"ddl after rows", mk(ins("s.t1", 1, str("a"), 1)), mk(ddl("s", "ALTER TABLE t1 ADD c INT")), ReasonDDL},
		{"rows after ddl", mk(ddl("s", "CREATE TABLE x (i INT)")), mk(ins("s2.t1", 1, str("a"), 1)), ReasonDDL},
		{"statement inside transaction", mk(ins("s.t1", 1, str("a"), 1)), mk(stmt("s", "UPDATE t1 SET v=v+1")), ReasonStatement},
		{"non-transactional flag", mk(ins("s.t1", 1, str("a"), 1)), func() *txn.Txn { tx := mk(ins("s2.t1", 1, str("a"), 1)); tx.NonTransactional = true; return tx }(), ReasonNonTransactional},
		{"non-transactional table", mk(ins("s.t1", 1, str("a"), 1)), mk(ins("s.myisam", 1)), ReasonNonTransactional},
		{"xa", func() *txn.Txn { tx := mk(ins("s.t1", 1, str("a"), 1)); tx.XA = true; return tx }(), mk(ins("s2.t1", 1, str("a"), 1)), ReasonXA},
		{"unknown table", mk(ins("s.t1", 1, str("a"), 1)), mk(ins("s.nope", 1)), ReasonUnknownTable},
		{"trigger table", mk(ins("s.t1", 1, str("a"), 1)), mk(ins("s.trig", 1)), ReasonTrigger},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDriver(t, Writeset, testCatalog())
			d.add(c.a, c.b)
			if c.want == ReasonNone {
				d.ready(1, 2)
				return
			}
			d.ready(1)
			d.done(1)
			if got := d.ready(2); got[0] != c.want {
				t.Fatalf("reason %q, want %q", got[0], c.want)
			}
			if got := d.tr.Stats()[c.want]; got != 1 {
				t.Fatalf("Stats()[%q] = %d, want 1", c.want, got)
			}
		})
	}
}

func TestForeignKeyReferenceIsParentRowKey(t *testing.T) {
	cat := testCatalog()
	cat["s.parent"].Cascades = nil // otherwise a parent delete is a barrier with no keys
	parent, _ := Keys(mk(ins("s.parent", 5, 0)), cat)
	child, _ := Keys(mk(ins("s.child", 1, 5)), cat)
	var ref *Lock
	for i, l := range child {
		if l.Reason == ReasonForeignKey {
			ref = &child[i]
		}
	}
	if ref == nil || !ref.Shared {
		t.Fatalf("child locks %+v: no shared foreign-key lock", child)
	}
	if !slices.ContainsFunc(parent, func(l Lock) bool { return l.Key == ref.Key && !l.Shared }) {
		t.Fatalf("child reference %x is not among the parent's exclusive keys %+v", ref.Key, parent)
	}
	// With the barrier lifted, the parent row change and its child conflict.
	d := newDriver(t, Writeset, cat)
	d.add(mk(del("s.parent", 5, 0)), mk(ins("s.child", 1, 5)), mk(ins("s.child", 2, 6)))
	d.ready(1, 3)
	d.done(1)
	if r := d.ready(2); r[0] != ReasonForeignKey {
		t.Fatalf("reason %q", r[0])
	}
}

func TestBarrierHoldsBackLaterIndependentWork(t *testing.T) {
	d := newDriver(t, Writeset, testCatalog())
	d.add(mk(ins("s.t1", 1, str("a"), 0)), mk(ins("s.t1", 2, str("b"), 0)),
		mk(ddl("s", "ALTER TABLE t1 ADD c INT")),
		mk(ins("s.t1", 3, str("c"), 0)), mk(ins("s2.t1", 4, str("d"), 0)))
	d.ready(1, 2)
	d.done(2)
	d.ready()
	d.done(1)
	if r := d.ready(3); r[0] != ReasonDDL {
		t.Fatalf("ddl reason %q", r[0])
	}
	d.done(3)
	if r := d.ready(4, 5); r[0] != ReasonDDL || r[1] != ReasonDDL {
		t.Fatalf("after-ddl reasons %q", r)
	}
}

func TestKeyChainWaitsForAllHolders(t *testing.T) {
	// 1 and 2 are independent; 3 touches both rows and must wait for both.
	d := newDriver(t, Writeset, testCatalog())
	d.add(mk(ins("s.t1", 1, str("a"), 0)), mk(ins("s.t1", 2, str("b"), 0)),
		mk(upd("s.t1", row(1, str("a"), 0), row(1, str("a"), 1)), upd("s.t1", row(2, str("b"), 0), row(2, str("b"), 1))),
		mk(del("s.t1", 1, str("a"), 1)))
	d.ready(1, 2)
	d.done(2)
	d.ready()
	d.done(1)
	d.ready(3)
	d.done(3)
	d.ready(4)
	if d.tr.Pending() != 1 {
		t.Fatalf("Pending() = %d", d.tr.Pending())
	}
}

// TestAddWhole: a transaction added without its keys is a barrier: it
// waits for every pending transaction, and those added after it with
// their keys wait for it, even on rows it does not touch; its keys are
// never computed (a catalog without the table: no unknown-table reason).
func TestAddWhole(t *testing.T) {
	d := newDriver(t, Writeset, testCatalog())
	d.add(mk(ins("s.t1", 1, str("a"), 0)))
	whole := mk(ins("s.nosuch", 2, nil, 0))
	d.seq++
	whole.Seq = d.seq
	d.tr.AddWhole(whole)
	d.add(mk(ins("s.t1", 3, str("c"), 0)), mk(ins("s2.t1", 4, str("d"), 0)))
	d.ready(1)
	if on := d.tr.WouldWait(mk(ins("s2.t1", 5, str("e"), 0))); on != 2 {
		t.Fatalf("WouldWait = %d, want 2 (the whole transaction)", on)
	}
	d.done(1)
	if r := d.ready(2); r[0] != ReasonWhole {
		t.Fatalf("whole reason %q", r[0])
	}
	d.done(2)
	if r := d.ready(3, 4); r[0] != ReasonWhole || r[1] != ReasonWhole {
		t.Fatalf("after-whole reasons %q", r)
	}
}

func TestSerial(t *testing.T) {
	d := newDriver(t, Serial, nil)
	d.add(mk(ins("s.t1", 1, str("a"), 0)), mk(ins("s.t1", 2, str("b"), 0)), mk(ins("s2.t1", 3, str("c"), 0)))
	d.ready(1)
	d.done(1)
	if r := d.ready(2); r[0] != ReasonSerial {
		t.Fatal(r)
	}
	d.done(2)
	d.ready(3)
}

func mariadb(cid uint64, c ...txn.Change) *txn.Txn {
	tx := mk(c...)
	tx.CommitID = cid
	tx.Flags = txn.FlagTransactional | txn.FlagAllowParallel
	if cid != 0 {
		tx.Flags |= txn.FlagGroupCommitID
	}
	return tx
}

func mysql(file string, lc, sn int64) *txn.Txn {
	tx := mk(ins("s.t1", sn, nil, 0))
	tx.LastCommitted, tx.SequenceNumber = lc, sn
	tx.Start.File = file
	return tx
}

func TestCommitOrderMariaDB(t *testing.T) {
	d := newDriver(t, CommitOrder, nil)
	r := ins("s.t1", 1, nil, 0)
	d.add(mariadb(10, r), mariadb(10, r), mariadb(10, r), mariadb(11, r), mariadb(11, r), mariadb(0, r), mariadb(12, r))
	d.ready(1, 2, 3)
	d.done(1, 2)
	d.ready()
	d.done(3)
	if rs := d.ready(4, 5); rs[0] != ReasonCommitOrder {
		t.Fatal(rs)
	}
	d.done(5)
	d.ready()
	d.done(4)
	d.ready(6)
	d.done(6)
	d.ready(7)
}

func TestCommitOrderMariaDBDDLNeverJoins(t *testing.T) {
	d := newDriver(t, CommitOrder, nil)
	d.add(mariadb(10, ins("s.t1", 1, nil, 0)), mariadb(10, ddl("s", "DROP TABLE x")), mariadb(10, ins("s.t1", 2, nil, 0)))
	d.ready(1)
	d.done(1)
	if r := d.ready(2); r[0] != ReasonDDL {
		t.Fatal(r)
	}
	d.done(2)
	d.ready(3)
}

func TestCommitOrderMySQL(t *testing.T) {
	d := newDriver(t, CommitOrder, nil)
	// File a: 1 and 2 run together, 3 after 1, 4 after 1 and 2, 5 with the first.
	d.add(mysql("a", 0, 1), mysql("a", 0, 2), mysql("a", 1, 3), mysql("a", 2, 4), mysql("a", 0, 5))
	d.ready(1, 2, 5)
	d.done(2)
	d.ready()
	d.done(1)
	d.ready(3, 4)
	// File b restarts the clock: its transactions wait for all of file a,
	// then run as their own clock says.
	d.add(mysql("b", 0, 1), mysql("b", 0, 2), mysql("b", 1, 3))
	d.ready()
	d.done(3, 4)
	d.ready()
	d.done(5)
	d.ready(6, 7)
	d.done(6)
	d.ready(8)
	// Without file names, a sequence number that does not increase tells.
	d.add(mysql("", 0, 1), mysql("", 0, 2))
	d.ready()
	d.done(7)
	d.ready()
	d.done(8)
	d.ready(9, 10)
}

func TestCommitOrderUntaggedIsSerial(t *testing.T) {
	d := newDriver(t, CommitOrder, nil)
	d.add(mk(ins("s.t1", 1, nil, 0)), mk(ins("s.t1", 2, nil, 0)))
	d.ready(1)
	d.done(1)
	if r := d.ready(2); r[0] != ReasonCommitOrder {
		t.Fatal(r)
	}
}

func TestOptimistic(t *testing.T) {
	waitedTx := mariadb(0, ins("s.t1", 2, nil, 0))
	waitedTx.Flags |= txn.FlagWaited
	noParallel := mariadb(0, ins("s.t1", 4, nil, 0))
	noParallel.Flags &^= txn.FlagAllowParallel
	mysqlTx := mk(ins("s.t1", 5, nil, 0)) // no MariaDB flags: nothing to obey
	for _, mode := range []Mode{Optimistic, Aggressive} {
		t.Run(string(mode), func(t *testing.T) {
			d := newDriver(t, mode, testCatalog())
			d.add(mariadb(0, ins("s.t1", 1, nil, 0)), waitedTx, mariadb(0, ins("s.t1", 3, nil, 0)), noParallel, mysqlTx)
			if mode == Aggressive {
				d.ready(1, 2, 3, 4, 5)
				return
			}
			d.ready(1, 3, 5)
			d.done(3)
			d.ready(4)
			d.done(1)
			if r := d.ready(2); r[0] != ReasonWaitedFlag {
				t.Fatal(r)
			}
			if got := d.tr.Stats()[ReasonWaitedFlag]; got != 2 {
				t.Fatalf("waited-flag stat %d", got)
			}
		})
	}
}

func TestOptimisticBarriers(t *testing.T) {
	nontrans := mk(ins("s.t1", 3, nil, 0))
	nontrans.NonTransactional = true
	d := newDriver(t, Optimistic, testCatalog())
	// A foreign key parent's change is a barrier too: its cascades do not
	// wait for an earlier unit's uncommitted child rows on every target.
	d.add(mk(ins("s.t1", 1, nil, 0)), mk(ddl("s", "ALTER TABLE t1 ADD c INT")), nontrans, mk(ins("s.myisam", 1)),
		mk(ins("s.child", 1, 5)), mk(del("s.parent", 5, 0)), mk(ins("s.t1", 1, nil, 0)))
	d.ready(1)
	d.done(1)
	d.ready(2)
	d.done(2)
	d.ready(3)
	d.done(3)
	d.ready(4)
	d.done(4)
	d.ready(5) // not 6: the parent's delete waits for the child's insert
	d.done(5)
	if got := d.ready(6); got[0] != ReasonForeignKey {
		t.Fatalf("parent delete: reason %q, want %q", got[0], ReasonForeignKey)
	}
	d.done(6)
	d.ready(7)
}

func TestSchema(t *testing.T) {
	d := newDriver(t, Schema, testCatalog())
	a := mk(ins("s.t1", 1, nil, 0))
	b := mk(ins("s2.t1", 1, nil, 0))
	c := mk(ins("s.nokey", 1, 2))
	both := mk(ins("s.t1", 2, nil, 0), ins("s2.t1", 2, nil, 0))
	d.add(a, b, c, both)
	for tx, want := range map[*txn.Txn]string{a: "schema:s", b: "schema:s2", both: ""} {
		if got := OrderKey(Schema, tx); got != want {
			t.Fatalf("OrderKey = %q, want %q", got, want)
		}
	}
	d.ready(1, 2)
	d.done(1)
	if r := d.ready(3); r[0] != ReasonSchema {
		t.Fatal(r)
	}
	d.done(3)
	d.ready()
	d.done(2)
	d.ready(4)
}

// TestSchemaOrdersAcrossSchemas: a transaction of another schema waits for
// an earlier unfinished one when the writeset says they conflict: a parent
// row referenced from another schema, a table with triggers (a barrier).
func TestSchemaOrdersAcrossSchemas(t *testing.T) {
	cat := testCatalog()
	ch := def("s2.kid", []txn.ColumnDef{intCol("id"), intCol("pid")}, pk(0))
	ch.ForeignKeys = []txn.ForeignKeyDef{{Name: "fk", Columns: []int{1}, RefSchema: "s", RefTable: "parent", RefColumns: []string{"id"}}}
	cat.add(ch)
	d := newDriver(t, Schema, cat)
	d.add(
		mk(ins("s2.kid", 1, 7)),          // 1: references s.parent 7
		mk(del("s.parent", 7, 0)),        // 2: parent change: barrier, waits for 1
		mk(ins("s2.t1", 1, str("a"), 0)), // 3: waits for the barrier
		mk(ins("s.trig", 1)),             // 4: triggers: barrier
		mk(ins("s2.t1", 2, str("b"), 0)), // 5: waits for 4
	)
	d.ready(1)
	d.done(1)
	if r := d.ready(2); r[0] != ReasonForeignKey {
		t.Fatal(r)
	}
	d.done(2)
	d.ready(3)
	d.done(3)
	if r := d.ready(4); r[0] != ReasonTrigger {
		t.Fatal(r)
	}
	d.done(4)
	d.ready(5)
}

func inDomain(dom uint32, c ...txn.Change) *txn.Txn {
	tx := mariadb(0, c...)
	tx.Domain = dom
	return tx
}

// TestDomain: domains commit apart (OrderKey) but their keys and barriers
// still order them.
func TestDomain(t *testing.T) {
	d := newDriver(t, Domain, testCatalog())
	d.add(
		inDomain(1, ddl("s", "ALTER TABLE t1 ADD c INT")),                  // 1: barrier for every domain
		inDomain(2, ins("s.t1", 1, str("a"), 0)),                           // 2: waits for the DDL
		inDomain(2, ins("s.t1", 2, str("b"), 0)),                           // 3: waits for the DDL
		inDomain(3, upd("s.t1", row(1, str("a"), 0), row(1, str("a"), 5))), // 4: same row as 2, other domain: waits for 2
		inDomain(1, ins("s.t1", 7, str("z"), 0)),                           // 5: independent: free once the DDL is done
		inDomain(3, ins("s.t1", 9, str("B "), 0)),                          // 6: unique value of 3 (case, pad): waits for 3
	)
	d.ready(1)
	d.done(1)
	d.ready(2, 3, 5)
	d.done(2)
	d.ready(4)
	d.done(3)
	d.ready(6)
	if got := OrderKey(Domain, inDomain(7)); got != "domain:7" {
		t.Fatal(got)
	}
	if got := OrderKey(Writeset, inDomain(7)); got != "" {
		t.Fatal(got)
	}
}

// TestDomainSwapOfUniqueValues: two domains swap a unique value back and
// forth through a free value; each step waits for the one before, in
// whichever domain it ran.
func TestDomainSwapOfUniqueValues(t *testing.T) {
	d := newDriver(t, Domain, testCatalog())
	d.add(
		inDomain(1, upd("s.t1", row(1, str("x"), 0), row(1, str("tmp"), 0))), // 1
		inDomain(2, upd("s.t1", row(2, str("y"), 0), row(2, str("x"), 0))),   // 2: takes x: waits for 1
		inDomain(1, upd("s.t1", row(1, str("tmp"), 0), row(1, str("y"), 0))), // 3: takes y: waits for 2
		inDomain(2, ins("s.t1", 3, str("q"), 0)),                             // 4: free
	)
	d.ready(1, 4)
	d.done(4, 1)
	d.ready(2)
	d.done(2)
	d.ready(3)
}

func TestParseMode(t *testing.T) {
	for _, m := range Modes {
		if got, err := ParseMode(string(m)); err != nil || got != m {
			t.Fatalf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	_, err := ParseMode("conservative")
	if err == nil || !strings.Contains(err.Error(), "writeset") || !strings.Contains(err.Error(), "commit-order") {
		t.Fatalf("error %v does not list the modes", err)
	}
}

func TestInvariantPanics(t *testing.T) {
	mustPanic := func(name, want string, f func()) {
		t.Helper()
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), want) {
				t.Fatalf("%s: panic %v, want one naming %q", name, r, want)
			}
		}()
		f()
	}
	tr := New(Writeset, testCatalog())
	tx := mk(ins("s.t1", 1, nil, 0))
	tx.Seq = 5
	tr.Add(tx)
	mustPanic("out of order", "strictly increasing", func() { tr.Add(&txn.Txn{Seq: 5}) })
	mustPanic("done before start", "not started", func() { tr.Done(5) })
	mustPanic("done unknown", "not pending", func() { tr.Done(9) })
	mustPanic("unknown mode", "unknown mode", func() { New("fast", nil) })
	mustPanic("whole out of order", "strictly increasing", func() { tr.AddWhole(&txn.Txn{Seq: 5}) })
	mustPanic("whole in another mode", "only mode writeset", func() { New(CommitOrder, nil).AddWhole(&txn.Txn{Seq: 1}) })
}

// TestForeignKeyCascadeBarriers: only a change that can set off a
// cascading foreign key is a barrier (writeset and optimistic alike); a
// parent whose foreign keys have no cascading action is a table like any
// other, ordered against its children by the parent row key.
func TestForeignKeyCascadeBarriers(t *testing.T) {
	cat := testCatalog()
	cases := []struct {
		name string
		tx   *txn.Txn
		want Reason
	}{
		{"insert into a cascading parent", mk(ins("s.parent", 5, 0)), ReasonNone},
		{"delete from a cascading parent", mk(del("s.parent", 5, 0)), ReasonForeignKey},
		{"update of a cascading parent's other column", mk(upd("s.parent", row(5, 0), row(5, 1))), ReasonNone},
		{"update of a cascading parent's referenced column", mk(upd("s.parent", row(5, 0), row(6, 0))), ReasonForeignKey},
		{"update whose image lacks the referenced column", mk(minimal(upd("s.parent", row(5, 0), row(5, 1)), 0)), ReasonForeignKey},
		{"delete from a NO ACTION parent", mk(del("s.rparent", 5, 0)), ReasonNone},
		{"update of a NO ACTION parent's key", mk(upd("s.rparent", row(5, 0), row(6, 0))), ReasonNone},
		{"insert into a child", mk(ins("s.child", 1, 5)), ReasonNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, got := Keys(c.tx, cat); got != c.want {
				t.Errorf("Keys: barrier %q, want %q", got, c.want)
			}
			if got := OptimisticBarrier(c.tx, cat); got != c.want {
				t.Errorf("OptimisticBarrier: %q, want %q", got, c.want)
			}
		})
	}
	// The NO ACTION parent's delete and a later child insert that
	// references the same row conflict; another parent row does not.
	d := newDriver(t, Writeset, cat)
	d.add(mk(del("s.rparent", 5, 0)), mk(ins("s.rchild", 1, 5)), mk(ins("s.rchild", 2, 6)))
	d.ready(1, 3)
	d.done(1)
	if r := d.ready(2); r[0] != ReasonForeignKey {
		t.Fatalf("child after its parent's delete: reason %q, want %q", r[0], ReasonForeignKey)
	}
}
