package depend

import (
	"math/rand"
	"testing"

	"github.com/prepl/prepl/txn"
)

// inUnits groups w's transactions into commit units of at most max
// members with CanJoin, and returns the workload of merged units: each
// unit's ops are its members' in order.
func inUnits(mode Mode, w workload, max int) workload {
	out := workload{ops: map[uint64][]op{}, final: w.final}
	var cur []*txn.Txn
	flush := func() {
		if len(cur) == 0 {
			return
		}
		u := Merge(cur)
		out.txs = append(out.txs, u)
		for _, t := range cur {
			out.ops[u.Seq] = append(out.ops[u.Seq], w.ops[t.Seq]...)
		}
		cur = nil
	}
	for _, t := range w.txs {
		if len(cur) > 0 && (len(cur) == max || !CanJoin(mode, cur[0], cur[len(cur)-1], t)) {
			flush()
		}
		cur = append(cur, t)
	}
	flush()
	return out
}

// TestPropertyUnitsEqualSerial: scheduling merged commit units with the
// tracker still yields serial order's final state, in every mode.
func TestPropertyUnitsEqualSerial(t *testing.T) {
	all := []string{"s1.a", "s1.b", "s2.n", "s3.p", "s3.c"}
	runs := []struct {
		name string
		mode Mode
		tag  func(*rand.Rand, workload)
	}{
		{"writeset", Writeset, nil},
		{"domain", Domain, nil},
		{"schema", Schema, nil},
		{"commit-order-mariadb", CommitOrder, tagMariaDB},
		{"commit-order-mysql", CommitOrder, tagMySQL},
	}
	n := 1000
	if testing.Short() {
		n = 100
	}
	cat := modelCatalog()
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			merged := 0
			for i := range n {
				rng := rand.New(rand.NewSource(int64(i)))
				w := gen(rng, 5+rng.Intn(60), all)
				if r.tag != nil {
					r.tag(rng, w)
				}
				u := inUnits(r.mode, w, 1+rng.Intn(6))
				merged += len(w.txs) - len(u.txs)
				if err := simulate(rng, r.mode, cat, u); err != nil {
					t.Fatalf("seed %d: %v\n%s", i, err, dump(w))
				}
			}
			if merged == 0 {
				t.Fatal("no transactions were ever merged: the property was not exercised")
			}
		})
	}
}

func TestCanJoin(t *testing.T) {
	row := func(schema string, domain uint32, file string) *txn.Txn {
		tx := mk(upd(schema+".t", []txn.Value{int64(1)}, []txn.Value{int64(2)}))
		tx.Domain, tx.Start.File = domain, file
		return tx
	}
	ddlTx := mk(ddl("s", "ALTER TABLE t FORCE"))
	cases := []struct {
		name        string
		mode        Mode
		first, next *txn.Txn
		want        bool
	}{
		{"rows join", Writeset, row("a", 0, "f1"), row("b", 0, "f1"), true},
		{"DDL never joins", Writeset, row("a", 0, "f1"), ddlTx, false},
		{"nothing joins a DDL", Writeset, ddlTx, row("a", 0, ""), false},
		{"binlog file change ends a unit", CommitOrder, row("a", 0, "f1"), row("a", 0, "f2"), false},
		{"same domain", Domain, row("a", 1, "f"), row("b", 1, "f"), true},
		{"other domain", Domain, row("a", 1, "f"), row("a", 2, "f"), false},
		{"same schema", Schema, row("a", 0, "f"), row("a", 3, "f"), true},
		{"other schema", Schema, row("a", 0, "f"), row("b", 0, "f"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := CanJoin(c.mode, c.first, c.first, c.next); got != c.want {
				t.Fatalf("CanJoin = %v, want %v", got, c.want)
			}
		})
	}
}

func TestMergeTags(t *testing.T) {
	a, b, c := mk(), mk(), mk()
	a.Seq, b.Seq, c.Seq = 4, 5, 6
	a.GTID, c.GTID = "0-1-4", "0-1-6"
	a.Size, b.Size, c.Size = 10, 20, 30
	a.CommitID, b.CommitID, c.CommitID = 7, 7, 7
	a.Flags = txn.FlagAllowParallel | txn.FlagTransactional
	b.Flags = txn.FlagAllowParallel | txn.FlagTransactional | txn.FlagWaited
	c.Flags = txn.FlagTransactional
	u := Merge([]*txn.Txn{a, b, c})
	if u.Seq != 4 || u.GTID != "0-1-6" || u.Size != 60 || u.CommitID != 7 {
		t.Fatalf("merged seq/gtid/size/commit id = %d %q %d %d", u.Seq, u.GTID, u.Size, u.CommitID)
	}
	if u.Flags&txn.FlagWaited == 0 || u.Flags&txn.FlagAllowParallel != 0 {
		t.Fatalf("flags %b: want WAITED set and ALLOW_PARALLEL cleared", u.Flags)
	}
	c.CommitID = 8
	if Merge([]*txn.Txn{a, b, c}).CommitID != 0 {
		t.Fatal("a unit spanning two group commits must lose its commit id")
	}
	// MySQL clock: members 10..12; 11 waits for 10 (inside), 12 for 8 (outside).
	a.CommitID, b.CommitID, c.CommitID = 0, 0, 0
	a.LastCommitted, a.SequenceNumber = 5, 10
	b.LastCommitted, b.SequenceNumber = 10, 11
	c.LastCommitted, c.SequenceNumber = 8, 12
	u = Merge([]*txn.Txn{a, b, c})
	if u.LastCommitted != 9 || u.SequenceNumber != 10 {
		t.Fatalf("clock = %d/%d, want 9/10 (a member waiting inside the unit waits for all before it)", u.LastCommitted, u.SequenceNumber)
	}
}
