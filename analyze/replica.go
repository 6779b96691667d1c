package analyze

import (
	"container/heap"
	"fmt"
	"math"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

// replica simulates one apply run (a mode, a number of workers) the way
// the apply engine runs it, in simulated time, with its own
// depend.Tracker: the dependencies are the engine's own, transaction for
// transaction. Steps of the engine it replays (apply/apply.go, unit.go,
// schedule.go):
//
//   - the reader delivers transactions at its own pace (ReadTxn, ReadKiB
//     per transaction) into a channel of 256;
//   - the former groups them into a commit unit (depend.CanJoin, up to
//     UnitTxns and UnitBytes); the unit grows while the workers are busy
//     and is sealed when it is full, when the next transaction cannot join
//     it, or when a worker is idle with nothing to do and the next
//     transaction is at least sealQuiet away (apply's quiet source);
//   - a sealed unit is admitted (depend.Merge, Tracker.Add) while fewer
//     than 64 per worker are in flight and their bytes fit the window; a
//     DDL holds admission until it is done;
//   - idle workers take the units the tracker releases, lowest first; the
//     last idle worker is kept for a unit next to commit;
//   - a worker runs its unit (statements, rows and bytes of the unit as the
//     engine sends it: Shaper), then holds it until every earlier unit of
//     its commit-order key has committed; within a key commits are one at
//     a time and cost Commit (an external applier cannot overlap in-order
//     commits); keys (schemas, domains) commit independently;
//   - running units share the target's cores (processor sharing): k units
//     on c cores each progress at min(1, c/k);
//   - optimistic mode: a unit started before every unit it conflicts with
//     on a row (the writeset tracker's dependencies) has committed meets
//     their row locks. Which of two units first locks a shared row is even
//     odds: either the later one waits for the lock, or it holds a lock the
//     earlier one needs, which then stalls until the engine notices (the
//     Conflict cost: its lock monitor polls every 50 ms, a stall it cannot
//     see is broken after 300 ms) and rolls the later one back to run it
//     again. The simulation charges the expected cost: the next unit to
//     commit of its key stalls for half the Conflict cost, and the later
//     unit waits, holding its worker, until what it conflicts with has
//     committed, then does half its work again.
//
// Memory: the tracker's state for the units in flight (at most the
// window) and the transactions of the unit being formed.
type replica struct {
	mode    depend.Mode
	workers int
	o       *Options
	cat     txn.Catalog
	shapes  *shapeCache
	tr      *depend.Tracker
	ws      *depend.Tracker // optimistic: conflicts

	// Reader.
	input     []*txn.Txn // given, not yet taken by the former
	arrival   float64    // when input[0] is in the channel
	arrived   bool       // arrival is computed for input[0]
	lastRead  float64    // when the reader delivered the last transaction
	taken     []float64  // when the last 256 transactions were taken, ring
	nTaken    uint64
	ended     bool
	readTxn   float64
	readPerKB float64

	// Former.
	cur      []*txn.Txn
	curBytes int
	sealed   bool
	carry    *txn.Txn

	// Engine.
	now, v     float64 // simulated time; virtual work time of processor sharing
	entries    map[uint64]*rEntry
	orderQ     map[string]*rQueue
	readyQ     rHeap
	running    rRunHeap
	idle       int
	inflight   int
	ddlHold    bool
	committing []*rQueue

	// Results.
	units, txns, reruns uint64
}

type rEntry struct {
	seq        uint64
	key        string
	work       float64
	bytes      int
	ddl        bool
	st         runState
	finishV    float64
	heapIdx    int
	conflict   bool // optimistic: started before its conflicts committed
	wsReleased bool // optimistic: every unit it conflicts with has committed
}

type rQueue struct {
	seqs       []uint64
	committing *rEntry
	commitEnd  float64
}

type runState uint8

const (
	queued runState = iota
	ready
	running
	prepared // ran, waits for its turn to commit
	committing
	retryWait   // rolled back after a conflict: runs again when next to commit
	lockWaiting // ran, waits for the row locks of the units it conflicts with
)

// channelSize is the engine's read-ahead channel (apply.go: reads).
const channelSize = 256

func newReplica(mode depend.Mode, workers int, o *Options, cat txn.Catalog, shapes *shapeCache) *replica {
	r := &replica{mode: mode, workers: workers, o: o, cat: cat, shapes: shapes, tr: depend.New(mode, cat),
		idle: workers, entries: map[uint64]*rEntry{}, orderQ: map[string]*rQueue{},
		taken: make([]float64, channelSize), readTxn: o.Costs.ReadTxn.Seconds(), readPerKB: o.Costs.ReadKiB.Seconds()}
	if mode == depend.Optimistic || mode == depend.Aggressive {
		r.ws = depend.New(depend.Writeset, cat)
	}
	return r
}

// push gives the next transaction and simulates as far as it can.
func (r *replica) push(tx *txn.Txn) {
	r.input = append(r.input, tx)
	r.run()
}

// end says nothing more comes and simulates to the last commit.
func (r *replica) end() {
	r.ended = true
	r.run()
	if len(r.entries) > 0 || len(r.cur) > 0 || r.carry != nil {
		panic(fmt.Sprintf("analyze: %s simulation with %d workers ended with work left", r.mode, r.workers))
	}
}

// seconds is the simulated time of the last commit.
func (r *replica) seconds() float64 { return r.now }

func (r *replica) run() {
	for {
		for r.canTake() && r.available() {
			r.take()
		}
		if !r.ended && len(r.input) == 0 && r.carry == nil {
			return // the former may take the next transaction: wait for it
		}
		// The engine seals a unit early only when a worker waits and the
		// source stays quiet for sealQuiet; a reader merely a step behind
		// does not seal it.
		quiet := !(len(r.input) > 0 && r.available()) && (len(r.input) == 0 || r.arrival-r.now >= sealQuiet)
		if r.ended && len(r.input) == 0 || quiet && r.idle > 0 && r.readyQ.Len() == 0 {
			r.seal()
		}
		for r.sealed && len(r.cur) > 0 && r.canAdmit(r.curBytes) {
			r.admit()
		}
		r.dispatch()
		r.startCommits()
		if r.ended && len(r.input) == 0 && len(r.cur) == 0 && r.carry == nil && len(r.entries) == 0 {
			return
		}
		r.step()
	}
}

// canTake reports whether the former takes the next transaction when it
// is there (the engine stops reading while a sealed unit waits for room).
func (r *replica) canTake() bool { return r.carry == nil && len(r.input) > 0 }

// available reports whether input[0] has reached the channel by now.
// sealQuiet mirrors apply's: how long the source must be quiet, while a
// worker waits, before the engine seals the unit being formed.
const sealQuiet = 0.001 // seconds

func (r *replica) available() bool {
	r.arrive()
	return r.arrival <= r.now
}

// arrive computes when input[0] reaches the channel: after the reader read
// it, and not before the channel had room for it.
func (r *replica) arrive() {
	if r.arrived || len(r.input) == 0 {
		return
	}
	tx := r.input[0]
	r.arrival = r.lastRead + r.readTxn + float64(tx.Size)/1024*r.readPerKB
	if r.nTaken >= channelSize { // the channel has room once the transaction 256 before it was taken
		r.arrival = max(r.arrival, r.taken[r.nTaken%channelSize])
	}
	r.lastRead = r.arrival
	r.arrived = true
}

// take moves input[0] into the former.
func (r *replica) take() {
	tx := r.input[0]
	r.input[0] = nil
	r.input = r.input[1:]
	r.arrived = false
	r.taken[r.nTaken%channelSize] = r.now
	r.nTaken++
	if r.sealed || len(r.cur) > 0 && !r.joins(tx) {
		r.sealed = true
		r.carry = tx
		return
	}
	r.addToUnit(tx)
}

func (r *replica) addToUnit(tx *txn.Txn) {
	r.cur = append(r.cur, tx)
	r.curBytes += tx.Size
	if len(r.cur) >= r.o.UnitTxns || r.curBytes >= r.o.UnitBytes {
		r.sealed = true
	}
}

func (r *replica) joins(tx *txn.Txn) bool {
	if r.curBytes+tx.Size > r.o.UnitBytes {
		return false
	}
	return depend.CanJoin(r.mode, r.cur[0], r.cur[len(r.cur)-1], tx)
}

func (r *replica) seal() {
	if len(r.cur) > 0 {
		r.sealed = true
	}
}

func (r *replica) canAdmit(size int) bool {
	if r.ddlHold {
		return false
	}
	if len(r.entries) == 0 {
		return true
	}
	return r.inflight+size <= r.o.WindowBytes && len(r.entries) < 64*r.workers
}

// admit hands the sealed unit to the tracker and the commit order, and
// starts the next unit with the carried transaction.
func (r *replica) admit() {
	members := r.cur
	u := depend.Merge(members)
	e := &rEntry{seq: u.Seq, key: depend.OrderKey(r.mode, u), bytes: r.curBytes, ddl: u.IsDDL()}
	e.work = r.o.Costs.work(r.shapes.of(members), e.bytes, e.ddl)
	r.entries[e.seq] = e
	q := r.orderQ[e.key]
	if q == nil {
		q = &rQueue{}
		r.orderQ[e.key] = q
	}
	q.seqs = append(q.seqs, e.seq)
	r.inflight += e.bytes
	if e.ddl {
		r.ddlHold = true
	}
	r.units++
	r.txns += uint64(len(members))
	r.tr.Add(u)
	if r.ws != nil {
		r.ws.Add(u)
	}
	r.cur, r.curBytes, r.sealed = nil, 0, false
	if c := r.carry; c != nil {
		r.carry = nil
		r.addToUnit(c)
	}
	r.collect()
}

// collect takes what the trackers release.
func (r *replica) collect() {
	for _, s := range r.tr.Ready() {
		e := r.entries[s.Seq]
		e.st = ready
		heap.Push(&r.readyQ, e)
	}
	if r.ws == nil {
		return
	}
	for _, s := range r.ws.Ready() {
		e := r.entries[s.Seq]
		e.wsReleased = true
		if e.st == lockWaiting {
			r.redo(e)
		}
	}
}

// redo runs half of a conflicting unit's work again, once what it
// conflicts with has committed (the expected cost of a rollback).
func (r *replica) redo(e *rEntry) {
	e.conflict = false
	e.st = running
	e.finishV = r.v + e.work/2
	heap.Push(&r.running, e)
	r.reruns++
}

func (r *replica) isHead(e *rEntry) bool {
	q := r.orderQ[e.key]
	return len(q.seqs) > 0 && q.seqs[0] == e.seq
}

// headWaiting reports whether a next unit to commit has no worker.
func (r *replica) headWaiting() bool {
	for _, q := range r.orderQ {
		if len(q.seqs) > 0 {
			if st := r.entries[q.seqs[0]].st; st == queued || st == ready {
				return true
			}
		}
	}
	return false
}

func (r *replica) dispatch() {
	for r.idle > 0 && r.readyQ.Len() > 0 {
		e := r.readyQ[0]
		if r.idle == 1 && !r.isHead(e) && r.headWaiting() {
			return // the last idle worker is kept for a unit next to commit
		}
		heap.Pop(&r.readyQ)
		r.idle--
		e.st = running
		e.finishV = r.v + e.work
		heap.Push(&r.running, e)
		if r.ws != nil && !e.wsReleased {
			e.conflict = true
			if h := r.entries[r.orderQ[e.key].seqs[0]]; h != e && h.st == running {
				h.finishV += r.o.Costs.Conflict.Seconds() / 2
				heap.Fix(&r.running, h.heapIdx)
			}
		}
	}
}

func (r *replica) startCommits() {
	for _, q := range r.orderQ {
		if q.committing != nil || len(q.seqs) == 0 {
			continue
		}
		e := r.entries[q.seqs[0]]
		if e.st != prepared {
			continue
		}
		e.st = committing
		q.committing, q.commitEnd = e, r.now+r.o.Costs.Commit.Seconds()
		r.committing = append(r.committing, q)
	}
}

// step advances time to the next event: a transaction reaching the
// channel, a unit's work done, or a commit done.
func (r *replica) step() {
	rate := 1.0
	if k := float64(r.running.Len()); r.o.Costs.Cores > 0 && k > r.o.Costs.Cores {
		rate = r.o.Costs.Cores / k
	}
	dtRead, dtExec, dtCommit := math.Inf(1), math.Inf(1), math.Inf(1)
	if r.canTake() {
		r.arrive()
		dtRead = max(0, r.arrival-r.now)
	}
	if r.running.Len() > 0 {
		dtExec = max(0, (r.running[0].finishV-r.v)/rate)
	}
	var next *rQueue
	for _, q := range r.committing {
		if d := max(0, q.commitEnd-r.now); d < dtCommit {
			dtCommit, next = d, q
		}
	}
	dt := min(dtRead, dtExec, dtCommit)
	if math.IsInf(dt, 1) {
		panic(fmt.Sprintf("analyze: %s simulation with %d workers stalled: %d units in flight, %d idle workers",
			r.mode, r.workers, len(r.entries), r.idle))
	}
	r.now += dt
	r.v += dt * rate
	switch {
	case dt == dtCommit:
		r.finishCommit(next)
	case dt == dtExec:
		e := heap.Pop(&r.running).(*rEntry)
		switch {
		case e.conflict && e.wsReleased:
			r.redo(e)
		case e.conflict:
			e.st = lockWaiting // holds its worker
		default:
			e.st = prepared
		}
	}
}

func (r *replica) finishCommit(q *rQueue) {
	e := q.committing
	q.committing = nil
	q.seqs = q.seqs[1:]
	for i, c := range r.committing {
		if c == q {
			r.committing = append(r.committing[:i], r.committing[i+1:]...)
			break
		}
	}
	delete(r.entries, e.seq)
	r.tr.Done(e.seq)
	if r.ws != nil {
		r.ws.Done(e.seq)
	}
	r.idle++
	r.inflight -= e.bytes
	if e.ddl {
		r.ddlHold = false
	}
	r.collect()
}

// rHeap orders released units by seq.
type rHeap []*rEntry

func (h rHeap) Len() int           { return len(h) }
func (h rHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h rHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rHeap) Push(x any)        { *h = append(*h, x.(*rEntry)) }
func (h *rHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// rRunHeap orders running units by the virtual time their work is done.
type rRunHeap []*rEntry

func (h rRunHeap) Len() int { return len(h) }
func (h rRunHeap) Less(i, j int) bool {
	if h[i].finishV != h[j].finishV {
		return h[i].finishV < h[j].finishV
	}
	return h[i].seq < h[j].seq
}
func (h rRunHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *rRunHeap) Push(x any) {
	e := x.(*rEntry)
	e.heapIdx = len(*h)
	*h = append(*h, e)
}
func (h *rRunHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	e.heapIdx = -1
	return e
}
