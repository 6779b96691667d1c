package analyze

import (
	"math"
	"testing"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestAMIL checks the tutorial's metric on hand-built intervals.
func TestAMIL(t *testing.T) {
	type iv struct{ lc, sn int64 }
	groups := func(sizes ...int) []iv { // group commits: every member's last_committed is the group's predecessor
		var out []iv
		var sn int64
		for _, n := range sizes {
			lc := sn
			for range n {
				sn++
				out = append(out, iv{lc, sn})
			}
		}
		return out
	}
	cases := []struct {
		name       string
		ivs        []iv
		resetAt    int // reset the running maximum before this index (a new file); 0: never
		amil, pseu float64
	}{
		{"serial", []iv{{0, 1}, {1, 2}, {2, 3}, {3, 4}}, 0, 1, 1},
		{"one group of 4", groups(4), 0, 2.5, 4},
		{"groups of 12", groups(12, 12, 12), 0, 6.5, 12},
		{"groups of 1 and 3", groups(1, 3), 0, 1.75, 2.5},
		// The tutorial's example: last_committed=93124 of 93136 is raised to
		// 93131 by the earlier transactions (the "modification").
		{"tutorial modification", []iv{
			{93124, 93131}, {93131, 93132}, {93131, 93133}, {93131, 93134}, {93131, 93135},
			{93124, 93136}, {93131, 93137}, {93131, 93138}, {93132, 93139}, {93138, 93140},
		}, 0, (7 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 7 + 2) / 10.0, 2*(7+1+2+3+4+5+6+7+7+2)/10.0 - 1},
		// A new file restarts sequence numbers: without the reset the
		// second file's intervals would all be clamped to 1.
		{"reset at rotation", append(groups(4), groups(4)...), 4, 2.5, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var a intervalAcc
			for i, x := range c.ivs {
				if c.resetAt > 0 && i == c.resetAt {
					a.reset()
				}
				a.add(x.lc, x.sn)
			}
			st := a.stats()
			if !near(st.AMIL, c.amil, 1e-9) || !near(st.PseudoGroup, c.pseu, 1e-9) {
				t.Errorf("AMIL %v pseudo %v, want %v %v", st.AMIL, st.PseudoGroup, c.amil, c.pseu)
			}
		})
	}
}

// TestGroupCommits checks Binlog_commits / Binlog_group_commits.
func TestGroupCommits(t *testing.T) {
	cases := []struct {
		ids            []uint64
		commits, group uint64
		avg            float64
	}{
		{[]uint64{0, 0, 0}, 3, 3, 1},
		{[]uint64{5, 5, 5, 0, 7, 7, 0, 0, 9}, 9, 6, 1.5},
		{[]uint64{3, 3, 3, 3, 4, 4, 4, 4}, 8, 2, 4},
	}
	for _, c := range cases {
		var g groupAcc
		for _, id := range c.ids {
			g.add(&txn.Txn{CommitID: id, Flags: txn.FlagTransactional | txn.FlagAllowParallel})
		}
		r := g.report()
		if r.Commits != c.commits || r.GroupCommits != c.group || !near(r.AvgSize, c.avg, 1e-9) {
			t.Errorf("%v: %d commits in %d groups (avg %v), want %d in %d (%v)", c.ids, r.Commits, r.GroupCommits, r.AvgSize, c.commits, c.group, c.avg)
		}
	}
}

// TestCriticalPath checks the chain length.
func TestCriticalPath(t *testing.T) {
	cases := []struct {
		name  string
		lcs   []uint64
		chain uint64
	}{
		{"chain", []uint64{0, 1, 2, 3}, 4},
		{"independent", []uint64{0, 0, 0, 0}, 1},
		{"two batches", []uint64{0, 0, 2, 2}, 2},
		// 3 waits for 1 only, but in-order commit makes it wait for 2 too
		// (which is on level 1 as well): level 2.
		{"skip", []uint64{0, 0, 1, 0}, 2},
	}
	for _, c := range cases {
		ch := newChainAcc(8)
		for _, lc := range c.lcs {
			ch.add(lc, 0, false)
		}
		if ch.length() != c.chain {
			t.Errorf("%s: chain %d, want %d", c.name, ch.length(), c.chain)
		}
	}
	// Keys: schema A's chain of three does not lengthen schema B's, which
	// commits on its own; a global item waits for everything.
	ch := newChainAcc(16)
	for _, x := range []struct {
		lc  uint64
		key int
	}{{0, 0}, {1, 0}, {2, 0}, {0, 1}, {4, 1}} {
		ch.add(x.lc, x.key, false)
	}
	if ch.length() != 3 {
		t.Errorf("keys: chain %d, want 3 (B's second item is on level 2, not after A's third)", ch.length())
	}
	ch.add(5, 2, true)
	if ch.length() != 4 {
		t.Errorf("keys: chain %d, want 4 (the global item waits for A's third)", ch.length())
	}
}

// oneRow costs: a transaction of one row change takes 1 ms of work (a
// "unit" of time: the cases below are written in them), the reader is
// instant (so units form as the workers allow). The time scale is the
// engine's: its timed rules (a unit formed for UnitMaxWait, a stalled
// head after HeadStallAfter) are far longer than these units.
func oneRow(commit time.Duration, cores float64) Costs {
	return Costs{Stmt: time.Nanosecond, Row: time.Millisecond - time.Nanosecond, PerKiB: time.Nanosecond, Commit: max(commit/1000, time.Nanosecond),
		DDL: time.Millisecond, Cores: cores, ReadTxn: time.Nanosecond, ReadKiB: time.Nanosecond, Conflict: 100 * time.Microsecond}
}

// ms is the simulated time of r in the units of oneRow.
func ms(r *sim) float64 { return r.seconds() * 1000 }

// simulate runs one simulated apply over txs.
func simulate(mode depend.Mode, workers int, opt Options, txs []*txn.Txn) *sim {
	o := opt.withDefaults()
	meta := NewMetadataCatalog()
	r := newSim(mode, workers, &o, meta, newShapeCache(o.Shape, meta, 1000))
	for _, tx := range txs {
		meta.Observe(tx)
		r.push(tx)
	}
	r.end()
	return r
}

// TestSim checks the scheduling simulation on tiny known graphs, one
// transaction (of 1 s of work) per unit.
func TestSim(t *testing.T) {
	rows := func(f func(i int) txn.Change, n int) []*txn.Txn {
		var g gen
		var out []*txn.Txn
		for i := range n {
			out = append(out, g.txn(f(i)))
		}
		return out
	}
	chain := rows(func(int) txn.Change { return upd(tblT, 1) }, 10)
	independent := rows(func(i int) txn.Change { return upd(tblT, int64(i)) }, 8)
	batches := rows(func(i int) txn.Change { return upd(tblT, int64(i)) }, 8)
	for i, tx := range batches {
		tx.CommitID = uint64(1 + i/4)
	}
	sameRow := rows(func(int) txn.Change { return upd(tblT, 1) }, 2)
	sameRow3 := rows(func(int) txn.Change { return upd(tblT, 1) }, 3)
	var g gen
	ddlFirst := []*txn.Txn{g.txn(ddl("CREATE TABLE d.x (id INT PRIMARY KEY)")), g.txn(upd(tblT, 1))}
	twoSchemas := rows(func(i int) txn.Change {
		if i%2 == 0 {
			return upd(tblT, 1)
		}
		return upd(tblU, 1)
	}, 4)

	cases := []struct {
		name    string
		mode    depend.Mode
		txs     []*txn.Txn
		workers int
		commit  time.Duration
		cores   float64
		seconds float64
	}{
		{"chain, 1 worker", depend.Writeset, chain, 1, time.Millisecond, 0, 10.01},
		{"chain, 8 workers: no faster", depend.Writeset, chain, 8, time.Millisecond, 0, 10.01},
		{"independent, 1 worker", depend.Writeset, independent, 1, time.Millisecond, 0, 8.008},
		{"independent, 8 workers", depend.Writeset, independent, 8, time.Millisecond, 0, 1.008},
		// The second round starts as each commit frees a worker.
		{"independent, 4 workers", depend.Writeset, independent, 4, time.Millisecond, 0, 2.005},
		{"independent, commits serialize", depend.Writeset, independent, 8, 500 * time.Millisecond, 0, 1 + 8*0.5},
		{"independent, 8 workers on 2 cores", depend.Writeset, independent, 8, time.Millisecond, 2, 4.008},
		{"group commits of 4, commit-order", depend.CommitOrder, batches, 4, time.Nanosecond, 0, 2},
		// Optimistic: the second runs at once and meets the first's row
		// lock (even odds, decided by its number: seq 2 waits): it holds
		// its worker until the first commits, then does half its work
		// again.
		{"optimistic conflict, the later waits", depend.Optimistic, sameRow, 2, 500 * time.Millisecond, 0, 1 + 0.5 + 0.5 + 0.5},
		// Seq 3 holds a lock the first needs: the first stalls for the
		// conflict delay (0.1), seq 3 fails and runs again once it is the
		// next to commit (the sequencer's retry).
		{"optimistic conflict, the later yields", depend.Optimistic, sameRow3, 3, 500 * time.Millisecond, 0, 1.1 + 0.5 + 0.5 + 0.5 + 1 + 0.5},
		{"writeset waits instead", depend.Writeset, sameRow, 2, 500 * time.Millisecond, 0, 1 + 0.5 + 1 + 0.5},
		{"optimistic no conflict", depend.Optimistic, independent[:2], 2, 500 * time.Millisecond, 0, 1 + 0.5 + 0.5},
		// A DDL holds admission: what follows is not even admitted before it commits.
		{"ddl holds admission", depend.Writeset, ddlFirst, 2, 100 * time.Millisecond, 0, 2.2},
		// Schema mode: schemas commit independently, so the two chains
		// overlap their commits; in writeset mode they commit in one order.
		{"two schemas commit independently", depend.Schema, twoSchemas, 2, 500 * time.Millisecond, 0, 3},
		{"one commit order", depend.Writeset, twoSchemas, 2, 500 * time.Millisecond, 0, 3.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := simulate(c.mode, c.workers, Options{UnitTxns: 1, FixedWorkers: true, Costs: oneRow(c.commit, c.cores)}, c.txs)
			if !near(ms(r), c.seconds, 1e-4) {
				t.Errorf("%v units, want %v", ms(r), c.seconds)
			}
		})
	}
}

// TestSimUnits: while catching up, units fill up to the commit unit
// size whatever the number of workers; the byte window holds back
// admission.
func TestSimUnits(t *testing.T) {
	var g gen
	var txs []*txn.Txn
	for i := range 64 {
		txs = append(txs, g.txn(upd(tblT, int64(i))))
	}
	opt := Options{UnitTxns: 8, FixedWorkers: true, Costs: oneRow(time.Millisecond, 0)}
	one := simulate(depend.Writeset, 1, opt, txs)
	eight := simulate(depend.Writeset, 8, opt, txs)
	// The reader is never quiet for long (catching up): full units of 8
	// whatever the workers, never units sealed early by an idle worker.
	if one.units != 8 || eight.units != 8 {
		t.Errorf("units: %d with 1 worker, %d with 8: want 8 full units", one.units, eight.units)
	}
	if sp := one.seconds() / eight.seconds(); sp < 6 {
		t.Errorf("8 workers: speedup %.2f, want about 7", sp)
	}
	// The window: the second unit does not fit beside the first.
	w := simulate(depend.Writeset, 2, Options{UnitTxns: 1, FixedWorkers: true, WindowBytes: 200, Costs: oneRow(time.Nanosecond, 0)}, txs[:2])
	if !near(ms(w), 2, 1e-4) {
		t.Errorf("byte window: %v units, want 2", ms(w))
	}
}

// TestSimAdapts: as in the engine, --workers is a ceiling: the
// sequencer's controller starts with one unit in flight and adds more
// only while they measure faster, in simulated time. Each case compares
// the adaptive run with one worker and with the workers all along
// (FixedWorkers), in the time units of oneRow (1 ms per transaction).
func TestSimAdapts(t *testing.T) {
	independent := func(n int) []*txn.Txn {
		var g gen
		var out []*txn.Txn
		for i := range n {
			out = append(out, g.txn(upd(tblT, int64(i))))
		}
		return out
	}
	cases := []struct {
		name  string
		txs   []*txn.Txn
		cores float64
		// The adaptive run's time over the one-worker run's, and over
		// the fixed run's, within these bounds.
		overOneLo, overOneHi     float64
		overFixedLo, overFixedHi float64
		inFlightLo, inFlightHi   float64
	}{
		// 2 s of work: the controller doubles every few 100 ms intervals
		// up to 8; the time spent climbing is what it costs against 8 all
		// along.
		{"long and parallel: it climbs", independent(2000), 0, 0.25, 0.6, 1.5, 4, 2, 8},
		// 64 ms of work, shorter than its first intervals: one unit at a
		// time all along, whatever the binlog allows.
		{"shorter than its intervals: it stays at one", independent(64), 0, 0.999, 1.001, 7, 8.1, 0.999, 1.001},
		// A target of one core: a second unit gains nothing (each runs at
		// half speed), so its probes lose and it stays at one; its time is
		// the serial time.
		{"more gain nothing: it stays low", independent(2000), 1, 0.99, 1.05, 0.9, 1.05, 1, 1.3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := Options{UnitTxns: 1, Costs: oneRow(time.Nanosecond, c.cores)}
			fixed := opt
			fixed.FixedWorkers = true
			one := simulate(depend.Writeset, 1, opt, c.txs)
			adaptive := simulate(depend.Writeset, 8, opt, c.txs)
			all := simulate(depend.Writeset, 8, fixed, c.txs)
			overOne, overFixed := adaptive.seconds()/one.seconds(), adaptive.seconds()/all.seconds()
			inFlight := adaptive.flight / adaptive.seconds()
			t.Logf("adaptive / one %.3f, / fixed %.3f, in flight %.2f", overOne, overFixed, inFlight)
			if overOne < c.overOneLo || overOne > c.overOneHi {
				t.Errorf("adaptive / one worker %.3f, want in [%v, %v]", overOne, c.overOneLo, c.overOneHi)
			}
			if overFixed < c.overFixedLo || overFixed > c.overFixedHi {
				t.Errorf("adaptive / 8 all along %.3f, want in [%v, %v]", overFixed, c.overFixedLo, c.overFixedHi)
			}
			if inFlight < c.inFlightLo || inFlight > c.inFlightHi {
				t.Errorf("units in flight on average %.2f, want in [%v, %v]", inFlight, c.inFlightLo, c.inFlightHi)
			}
			if f := all.flight / all.seconds(); !near(f, 8, 1e-9) {
				t.Errorf("fixed workers: %.2f units in flight on average, want 8", f)
			}
		})
	}
}

// TestDepStream checks the last_committed learned from the tracker.
func TestDepStream(t *testing.T) {
	var g gen
	txs := []*txn.Txn{
		g.txn(upd(tblT, 1)),                     // 1
		g.txn(upd(tblT, 2)),                     // 2
		g.txn(upd(tblT, 1)),                     // 3: waits for 1
		g.txn(upd(tblT, 3)),                     // 4: free
		g.txn(upd(tblT, 2), upd(tblT, 3)),       // 5: waits for 2 and 4: latest 4
		g.txn(ddl("ALTER TABLE d.t ADD x INT")), // 6: barrier, waits for everything
		g.txn(upd(tblT, 9)),                     // 7: waits for the DDL
	}
	want := []uint64{0, 0, 1, 0, 4, 5, 6}
	// 7 waits for the DDL: it is counted once, as the DDL's own wait.
	meta := NewMetadataCatalog()
	var got []uint64
	var reasons []depend.Reason
	d := newDepStream(depend.Writeset, meta, 100, func(it *depItem[int]) {
		got = append(got, it.lc)
		reasons = append(reasons, it.reason)
	})
	for _, tx := range txs {
		meta.Observe(tx)
		d.add(tx, 0, barrierIn(depend.Writeset, tx, meta))
	}
	d.finish()
	if len(got) != len(want) {
		t.Fatalf("emitted %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("last_committed %v, want %v", got, want)
			break
		}
	}
	if reasons[2] != depend.ReasonKeyConflict || reasons[5] != depend.ReasonDDL || reasons[6] != depend.ReasonNone || reasons[3] != depend.ReasonNone {
		t.Errorf("reasons %v", reasons)
	}
	if st := d.stats(); st[depend.ReasonDDL] != 1 || st[depend.ReasonKeyConflict] != 2 {
		t.Errorf("stats %v, want ddl 1, key-conflict 2", st)
	}

	// A history of 2: transaction 3's dependency on 1 is within it, but
	// items further back than the history count as the oldest in it.
	got = nil
	d = newDepStream(depend.Writeset, meta, 2, func(it *depItem[int]) { got = append(got, it.lc) })
	for _, tx := range txs[:4] {
		d.add(tx, 0, depend.ReasonNone)
	}
	d.finish()
	if want := []uint64{0, 0, 1, 1}; !equal(got, want) {
		t.Errorf("history 2: %v, want %v", got, want)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHistogram checks the quantiles of the log histogram.
func TestHistogram(t *testing.T) {
	var h logHist
	for v := uint64(1); v <= 1000; v++ {
		h.add(v)
	}
	d := h.distribution()
	if d.Max != 1000 || !near(d.Mean, 500.5, 1e-9) {
		t.Errorf("max %d mean %v", d.Max, d.Mean)
	}
	for _, c := range []struct{ got, want float64 }{{d.P50, 500}, {d.P90, 900}, {d.P99, 990}} {
		if math.Abs(c.got-c.want)/c.want > 0.1 {
			t.Errorf("quantile %v, want %v within 10%%", c.got, c.want)
		}
	}
	for v := uint64(0); v < 1<<20; v = v*3 + 1 {
		lo, hi := bucketRange(histBucket(v))
		if v < lo || v > hi {
			t.Errorf("%d in bucket [%d, %d]", v, lo, hi)
		}
	}
}

// TestHeavyHitters: the frequent names are kept whatever the noise.
func TestHeavyHitters(t *testing.T) {
	hh := newHeavyHitters(8)
	for i := range 1000 {
		hh.add("hot", 1)
		hh.add(string(rune('a'+i%100)), 1)
		if i%2 == 0 {
			hh.add("warm", 1)
		}
	}
	top := hh.top(2)
	if len(top) != 2 || top[0].name != "hot" || top[1].name != "warm" || top[0].count < 1000 {
		t.Errorf("top %+v", top)
	}
}
