package apply

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

// updates is n transactions, the i-th updating row i of s.t from v=0 to
// v=1, and the rows before them.
func updates(n int) ([]*txn.Txn, map[string][]txn.Value) {
	tbl := &txn.Table{Schema: "s", Name: "t"}
	both := []bool{true, true}
	rows := map[string][]txn.Value{}
	var txs []*txn.Txn
	for i := 1; i <= n; i++ {
		before, after := []txn.Value{int64(i), int64(0)}, []txn.Value{int64(i), int64(1)}
		rows["s.t/"+strconv.Itoa(i)] = before
		tx := mkTxn(i, "s")
		tx.Changes = []txn.Change{{Row: &txn.RowChange{Kind: txn.Update, Table: tbl, Before: before, After: after,
			BeforeCols: both, AfterCols: both}}}
		txs = append(txs, tx)
	}
	return txs, rows
}

// TestSlowHeadNoChurn: the next to commit waits for a row lock a session
// of someone else's holds, while later independent units have applied
// and wait for their turn. They wait: none is rolled back, nothing
// yields, however many times the lock waits are polled meanwhile; once
// the lock is released everything commits.
func TestSlowHeadNoChurn(t *testing.T) {
	txs, rows := updates(20)
	tgt := newMemTarget()
	tgt.rows["s.t"] = rows
	other, _ := tgt.Conn(context.Background())
	hold := mkTxn(99, "s")
	hold.Changes = txs[0].Changes
	if err := other.Send(context.Background(), &memBatch{txs: []*txn.Txn{hold}}); err != nil {
		t.Fatal(err)
	}
	var rollbacks atomic.Int64
	tgt.hook = func(op *memOp) error {
		if op.Kind == "rollback" && op.Conn != other.ID() {
			rollbacks.Add(1)
		}
		return nil
	}
	// other holds row 1, which the head updates, with an update of its
	// own; it rolls it back once the head has waited through five polls with three
	// later units prepared.
	go func() {
		until(func() bool {
			tgt.mu.Lock()
			defer tgt.mu.Unlock()
			prepared := 0
			for _, c := range tgt.conns {
				if c.open != nil && c.waiting == "" && c != other {
					prepared++
				}
			}
			return tgt.lockPolls >= 5 && prepared >= 3
		})
		other.Rollback(context.Background())
	}()
	st, err := runOn(t, tgt, txs, Resume{}, Config{Workers: 4, FixedWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, tgt, st, true)
	if len(st.Yields) != 0 || rollbacks.Load() != 0 || st.Retries != 0 {
		t.Fatalf("yields %v, %d rollbacks, %d retries while the head waited", st.Yields, rollbacks.Load(), st.Retries)
	}
	if tgt.lockPolls < 5 {
		t.Fatalf("lock waits polled %d times", tgt.lockPolls)
	}
}

// TestDivergedUnitNotCommitted: a row the target lacks makes the
// compacted unit surprise, the unit is applied again in source order,
// and the run stops with the target's divergence error: nothing of the
// unit is committed, the position stays before it.
func TestDivergedUnitNotCommitted(t *testing.T) {
	for _, planned := range []bool{false, true} {
		t.Run(map[bool]string{false: "rendered", true: "planned"}[planned], func(t *testing.T) {
			txs, rows := updates(10)
			delete(rows, "s.t/5")
			tgt := newMemTarget()
			tgt.rows["s.t"] = rows
			var target Target = memPlanner{tgt} // its compacted update of row 5 finds none
			if !planned {
				target = tgt
				tgt.hook = func(op *memOp) error {
					if op.Kind == "send" && op.Batch.compact {
						return ErrCompacted
					}
					return nil
				}
			}
			st, err := runOn(t, target, txs, Resume{}, Config{Workers: 1, UnitTxns: 10})
			if !errors.Is(err, ErrRowCount) || !strings.Contains(err.Error(), "0-1-5") {
				t.Fatalf("err = %v, want ErrRowCount naming 0-1-5", err)
			}
			checkRun(t, tgt, st, true)
			if len(tgt.log) != 0 || tgt.ckpt[SlotMain].LastGTID != "" || st.CompactFallbacks != 1 {
				t.Fatalf("%d commits, position %q, %d fallbacks", len(tgt.log), tgt.ckpt[SlotMain].LastGTID, st.CompactFallbacks)
			}
		})
	}
}

// TestWorkersOpenedAsUsed: Workers is a ceiling; a worker's connection is
// opened when it first gets a unit, so a run opens no more connections
// than the units in flight the controller allowed at its peak, plus one
// for a next-to-commit unit started over the limit.
func TestWorkersOpenedAsUsed(t *testing.T) {
	w := wl(19, 300, 10000)
	tgt := newMemTarget()
	tgt.hook = jitter(19)
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := runOn(t, tgt, w.txs, Resume{}, Config{Mode: depend.Writeset, Workers: 64, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, tgt, st, true)
	peak := 1
	for _, m := range regexp.MustCompile(`msg="units in flight" from=(\d+) to=(\d+)`).FindAllStringSubmatch(buf.String(), -1) {
		for _, s := range m[1:] {
			n, _ := strconv.Atoi(s)
			peak = max(peak, n)
		}
	}
	if opened := int(tgt.nextID); opened > peak+1 {
		t.Fatalf("%d connections opened for at most %d units in flight", opened, peak)
	}
}

// TestDDLRefused: a DDL the target refuses stops the run before it, what
// is before it committed and stored.
func TestDDLRefused(t *testing.T) {
	w := wl(20, 10, 1000)
	w.txs[4] = ddlTxn(5)
	tgt := newMemTarget()
	refused := memErr{Refused, "Table 't' already exists"}
	tgt.hook = func(op *memOp) error {
		if op.Kind == "ddl" {
			return refused
		}
		return nil
	}
	st, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: 3, UnitTxns: 2})
	if !errors.Is(err, refused) {
		t.Fatalf("err = %v", err)
	}
	checkFailedRun(t, tgt, st, true)
	if p := tgt.checkpoint(SlotMain); p.LastGTID != "0-1-4" || len(tgt.committed()) != 4 {
		t.Fatalf("stopped at %s with %d committed", p.LastGTID, len(tgt.committed()))
	}
}

// TestConnectRefused: a target that refuses a worker's connection (not a
// lost one: no retry helps) fails the run before anything is applied.
func TestConnectRefused(t *testing.T) {
	w := wl(21, 10, 1000)
	tgt := newMemTarget()
	denied := memErr{Fatal, "Access denied for user"}
	var n atomic.Int64
	tgt.hook = func(op *memOp) error {
		if op.Kind == "conn" && n.Add(1) > 1 {
			return denied
		}
		return nil
	}
	st, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: 3, FixedWorkers: true})
	if !errors.Is(err, denied) || st.Txns != 0 || len(tgt.committed()) != 0 || len(tgt.conns) != 0 {
		t.Fatalf("err = %v, %d applied, %d connections left open", err, st.Txns, len(tgt.conns))
	}
}
