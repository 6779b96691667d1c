package depend

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestPropertyMemoKeys: the keys a transaction or a unit gets through its
// memo (memoKeys, what the tracker asks) are exactly what Keys computes
// from scratch, in order, with the same sharing and reasons; whether its
// members' keys were asked before or not; and after the catalog gives a
// table a new definition (a DDL, a reload), the memo is not used: keys
// follow the new definition.
func TestPropertyMemoKeys(t *testing.T) {
	tables := []string{"s1.a", "s1.b", "s2.n", "s3.p", "s3.c", "s4.c"}
	folded, invalidated, shared := 0, 0, 0
	for i := range 300 {
		rng := rand.New(rand.NewSource(int64(i)))
		cat := modelCatalog()
		w := gen(rng, 2+rng.Intn(30), tables)
		check := func(what string, tx *txn.Txn) {
			t.Helper()
			want, wantWhy := Keys(tx, cat)
			got, why := memoKeys(tx, cat)
			if why != wantWhy || !slices.Equal(got, want) {
				t.Fatalf("seed %d: %s seq %d: memoKeys %v %v, Keys %v %v", i, what, tx.Seq, got, why, want, wantWhy)
			}
		}
		for _, tx := range w.txs {
			if rng.Intn(2) == 0 {
				check("member", tx) // asked before its unit, as WouldWait does
			}
		}
		var units [][]*txn.Txn
		for lo := 0; lo < len(w.txs); {
			hi := min(len(w.txs), lo+1+rng.Intn(6))
			units = append(units, w.txs[lo:hi])
			u := Merge(w.txs[lo:hi])
			check("unit", u)
			check("unit again", u)
			if hi-lo > 1 {
				if m := u.KeysMemo.(*unitMemo).own; m != nil && m.why == ReasonNone {
					folded++
				}
			}
			lo = hi
		}
		// The same units merged again, as another simulation does: the
		// fold kept on the first member serves them.
		for _, ms := range units {
			if len(ms) > 1 && findFold(ms, cat) != nil {
				shared++
			}
			check("unit merged again", Merge(ms))
		}
		// A new definition of s3.p without its primary key: every memo
		// that read it must be recomputed.
		p := *cat["s3.p"]
		p.Indexes = nil
		cat["s3.p"] = &p
		for _, tx := range w.txs {
			m, _ := tx.KeysMemo.(*memo)
			if m != nil && !m.valid(tx, cat) {
				invalidated++
			}
			check("member after the new definition", tx)
		}
		for _, ms := range units {
			check("unit after the new definition", Merge(ms))
		}
	}
	if folded == 0 || invalidated == 0 || shared == 0 {
		t.Fatalf("units folded from members: %d, memos made stale by a new definition: %d, folds found again: %d: the workloads test nothing",
			folded, invalidated, shared)
	}
}

// TestMemoKeysCopy: a copy of a transaction given other changes does not
// use the original's memo (compaction, filters and the renderer copy a
// Txn and replace its changes).
func TestMemoKeysCopy(t *testing.T) {
	cat := modelCatalog()
	rng := rand.New(rand.NewSource(1))
	w := gen(rng, 40, []string{"s1.a"})
	var a, b *txn.Txn
	for _, tx := range w.txs {
		if len(tx.Changes) >= 2 && tx.Changes[0].Row != nil && tx.Changes[1].Row != nil {
			a = tx
			break
		}
	}
	if a == nil {
		t.Fatal("no transaction of two row changes generated")
	}
	memoKeys(a, cat)
	c := *a
	c.Changes = c.Changes[1:]
	b = &c
	want, _ := Keys(b, cat)
	got, _ := memoKeys(b, cat)
	if !slices.Equal(got, want) {
		t.Fatalf("copy with fewer changes: memoKeys %v, Keys %v", got, want)
	}
	c2 := *a
	c2.Changes = slices.Clone(a.Changes)
	c2.Changes[0], c2.Changes[1] = c2.Changes[1], c2.Changes[0]
	want, _ = Keys(&c2, cat)
	got, _ = memoKeys(&c2, cat)
	if !slices.Equal(got, want) {
		t.Fatalf("copy with reordered changes: memoKeys %v, Keys %v", got, want)
	}
}
