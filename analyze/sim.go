package analyze

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/txn"
)

// sim predicts one apply run (a mode, a number of workers) by driving the
// apply engine's own rules, package sequencer, with a simulated clock and
// the cost model: what the engine decides (unit forming and its waits,
// admission within the window, the DDL barrier, which unit starts on
// which worker, commit order, retries and yields) is the sequencer's, so
// the prediction cannot drift from the engine. The simulation only
// supplies what package apply's runtime supplies: the reader, workers
// and a clock.
//
//   - The reader delivers transactions at prepl's own pace (its CPU per
//     transaction: Costs.ReadTxn, Costs.ReadKiB) into a channel of 256,
//     as apply's reader goroutine does; a transaction in the channel is
//     backlog (Tick's readerAhead: a worker waiting for work is not a
//     pause of the source). When prepl runs on the target's machine
//     (Costs.Local) the reader shares the target's cores with the
//     executing units.
//   - Admit is answered at once with Admitted (the catalog is already
//     loaded).
//   - Start runs the unit's execution work (Costs, of the unit's shape:
//     Options.Shape) on its worker; running units share the target's
//     cores (processor sharing: k units on c cores each progress at
//     min(1, c/k)). With CommitNow the commit follows (Costs.Commit) and
//     then Committed is fed; else Prepared is fed. Commit costs
//     Costs.Commit, then Committed is fed. Abort and Kill are answered at
//     once with Failed (a yield).
//   - Optimistic and aggressive modes: a unit started before every unit
//     it conflicts with on a row (the writeset tracker's dependencies)
//     has committed meets their row locks. Which of two units first locks
//     a shared row is even odds (decided by the unit's number, so runs
//     are reproducible): either the later one waits for the lock, holding
//     its worker until what it conflicts with has committed, then does
//     half its work again (the expected part after the lock), or it holds
//     a lock the earlier one needs: the next unit to commit of its key
//     stalls for Costs.Conflict until the engine notices, and the later
//     one fails (Failed with class Retry) and runs again when it is next
//     to commit, as the sequencer decides.
//   - When nothing is due, the clock jumps to the next completion, the
//     next transaction's arrival, or the sequencer's Deadline (its
//     unit-forming waits, Config.SealQuiet and UnitMaxWait, and the
//     stalled-head yield).
//
// Memory: the sequencer's state for the units in flight (at most the
// window) and the reader's channel.
type sim struct {
	mode    depend.Mode
	workers int
	o       *Options
	shapes  *shapeCache
	seq     *sequencer.Sequencer
	ws      *depend.Tracker // optimistic: conflicts
	wsFree  map[uint64]bool // released by ws
	keys    map[string][]uint64

	// Reader: input[:decoded] are in the channel (read, not yet fed);
	// input[decoded] is being read, readLeft seconds of CPU to go.
	input    []*txn.Txn
	decoded  int
	readLeft float64
	reading  bool // readLeft is set for input[decoded]
	ended    bool
	eofSent  bool

	// Clock: now is simulated time since the start; v is the virtual work
	// time of processor sharing, in seconds.
	now  time.Duration
	v    float64
	jobs map[uint64]*simJob // by unit seq
	exec simHeap            // jobs executing, by finishV
	work map[uint64]float64 // execution seconds of admitted units

	// steps counts the clock's steps: a few per unit and per transaction
	// read. stuck counts the steps in a row to a deadline that was not
	// after the clock (the sequencer asked for a time already past).
	steps, stuck uint64

	// Results.
	units, txns, reruns uint64
	flight              float64 // the sequencer's Concurrency integrated over simulated seconds
}

type simPhase uint8

const (
	phaseExec simPhase = iota
	phaseCommit
	phaseLockWait // ran, waits for the row locks of what it conflicts with
	phasePrepared
)

type simJob struct {
	seq       uint64
	phase     simPhase
	commitNow bool
	conflict  bool // optimistic: fails at the end of its work
	finishV   float64
	commitEnd time.Duration
	heapIdx   int
}

// d0 is a deadline as simulated time.
func d0(t time.Time) time.Duration { return t.Sub(simBase) }

// simBase is the simulated clock's origin.
var simBase = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func newSim(mode depend.Mode, workers int, o *Options, cat txn.Catalog, shapes *shapeCache) *sim {
	if mode == depend.Serial {
		workers = 0
	}
	// As apply configures it: --workers is a ceiling and the sequencer's
	// controller chooses how many units are in flight (unless
	// --fixed-workers), from the throughput it measures in simulated
	// time; the target's lock waits are visible (the simulated conflicts
	// below stand for what the lock monitor reports), so nothing yields
	// on a timer.
	cfg := sequencer.Config{Mode: mode, Workers: workers, WindowBytes: o.WindowBytes, UnitTxns: o.UnitTxns,
		UnitBytes: o.UnitBytes, Catalog: cat, Adapt: !o.FixedWorkers, WaitsVisible: workers > 1}
	s, err := sequencer.New(cfg, sequencer.Origin{})
	if err != nil {
		panic(fmt.Sprintf("analyze: sequencer: %v", err)) // an empty origin always parses
	}
	r := &sim{mode: mode, workers: max(workers, 1), o: o, shapes: shapes, seq: s,
		jobs: map[uint64]*simJob{}, work: map[uint64]float64{},
		keys: map[string][]uint64{}}
	if mode == depend.Optimistic || mode == depend.Aggressive {
		r.ws = depend.New(depend.Writeset, cat)
		r.wsFree = map[uint64]bool{}
	}
	return r
}

// channelSize is the engine's read-ahead channel (apply/engine.go: reads).
const channelSize = 256

// push gives the next transaction and simulates as far as it can.
func (r *sim) push(tx *txn.Txn) {
	r.input = append(r.input, tx)
	r.run()
}

// end says nothing more comes and simulates to the last commit.
func (r *sim) end() {
	r.ended = true
	r.run()
	r.units, r.txns = r.counts()
	if !r.seq.Done() {
		panic(fmt.Sprintf("analyze: %s simulation with %d workers ended with work left", r.mode, r.workers))
	}
}

// seconds is the simulated time of the last commit.
func (r *sim) seconds() float64 { return r.now.Seconds() }

func (r *sim) at() time.Time { return simBase.Add(r.now) }

// run is apply's engine loop in simulated time: tell the time, perform
// the actions, feed one event, until the reader needs the next
// transaction (the binlog's transactions are all there to read: the
// reader waits for none).
func (r *sim) run() {
	for {
		if !r.ended && r.decoded == len(r.input) {
			return // the reader reads the next transaction next
		}
		r.seq.Tick(r.at(), r.decoded > 0)
		r.perform()
		if r.seq.Done() {
			return
		}
		if r.seq.WantsInput() {
			switch {
			case r.decoded > 0:
				r.read()
				continue
			case len(r.input) == 0 && r.ended && !r.eofSent:
				r.eofSent = true
				r.seq.EndOfInput()
				continue
			}
		}
		r.step()
	}
}

// readerBusy reports whether the reader is reading: it has a transaction
// to read and room in the channel.
func (r *sim) readerBusy() bool {
	if r.decoded >= len(r.input) || r.decoded >= channelSize {
		return false
	}
	if !r.reading {
		tx := r.input[r.decoded]
		r.readLeft = r.o.Costs.ReadTxn.Seconds() + float64(tx.Size)/1024*r.o.Costs.ReadKiB.Seconds()
		r.reading = true
	}
	return true
}

// read feeds the next transaction of the channel to the sequencer.
func (r *sim) read() {
	tx := r.input[0]
	r.input[0] = nil
	r.input = r.input[1:]
	r.decoded--
	r.seq.Read(tx, false)
}

// perform does the sequencer's actions until it has none.
func (r *sim) perform() {
	for acts := r.seq.Ready(); len(acts) > 0; acts = r.seq.Ready() {
		for _, a := range acts {
			r.do(a)
		}
	}
}

func (r *sim) do(a sequencer.Action) {
	u := a.Unit
	seq := u.Seq()
	switch a.Kind {
	case sequencer.Admit:
		ap := u.Applied()
		r.work[seq] = r.o.Costs.Work(r.shapes.of(ap), u.Size, u.Txn.IsDDL())
		k := depend.OrderKey(r.mode, u.Txn)
		r.keys[k] = append(r.keys[k], seq)
		if r.ws != nil {
			r.ws.Add(u.Txn)
			r.collect()
		}
		r.seq.Admitted(seq)
	case sequencer.Start:
		j := &simJob{seq: seq, commitNow: a.CommitNow, finishV: r.v + r.work[seq]}
		if r.ws != nil && !a.CommitNow && !r.wsFree[seq] {
			j.conflict = true
			if seq%2 == 1 { // it holds a lock the next to commit needs
				r.stallHead(u)
			}
		}
		r.jobs[seq] = j
		heap.Push(&r.exec, j)
	case sequencer.Commit:
		j := r.jobs[seq]
		j.phase, j.commitEnd = phaseCommit, r.now+r.o.Costs.Commit
	case sequencer.Abort, sequencer.Kill:
		j := r.jobs[seq]
		if j.phase == phaseExec {
			heap.Remove(&r.exec, j.heapIdx)
		}
		delete(r.jobs, seq)
		r.reruns++
		if err := r.seq.Failed(seq, sequencer.Failure{Class: sequencer.Retry, Yielded: a.Kind == sequencer.Abort}); err != nil {
			panic(fmt.Sprintf("analyze: simulated yield failed the run: %v", err))
		}
	}
}

// stallHead: the next unit to commit of u's key meets a lock u holds and
// stalls for Costs.Conflict, until the engine notices.
func (r *sim) stallHead(u *sequencer.Unit) {
	q := r.keys[depend.OrderKey(r.mode, u.Txn)]
	if len(q) == 0 {
		return
	}
	if h := r.jobs[q[0]]; h != nil && h.phase == phaseExec {
		rate, _ := r.rates()
		h.finishV += r.o.Costs.Conflict.Seconds() * rate
		heap.Fix(&r.exec, h.heapIdx)
	}
}

// collect takes what the writeset tracker releases; a unit waiting for
// the row locks of what it conflicts with goes on.
func (r *sim) collect() {
	for _, s := range r.ws.Ready() {
		r.wsFree[s.Seq] = true
		if j := r.jobs[s.Seq]; j != nil && j.phase == phaseLockWait {
			// It got the locks: half its work, on average, is still to do.
			j.phase, j.conflict = phaseExec, false
			j.finishV = r.v + r.work[s.Seq]/2
			heap.Push(&r.exec, j)
			r.reruns++
		}
	}
}

// rates are how fast executing units and the reader progress: k units on
// c cores each progress at min(1, c/k); when prepl runs on the target's
// machine (Costs.Local) the reader is one more on those cores.
func (r *sim) rates() (exec, read float64) {
	k := float64(r.exec.Len())
	exec, read = 1, 1
	c := r.o.Costs.Cores
	if r.o.Costs.Local && r.readerBusy() {
		k++
		if c > 0 && k > c {
			read = c / k
		}
	}
	if c > 0 && k > c {
		exec = c / k
	}
	return exec, read
}

// step advances the clock to the next event and feeds it.
func (r *sim) step() {
	rate, rrate := r.rates()
	next := time.Duration(math.MaxInt64)
	var execJob, commitJob *simJob
	readDone := false
	if r.readerBusy() {
		next = r.now + time.Duration(math.Ceil(r.readLeft/rrate*1e9))
		readDone = true
	}
	if r.exec.Len() > 0 {
		j := r.exec[0]
		dt := time.Duration(math.Ceil(max(0, j.finishV-r.v) / rate * 1e9))
		if r.now+dt < next {
			next, execJob, readDone = r.now+dt, j, false
		}
	}
	for _, j := range r.jobs {
		if j.phase == phaseCommit && (j.commitEnd < next || j.commitEnd == next && commitJob != nil && j.seq < commitJob.seq) {
			next, execJob, commitJob, readDone = j.commitEnd, nil, j, false
		}
	}
	stale := false
	if d := r.seq.Deadline(); !d.IsZero() {
		dl := max(d.Sub(simBase), r.now+1)
		if dl < next {
			next, execJob, commitJob, readDone = dl, nil, nil, false
			stale = d.Sub(simBase) <= r.now
		}
	}
	r.steps++
	if r.stuck++; !stale {
		r.stuck = 0
	}
	if r.stuck > 2 {
		// A past deadline the sequencer does not act on: the clock would
		// creep a nanosecond a step (as the engine's timer would fire at
		// once, again and again), millions of steps per simulated
		// millisecond.
		panic(fmt.Sprintf("analyze: %s simulation with %d workers: the sequencer's deadline stays in the past (%s at %s)",
			r.mode, r.workers, d0(r.seq.Deadline()), r.now))
	}
	if next == time.Duration(math.MaxInt64) {
		panic(fmt.Sprintf("analyze: %s simulation with %d workers stalled: %d units in flight",
			r.mode, r.workers, r.seq.InFlight()))
	}
	next = max(next, r.now)
	dt := (next - r.now).Seconds()
	r.flight += dt * float64(r.seq.Concurrency())
	r.v += dt * rate
	if r.readerBusy() {
		r.readLeft -= dt * rrate
	}
	r.now = next
	switch {
	case readDone:
		r.reading = false
		r.decoded++
	case execJob != nil:
		heap.Remove(&r.exec, execJob.heapIdx)
		r.v = max(r.v, execJob.finishV)
		r.seq.Tick(r.at(), r.decoded > 0)
		r.executed(execJob)
	case commitJob != nil:
		r.seq.Tick(r.at(), r.decoded > 0)
		r.committed(commitJob)
	}
}

// executed: a job's work is done.
func (r *sim) executed(j *simJob) {
	switch {
	case j.commitNow:
		j.phase, j.commitEnd = phaseCommit, r.now+r.o.Costs.Commit
	case j.conflict && j.seq%2 == 1:
		delete(r.jobs, j.seq)
		r.reruns++
		if err := r.seq.Failed(j.seq, sequencer.Failure{Class: sequencer.Retry}); err != nil {
			panic(fmt.Sprintf("analyze: simulated conflict failed the run: %v", err))
		}
	case j.conflict && !r.wsFree[j.seq]:
		j.phase = phaseLockWait // holds its worker
	default:
		j.phase = phasePrepared
		r.seq.Prepared(j.seq)
	}
}

func (r *sim) committed(j *simJob) {
	delete(r.jobs, j.seq)
	delete(r.work, j.seq)
	u := j.seq
	r.seq.Committed(u)
	for k, q := range r.keys {
		if len(q) > 0 && q[0] == u {
			if len(q) == 1 {
				delete(r.keys, k)
			} else {
				r.keys[k] = q[1:]
			}
			break
		}
	}
	if r.ws != nil {
		r.ws.Done(u)
		delete(r.wsFree, u)
		r.collect()
	}
}

// Counts for the report, from the sequencer.
func (r *sim) counts() (units, txns uint64) {
	st := r.seq.Stats()
	return st.Units, st.Txns
}

// simHeap orders executing jobs by the virtual time their work is done.
type simHeap []*simJob

func (h simHeap) Len() int { return len(h) }
func (h simHeap) Less(i, j int) bool {
	if h[i].finishV != h[j].finishV {
		return h[i].finishV < h[j].finishV
	}
	return h[i].seq < h[j].seq
}
func (h simHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *simHeap) Push(x any) {
	e := x.(*simJob)
	e.heapIdx = len(*h)
	*h = append(*h, e)
}
func (h *simHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	e.heapIdx = -1
	return e
}
