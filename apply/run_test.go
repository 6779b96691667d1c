package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/txn"
)

// The engine's runtime driven against memTarget (memtarget_test.go): each
// test scripts the target's faults with a hook and checks what the run
// left on the target, what it stored as its position and what it counted.

func runOn(t *testing.T, tgt Target, txs []*txn.Txn, res Resume, cfg Config) (Stats, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Run(ctx, &sliceSource{txs: txs}, tgt, res, cfg)
}

// jitter returns a hook that sleeps up to 300µs before each send and
// commit, from seed: workers finish, and acknowledge, in another order
// than they started.
func jitter(seed uint64) func(op *memOp) error {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 2))
	return func(op *memOp) error {
		if op.Kind != "send" && op.Kind != "commit" {
			return nil
		}
		mu.Lock()
		d := time.Duration(r.IntN(300)) * time.Microsecond
		mu.Unlock()
		time.Sleep(d)
		return nil
	}
}

// until polls cond (which may lock tgt.mu) until it holds, for a hook that
// stalls an operation until the engine has done something else; false if
// it never did.
func until(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

func (t *memTarget) sentOrWaiting(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.conns {
		if c.open != nil && c.open.has(id) {
			return true
		}
	}
	for _, c := range t.log {
		for _, tx := range c.Txns {
			if tx.ID() == id {
				return true
			}
		}
	}
	return false
}

// TestRunModes: every mode, one or several workers, commit units of one
// or several transactions (compacted by the engine's plan, as for the
// MySQL target), acknowledgements in random order: the target
// ends with the source's rows, each transaction committed once, in
// source order where the mode keeps one commit order and in order per
// schema (domain) where it keeps one per schema (domain).
func TestRunModes(t *testing.T) {
	for _, mode := range depend.Modes {
		for _, workers := range []int{1, 4} {
			for _, unit := range []int{1, 6} {
				t.Run(fmt.Sprintf("%s/w%d/u%d", mode, workers, unit), func(t *testing.T) {
					t.Parallel()
					w := wl(uint64(workers*10+unit), 150, 40, "a", "b")
					tgt := newMemTarget()
					tgt.hook = jitter(uint64(unit))
					var target Target = tgt
					if unit > 1 {
						target = memPlanner{tgt}
					}
					st, err := runOn(t, target, w.txs, Resume{}, Config{Mode: mode, Workers: workers, FixedWorkers: true, UnitTxns: unit})
					if err != nil {
						t.Fatal(err)
					}
					inOrder := mode != depend.Schema && mode != depend.Domain || workers == 1
					checkRun(t, tgt, st, inOrder)
					checkRows(t, tgt, w.want)
					if len(tgt.committed()) != len(w.txs) {
						t.Fatalf("%d committed, want %d", len(tgt.committed()), len(w.txs))
					}
					if unit > 1 && st.CompactedRows == 0 {
						t.Errorf("nothing compacted in units of %d", unit)
					}
					// In order per schema (modes schema and domain map
					// schema b to domain 1), and each slot's row at its last.
					last := map[string]*txn.Txn{}
					for _, tx := range tgt.committed() {
						s := tx.Changes[0].Row.Table.Schema
						if p := last[s]; p != nil && p.Seq > tx.Seq {
							t.Errorf("%s committed after %s, of the same schema", tx.ID(), p.ID())
						}
						last[s] = tx
					}
					if !inOrder {
						for slot, p := range tgt.ckpt {
							if p.LastGTID == "" {
								t.Errorf("slot %s: %+v", slot, p)
							}
						}
					}
				})
			}
		}
	}
}

// TestCommitOrderWithReorderedAcks: the first transaction's statements
// are answered only once the three after it are prepared; they must
// still commit after it.
func TestCommitOrderWithReorderedAcks(t *testing.T) {
	w := wl(1, 40, 1000) // distinct keys: all may run at once
	tgt := newMemTarget()
	stalled := false
	tgt.hook = func(op *memOp) error {
		if op.Kind == "send" && op.Batch.has("0-1-1") && !stalled {
			stalled = until(func() bool {
				return tgt.sentOrWaiting("0-1-2") && tgt.sentOrWaiting("0-1-3") && tgt.sentOrWaiting("0-1-4")
			})
		}
		return nil
	}
	st, err := runOn(t, tgt, w.txs, Resume{}, Config{Mode: depend.Writeset, Workers: 4, FixedWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	if !stalled {
		t.Fatal("transactions 2 to 4 were never sent while 1 was stalled")
	}
	checkRun(t, tgt, st, true)
	checkRows(t, tgt, w.want)
}

// TestDeadlockRetried: the next to commit, alone, fails with a deadlock
// three times and is retried (slave_transaction_retries); more than
// Retries stops the run naming it, with what is before it committed.
func TestDeadlockRetried(t *testing.T) {
	for _, tc := range []struct {
		name     string
		retries  int
		failures int
		wantErr  bool
	}{
		{"within retries", 5, 3, false},
		{"beyond retries", 2, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := wl(2, 10, 5)
			tgt := newMemTarget()
			n := 0
			tgt.hook = func(op *memOp) error {
				if op.Kind == "send" && op.Batch.has("0-1-5") && n < tc.failures {
					n++
					return errDeadlock
				}
				return nil
			}
			st, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: 1, Retries: tc.retries})
			checkRun(t, tgt, st, true)
			if tc.wantErr {
				if !errors.Is(err, sequencer.ErrGaveUp) || !strings.Contains(err.Error(), "0-1-5") {
					t.Fatalf("err = %v, want ErrGaveUp naming 0-1-5", err)
				}
				if p := tgt.checkpoint(SlotMain); p.LastGTID != "0-1-4" || st.Txns != 4 {
					t.Fatalf("stopped at %s with %d applied, want 0-1-4 and 4", p.LastGTID, st.Txns)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, tgt, w.want)
			if st.RetriesBy[sequencer.RetryDeadlock] != uint64(tc.failures) || st.Errors["retry"] != uint64(tc.failures) {
				t.Fatalf("retries %v, errors %v: want %d deadlocks", st.RetriesBy, st.Errors, tc.failures)
			}
		})
	}
}

// TestCompactedFallback: a compacted unit the target refuses with
// ErrCompacted is rolled back and sent again uncompacted, its members in
// source order, on the same connection; only that unit.
func TestCompactedFallback(t *testing.T) {
	w := wl(3, 40, 10)
	tgt := newMemTarget()
	var mu sync.Mutex
	var refused, resent *memBatch
	var compacted int
	tgt.hook = func(op *memOp) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case op.Kind == "send" && op.Batch.has("0-1-12") && op.Batch.compact:
			refused = op.Batch
			return fmt.Errorf("UPDATE matched 0 rows: %w", ErrCompacted)
		case op.Kind == "send" && op.Batch.has("0-1-12"):
			resent = op.Batch
		case op.Kind == "commit" && op.Batch.compact:
			compacted += op.Batch.Saved()
		}
		return nil
	}
	st, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: 1, UnitTxns: 5})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, tgt, st, true)
	checkRows(t, tgt, w.want)
	if refused == nil || resent == nil || resent.compact || resent.ids() != refused.ids() {
		t.Fatalf("refused %v, then sent %v: want the same members uncompacted", refused, resent)
	}
	if st.CompactFallbacks != 1 || st.CompactedRows != uint64(compacted) || compacted == 0 {
		t.Fatalf("fallbacks %d, compacted rows %d (target committed %d saved)", st.CompactFallbacks, st.CompactedRows, compacted)
	}
	// With NoCompact nothing is sent compacted.
	tgt2 := newMemTarget()
	tgt2.hook = func(op *memOp) error {
		if op.Kind == "send" && op.Batch.compact {
			t.Errorf("%s sent compacted with NoCompact", op.IDs())
		}
		return nil
	}
	if _, err := runOn(t, tgt2, w.txs, Resume{}, Config{Workers: 1, UnitTxns: 5, NoCompact: true}); err != nil {
		t.Fatal(err)
	}
}

// TestLostConnection: the connection breaks while a unit is sent, or
// while it commits, either before the commit took place or after (its
// answer lost): the worker reconnects; a unit whose commit took place is
// counted once and not applied again, one whose commit did not is
// applied again; nothing is counted that did not commit.
func TestLostConnection(t *testing.T) {
	for _, tc := range []struct {
		kind string
		err  error
	}{
		{"send", errLost},
		{"commit", errLost},
		{"commit", errAckLost},
	} {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%v/w%d", tc.kind, tc.err, workers), func(t *testing.T) {
				w := wl(4, 60, 20)
				tgt := newMemTarget()
				var once sync.Once
				hit := false
				tgt.hook = func(op *memOp) (err error) {
					if op.Kind == tc.kind && op.Batch != nil && op.Batch.has("0-1-30") {
						once.Do(func() { hit, err = true, tc.err })
					}
					return err
				}
				st, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: workers, FixedWorkers: true, UnitTxns: 4})
				if err != nil {
					t.Fatal(err)
				}
				if !hit {
					t.Fatal("the fault never fired")
				}
				checkRun(t, tgt, st, true)
				checkRows(t, tgt, w.want)
				if st.Reconnects != 1 {
					t.Fatalf("%d reconnects for one connection lost", st.Reconnects)
				}
			})
		}
	}
}

// TestTargetDownResume: the target goes away for good in the middle of a
// run with units in flight; the run fails once reconnecting has lasted
// ReconnectTimeout, having counted only what committed, and its stored
// positions let the next run, from the source's start, apply each
// transaction exactly once.
func TestTargetDownResume(t *testing.T) {
	for _, mode := range []depend.Mode{depend.Writeset, depend.Schema, depend.Domain} {
		t.Run(string(mode), func(t *testing.T) {
			w := wl(5, 120, 30, "a", "b")
			tgt := newMemTarget()
			tgt.retryFor = 200 * time.Millisecond
			var commits int
			var mu sync.Mutex
			tgt.hook = func(op *memOp) error {
				mu.Lock()
				defer mu.Unlock()
				if op.Kind == "commit" {
					if commits++; commits == 12 {
						tgt.setDown(true)
						return errLost
					}
				}
				return nil
			}
			cfg := Config{Mode: mode, Workers: 4, FixedWorkers: true, UnitTxns: 3, ReconnectTimeout: 200 * time.Millisecond}
			st, err := runOn(t, tgt, w.txs, Resume{}, cfg)
			if err == nil {
				t.Fatal("the run did not fail with its target gone")
			}
			inOrder := mode == depend.Writeset
			checkFailedRun(t, tgt, st, inOrder)
			first := len(tgt.committed())
			if first == 0 || first >= len(w.txs) {
				t.Fatalf("%d committed before the target went", first)
			}
			tgt.hook = jitter(5)
			tgt.setDown(false)
			res, err := LoadResume(context.Background(), tgt)
			if err != nil {
				t.Fatal(err)
			}
			st2, err := runOn(t, tgt, w.txs, res, cfg)
			if err != nil {
				t.Fatal(err)
			}
			st2.Txns += uint64(first)
			checkRun(t, tgt, st2, inOrder)
			checkRows(t, tgt, w.want)
			if st2.Skipped != uint64(first) {
				t.Fatalf("second run skipped %d, want the %d the first committed", st2.Skipped, first)
			}
		})
	}
}

// TestReconnectFails: a connection lost and never back fails the run
// with both errors, counting only what committed.
func TestReconnectFails(t *testing.T) {
	for _, kind := range []string{"send", "commit"} {
		t.Run(kind, func(t *testing.T) {
			w := wl(6, 30, 10)
			tgt := newMemTarget()
			tgt.hook = func(op *memOp) error {
				if op.Kind == kind && op.Batch != nil && op.Batch.has("0-1-10") {
					tgt.setDown(true)
					return errLost
				}
				return nil
			}
			st, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: 1, ReconnectTimeout: 150 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), "reconnecting failed") {
				t.Fatalf("err = %v", err)
			}
			checkRun(t, tgt, st, true)
			// Reconnecting is tried once, for ReconnectTimeout, not
			// once more when the failure is reported.
			if st.Txns != 9 || st.Reconnects != 1 {
				t.Fatalf("%d applied, want 9; %d reconnects, want 1", st.Txns, st.Reconnects)
			}
		})
	}
}

// TestTargetUnreachableAtStart: opening connections and loading table
// definitions are retried while the target is away (Target.Retry).
func TestTargetUnreachableAtStart(t *testing.T) {
	w := wl(7, 20, 10)
	tgt := newMemTarget()
	fails := map[string]int{"conn": 2, "load": 2}
	var mu sync.Mutex
	tgt.hook = func(op *memOp) error {
		mu.Lock()
		defer mu.Unlock()
		if fails[op.Kind] > 0 {
			fails[op.Kind]--
			return errLost
		}
		return nil
	}
	st, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, tgt, st, true)
	checkRows(t, tgt, w.want)
	if fails["conn"] != 0 || fails["load"] != 0 {
		t.Fatalf("faults left: %v", fails)
	}
	// Unreachable for longer than Retry allows: the run fails.
	tgt = newMemTarget()
	tgt.retryFor = 100 * time.Millisecond
	tgt.hook = func(op *memOp) error { return errLost }
	if _, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: 1}); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("err = %v", err)
	}
}

// TestCancel: a cancelled run stops reading, finishes what is in flight
// (retrying a unit that deadlocks or loses its connection after the
// stop) and returns: what committed is a gapless prefix of the source,
// counted and stored, and every connection is closed.
func TestCancel(t *testing.T) {
	for _, fault := range []error{nil, errDeadlock, errLost} {
		t.Run(fmt.Sprint(fault), func(t *testing.T) {
			w := wl(8, 400, 1000)
			tgt := newMemTarget()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var commits int
			var mu sync.Mutex
			injected := fault == nil
			tgt.hook = func(op *memOp) error {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case op.Kind == "commit":
					if commits++; commits == 20 {
						cancel()
					}
				case op.Kind == "send" && ctx.Err() != nil && !injected:
					injected = true
					return fault
				}
				return nil
			}
			st, err := Run(ctx, &sliceSource{txs: w.txs, live: true}, tgt, Resume{},
				Config{Workers: 4, FixedWorkers: true, WindowBytes: 1000})
			if err != nil {
				t.Fatal(err)
			}
			checkRun(t, tgt, st, true)
			got := tgt.committed()
			if len(got) < 20 || len(got) >= len(w.txs) || !injected {
				t.Fatalf("%d committed, want at least 20 and not all (fault injected: %v)", len(got), injected)
			}
			for i, tx := range got {
				if tx != w.txs[i] {
					t.Fatalf("commit %d is %s, want %s", i, tx.ID(), w.txs[i].ID())
				}
			}
			if len(tgt.conns) != 0 {
				t.Errorf("%d connections left open", len(tgt.conns))
			}
		})
	}
}

// TestWindow: the transactions sent and not committed never exceed the
// window's bytes; a transaction larger than the window runs alone.
func TestWindow(t *testing.T) {
	w := wl(9, 80, 1000)
	w.txs[40].Size = 2500
	tgt := newMemTarget()
	alone := false
	jit := jitter(9)
	tgt.hook = func(op *memOp) error {
		if op.Kind == "send" && op.Batch.has(w.txs[40].ID()) {
			tgt.mu.Lock()
			alone = true
			for _, c := range tgt.conns {
				if c.open != nil {
					alone = false
				}
			}
			tgt.mu.Unlock()
		}
		return jit(op)
	}
	st, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: 8, FixedWorkers: true, WindowBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, tgt, st, true)
	if !alone || st.Serialized[ReasonBigTransaction] == 0 {
		t.Fatalf("the big transaction ran alone: %v, serialized %v", alone, st.Serialized)
	}
	if tgt.maxOpen < 2 {
		t.Fatalf("at most %d units open", tgt.maxOpen)
	}
	// Without the big one: within the window.
	w.txs[40].Size = 100
	tgt = newMemTarget()
	tgt.hook = jitter(10)
	if _, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: 8, FixedWorkers: true, WindowBytes: 500}); err != nil {
		t.Fatal(err)
	}
	if tgt.maxBytes > 500 || tgt.maxOpen < 2 {
		t.Fatalf("at most %d bytes in %d units open, window 500", tgt.maxBytes, tgt.maxOpen)
	}
}

// TestBarrier: a DDL runs when everything before it has committed and
// nothing after it has started (memTarget.ApplyDDL checks), in every
// mode; the user's word on a pending DDL reaches the target for that DDL
// only.
func TestBarrier(t *testing.T) {
	for _, mode := range depend.Modes {
		t.Run(string(mode), func(t *testing.T) {
			w := wl(11, 90, 1000)
			w.txs[29], w.txs[59] = ddlTxn(30), ddlTxn(60)
			tgt := newMemTarget()
			tgt.hook = jitter(11)
			st, err := runOn(t, tgt, w.txs, Resume{}, Config{Mode: mode, Workers: 4, FixedWorkers: true, UnitTxns: 4,
				ResolveDDL: ResolveDDL{ID: "0-1-60", As: DDLNotApplied}})
			if err != nil {
				t.Fatal(err)
			}
			checkRun(t, tgt, st, mode != depend.Schema && mode != depend.Domain)
			if len(tgt.committed()) != 90 {
				t.Fatalf("%d committed", len(tgt.committed()))
			}
			if got := tgt.resolved; got["0-1-30"] != "" || got["0-1-60"] != DDLNotApplied {
				t.Fatalf("resolutions %v", got)
			}
		})
	}
}

// TestOptimisticConflicts: in mode optimistic everything starts at once;
// a later transaction that ran before the one it depends on fails (its
// row is not there yet) and is retried as a conflict, not counted
// against Retries, and the target ends with the source's rows.
func TestOptimisticConflicts(t *testing.T) {
	w := wl(12, 80, 4)
	tgt := newMemTarget()
	// 0-1-1 inserts rows 1 and 2, 0-1-2 rows 0 and 3, 0-1-3 updates row 1
	// and 0-1-4 deletes it: with 0-1-1 held until two of the three after
	// it are sent, 0-1-3 or 0-1-4 runs before the row it changes exists.
	stalled := false
	tgt.hook = func(op *memOp) error {
		if op.Kind == "send" && op.Batch.has("0-1-1") && !stalled {
			stalled = until(func() bool {
				tgt.mu.Lock()
				defer tgt.mu.Unlock()
				return tgt.sends > 1
			})
		}
		return nil
	}
	st, err := runOn(t, tgt, w.txs, Resume{}, Config{Mode: depend.Optimistic, Workers: 4, FixedWorkers: true, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !stalled {
		t.Fatal("nothing else was sent while 0-1-1 was stalled")
	}
	checkRun(t, tgt, st, true)
	checkRows(t, tgt, w.want)
	if st.RetriesBy[sequencer.RetryConflict]+st.RetriesBy[sequencer.RetryYield] == 0 {
		t.Fatalf("no conflict retried: %v", st.RetriesBy)
	}
}

// TestYieldToEarlier: a later unit holds a row the next to commit needs.
// Prepared, it is rolled back (Abort); still running, waiting for a lock
// of someone else's, its statement is killed (Kill); with lock waits
// unseen, it yields once the next to commit has run for a while.
func TestYieldToEarlier(t *testing.T) {
	// Row 7 exists; 0-1-1 updates it to the same values, 0-1-2 deletes
	// it: 0-1-2 is valid before and after 0-1-1, and locks row 7 first.
	base := func() (*memTarget, []*txn.Txn) {
		tgt := newMemTarget()
		tgt.rows["s.t"] = map[string][]txn.Value{"s.t/7": {int64(7), int64(0)}}
		tbl := &txn.Table{Schema: "s", Name: "t"}
		row7 := []txn.Value{int64(7), int64(0)}
		t1, t2 := mkTxn(1, "s"), mkTxn(2, "s")
		both := []bool{true, true}
		t1.Changes = []txn.Change{{Row: &txn.RowChange{Kind: txn.Update, Table: tbl, Before: row7, After: row7, BeforeCols: both, AfterCols: both}}}
		t2.Changes = []txn.Change{{Row: &txn.RowChange{Kind: txn.Delete, Table: tbl, Before: row7, BeforeCols: both}},
			{Row: &txn.RowChange{Kind: txn.Insert, Table: tbl, After: []txn.Value{int64(9), int64(2)}, AfterCols: both}}}
		return tgt, []*txn.Txn{t1, t2}
	}
	cfg := Config{Mode: depend.Aggressive, Workers: 2, FixedWorkers: true}
	check := func(t *testing.T, tgt *memTarget, st Stats, yield string) {
		t.Helper()
		checkRun(t, tgt, st, true)
		checkRows(t, tgt, map[string]map[string][]txn.Value{"s.t": {"s.t/9": {int64(9), int64(2)}}})
		if st.Yields[yield] == 0 {
			t.Fatalf("yields %v, want %s", st.Yields, yield)
		}
	}
	t.Run("prepared", func(t *testing.T) {
		tgt, txs := base()
		tgt.hook = func(op *memOp) error {
			if op.Kind == "send" && op.Batch.has("0-1-1") {
				until(func() bool { return tgt.sentOrWaiting("0-1-2") })
			}
			return nil
		}
		st, err := runOn(t, tgt, txs, Resume{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		check(t, tgt, st, sequencer.YieldLockWait)
	})
	t.Run("running", func(t *testing.T) {
		tgt, txs := base()
		// Someone else holds row 9 until 0-1-1 has committed: 0-1-2
		// waits for it holding row 7, which 0-1-1 waits for.
		other, _ := tgt.Conn(context.Background())
		ins9 := mkTxn(99, "s")
		ins9.Changes = []txn.Change{{Row: &txn.RowChange{Kind: txn.Insert, Table: &txn.Table{Schema: "s", Name: "t"},
			After: []txn.Value{int64(9), int64(0)}}}}
		if err := other.Send(context.Background(), &memBatch{txs: []*txn.Txn{ins9}}); err != nil {
			t.Fatal(err)
		}
		tgt.hook = func(op *memOp) error {
			switch {
			case op.Kind == "send" && op.Batch.has("0-1-1"):
				until(func() bool {
					tgt.mu.Lock()
					defer tgt.mu.Unlock()
					return tgt.locks["s.t/9"] != nil && tgt.locks["s.t/7"] != nil
				})
			case op.Kind == "commit" && op.Batch.has("0-1-1"):
				other.Rollback(context.Background())
			}
			return nil
		}
		st, err := runOn(t, tgt, txs, Resume{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		check(t, tgt, st, sequencer.YieldLockWait)
		if tgt.kills == 0 {
			t.Fatal("no statement killed")
		}
	})
	t.Run("unseen", func(t *testing.T) {
		tgt, txs := base()
		tgt.noLockWaits = true
		tgt.hook = func(op *memOp) error {
			if op.Kind == "send" && op.Batch.has("0-1-1") {
				until(func() bool { return tgt.sentOrWaiting("0-1-2") })
			}
			return nil
		}
		st, err := runOn(t, tgt, txs, Resume{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		check(t, tgt, st, sequencer.YieldHeadStall)
	})
}

// TestRefusedNamesGTID: a statement the target refuses stops the run with
// an error naming the transaction that failed, the members of its unit
// before it committed and stored: the run stops exactly before it.
func TestRefusedNamesGTID(t *testing.T) {
	for _, tc := range []struct {
		workers  int
		keepGTID bool
	}{{1, false}, {3, false}, {1, true}} {
		t.Run(fmt.Sprintf("w%d/keep%v", tc.workers, tc.keepGTID), func(t *testing.T) {
			w := wl(13, 20, 1000) // every transaction inserts
			// Row of 0-1-7's first insert already there: duplicate.
			rc := w.txs[6].Changes[0].Row
			tgt := newMemTarget()
			tgt.keepGTIDs = tc.keepGTID
			tgt.rows["s.t"] = map[string][]txn.Value{rowKey(rc): rc.After}
			st, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: tc.workers, FixedWorkers: true, UnitTxns: 8})
			if err == nil || !strings.Contains(err.Error(), "GTID 0-1-7 (binlog.000001:604)") || !errors.Is(err, errDuplicate) {
				t.Fatalf("err = %v, want the duplicate naming GTID 0-1-7", err)
			}
			checkFailedRun(t, tgt, st, true)
			if p := tgt.checkpoint(SlotMain); p.LastGTID != "0-1-6" || p.Applied != 6 || tc.workers == 1 && st.Txns != 6 {
				t.Fatalf("stopped at %+v with %d applied, want after 0-1-6", p, st.Txns)
			}
		})
	}
}

// TestKeepGTIDs: a target that keeps source GTIDs gets one transaction
// per commit, in source order, whatever the commit unit asked.
func TestKeepGTIDs(t *testing.T) {
	w := wl(14, 60, 1000)
	tgt := newMemTarget()
	tgt.keepGTIDs = true
	tgt.hook = jitter(14)
	st, err := runOn(t, tgt, w.txs, Resume{}, Config{Workers: 4, FixedWorkers: true, UnitTxns: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, tgt, st, true)
	for _, c := range tgt.log {
		if len(c.Txns) != 1 || c.Pos.LastGTID != c.Txns[0].GTID {
			t.Fatalf("commit of %d transactions at %s", len(c.Txns), c.Pos.LastGTID)
		}
	}
	if st.Units != 60 {
		t.Fatalf("%d units", st.Units)
	}
}

// TestFilter: Skip counts a transaction in the position without applying
// it, Stop stops before it, Last after it; a second run from the stored
// position skips everything the first applied.
func TestFilter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		action  func(n uint64) Action
		applied []uint64
		last    string
	}{
		{"skip even", func(n uint64) Action { return map[bool]Action{true: Skip, false: Apply}[n%2 == 0] }, []uint64{1, 3, 5, 7, 9}, "0-1-10"},
		{"stop at 4", func(n uint64) Action { return map[bool]Action{true: Stop, false: Apply}[n == 4] }, []uint64{1, 2, 3}, "0-1-3"},
		{"last at 4", func(n uint64) Action { return map[bool]Action{true: Last, false: Apply}[n == 4] }, []uint64{1, 2, 3, 4}, "0-1-4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := wl(15, 10, 1000)
			tgt := newMemTarget()
			cfg := Config{Workers: 2, UnitTxns: 3, Filter: func(tx *txn.Txn) Action { return tc.action(tx.Seq) }}
			st, err := runOn(t, tgt, w.txs, Resume{}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, tx := range tgt.committed() {
				got = append(got, tx.Seq)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.applied) || tgt.checkpoint(SlotMain).LastGTID != tc.last {
				t.Fatalf("applied %v up to %s, want %v up to %s", got, tgt.checkpoint(SlotMain).LastGTID, tc.applied, tc.last)
			}
			if st.Txns != uint64(len(tc.applied)) {
				t.Fatalf("Stats.Txns %d", st.Txns)
			}
			res, err := LoadResume(context.Background(), tgt)
			if err != nil {
				t.Fatal(err)
			}
			n := len(tgt.log)
			st, err = runOn(t, tgt, w.txs[:3], res, Config{Workers: 2})
			if err != nil || len(tgt.log) != n || st.Skipped != 3 {
				t.Fatalf("second run: %v, %d commits, %d skipped", err, len(tgt.log)-n, st.Skipped)
			}
		})
	}
}

// TestSourceError: a source error ends the run after everything read
// before it has been applied, and is returned.
func TestSourceError(t *testing.T) {
	w := wl(16, 10, 1000)
	tgt := newMemTarget()
	boom := errors.New("binlog checksum mismatch")
	st, err := Run(context.Background(), &sliceSource{txs: w.txs, err: boom}, tgt, Resume{}, Config{Workers: 3})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	checkRun(t, tgt, st, true)
	if st.Txns != 10 || st.Read != 10 || st.ReadPos.LastGTID != "0-1-10" {
		t.Fatalf("applied %d, read %d up to %s", st.Txns, st.Read, st.ReadPos.LastGTID)
	}
}

// TestGate: a paused gate admits nothing, though the source is read; on
// resume the run goes on. Live has the final statistics.
func TestGate(t *testing.T) {
	w := wl(17, 30, 1000)
	tgt := newMemTarget()
	var g Gate
	g.Pause()
	live := &Live{}
	src := &sliceSource{txs: w.txs, at: make(chan struct{})}
	type result struct {
		st  Stats
		err error
	}
	done := make(chan result)
	go func() {
		st, err := Run(context.Background(), src, tgt, Resume{}, Config{Workers: 2, Gate: &g, Live: live, ProgressEvery: time.Millisecond})
		done <- result{st, err}
	}()
	// The source is read ahead whole, and the engine publishes its first
	// snapshot: it has fed the sequencer nothing, committed nothing.
	<-src.at
	var s Stats
	if !until(func() (ok bool) { s, ok = live.Stats(); return ok }) {
		t.Fatal("no snapshot published")
	}
	if n := len(tgt.committed()); n != 0 || s.Read != 0 {
		t.Fatalf("%d committed, %d read while paused", n, s.Read)
	}
	if !g.State().Paused || g.Pause() {
		t.Fatal("gate not paused")
	}
	g.Resume()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	checkRun(t, tgt, r.st, true)
	checkRows(t, tgt, w.want)
	if s, ok := live.Stats(); !ok || s.Txns != 30 {
		t.Fatalf("live stats %v %d", ok, s.Txns)
	}
}

func TestGateState(t *testing.T) {
	var g Gate
	if held, _ := g.Held(); held {
		t.Fatal("zero gate held")
	}
	_, ch := g.Held()
	if !g.Throttle(ThrottleMaxLoad, true, "Threads_running=73 > 50") || g.Throttle(ThrottleMaxLoad, true, "=80") {
		t.Fatal("Throttle's answers")
	}
	select {
	case <-ch:
	default:
		t.Fatal("no change signalled")
	}
	g.Throttle(ThrottleFlagFile, true, "/tmp/x")
	g.Pause()
	st := g.State()
	if got := fmt.Sprint(st.Reasons()); got != "[paused flag-file max-load]" || st.Throttled[ThrottleMaxLoad] != "=80" {
		t.Fatalf("reasons %s, %v", got, st.Throttled)
	}
	g.Resume()
	g.Throttle(ThrottleMaxLoad, false, "")
	g.Throttle(ThrottleFlagFile, false, "")
	if held, _ := g.Held(); held || g.Throttle(ThrottleReplicaLag, false, "") || g.Resume() {
		t.Fatal("gate still held")
	}
	if _, ok := g.State().ThrottledFor[ThrottleMaxLoad]; !ok {
		t.Fatal("throttled time not kept")
	}
	var nilGate *Gate
	if held, _ := nilGate.Held(); held || len(nilGate.State().Reasons()) != 0 {
		t.Fatal("nil gate held")
	}
}

func TestParseResolveDDL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ResolveDDL
		ok   bool
	}{
		{"0-1-5=applied", ResolveDDL{"0-1-5", DDLApplied}, true},
		{" binlog.000001:400=not-applied ", ResolveDDL{"binlog.000001:400", DDLNotApplied}, true},
		{"0-1-5=maybe", ResolveDDL{}, false},
		{"0-1-5", ResolveDDL{}, false},
		{"=applied", ResolveDDL{}, false},
	} {
		got, err := ParseResolveDDL(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%q: %v, %v", tc.in, got, err)
		}
	}
}

// TestStartAfter: a run given a GTID start skips what it covers.
func TestStartAfter(t *testing.T) {
	w := wl(18, 10, 1000)
	tgt := newMemTarget()
	var res Resume
	res.StartAfter("0-1-4")
	st, err := runOn(t, tgt, w.txs, res, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Skipped != 4 || st.Txns != 6 || tgt.committed()[0].GTID != "0-1-5" {
		t.Fatalf("skipped %d, applied %d", st.Skipped, st.Txns)
	}
}

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
