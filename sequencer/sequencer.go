// Package sequencer holds every rule of prepl's apply engine and nothing
// else: the read-ahead window, forming commit units, what may start
// (package depend), which worker runs what, commit order per key, retries
// and yields, the DDL barrier and the positions stored with each commit.
//
// It does no I/O, starts no goroutines and reads no clock: the caller
// feeds it events (a transaction read, a unit admitted, prepared,
// committed, failed with a class, lock waits seen, time passed) and asks
// it for actions (admit a unit, start it on a worker, commit it, roll it
// back, kill its statement). Package apply drives it with real workers
// and a real clock; a simulation can drive it with a simulated clock and
// a cost model, and get the engine's own decisions.
//
// The caller's loop:
//
//	for !s.Done() {
//		s.Tick(now, backlog)
//		for _, a := range s.Ready() { perform a }
//		wait for an event (or s.Deadline()), feed it
//	}
package sequencer

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// Config of a sequencer. Zero fields take the defaults of package apply.
type Config struct {
	Mode    depend.Mode
	Workers int // 0 or 1: one worker, mode serial
	// Retries bounds how often one unit is retried after a deadlock or
	// lock wait timeout while it runs alone as the next to commit (like
	// slave_transaction_retries); conflicts of speculative work do not
	// count.
	Retries int
	// WindowBytes bounds the bytes admitted and not yet committed (like
	// slave_parallel_max_queued); a unit larger than it runs alone.
	WindowBytes int
	// UnitTxns and UnitBytes bound a commit unit (1: one target
	// transaction per source transaction).
	UnitTxns, UnitBytes int
	// UnitRows bounds a commit unit's source row changes (0: no bound):
	// a Galera cluster refuses a write set of more rows than
	// wsrep_max_ws_rows. A transaction of more rows runs alone.
	UnitRows int
	// SealQuiet: a unit being formed is sealed when a worker waits for
	// work and no transaction is waiting to be fed for this long (a live
	// stream's pause, not a reader a step behind). UnitMaxWait bounds how
	// long a unit forms while a worker waits.
	SealQuiet, UnitMaxWait time.Duration
	// HeadStallAfter: when the next unit to commit has run this long,
	// later prepared units yield (they may hold locks it waits for that
	// the target does not report).
	HeadStallAfter time.Duration
	// WaitsVisible: the caller feeds the target's lock waits (LockWaits),
	// including waits whose holder the target does not name
	// (BlockerUnknown), so no unit yields on a timer; HeadStallAfter is
	// the fallback once the caller says it cannot see them
	// (LockWaitsUnseen).
	WaitsVisible bool
	// Adapt: Workers is a ceiling; the number of units in flight is
	// chosen by a Controller from what is measured every AdaptEvery.
	// Without it, up to Workers units are in flight.
	Adapt      bool
	AdaptEvery time.Duration
	// Catalog is what the tracker reads table definitions from; the
	// caller loads a unit's tables before it reports the unit Admitted.
	Catalog txn.Catalog
}

// Defaults of Config.
const (
	DefaultRetries        = 10
	DefaultWindowBytes    = 64 << 20
	DefaultSealQuiet      = time.Millisecond
	DefaultUnitMaxWait    = 20 * time.Millisecond
	DefaultHeadStallAfter = 300 * time.Millisecond
	DefaultAdaptEvery     = 100 * time.Millisecond
)

// DefaultUnitTxns is the default most source transactions in a commit
// unit (--commit-unit; the bytes are bounded too, by min(4 MiB, half the
// window)). It was 500 until 2026-11-26; on the benchmark's sysbench
// workloads (docs/benchmarks.md, "Bigger commit units") units of 2,000
// caught up 20 to 35% faster on every durability config, from more
// changes to the same rows compacted away (update-index: 8,656 row
// changes saved of 20,000 against 3,268) and fewer commits. A unit
// formed while the source is quiet is sealed early whatever this is, so
// it bounds only a backlog's units.
const DefaultUnitTxns = 2000

// DefaultUnitBytes is the default most bytes of a commit unit in a window
// of window bytes: 4 MiB, or half the window when that is less.
func DefaultUnitBytes(window int) int { return min(4<<20, window/2) }

// WithDefaults returns c with its zero fields set.
func (c Config) WithDefaults() Config {
	if c.Mode == "" {
		c.Mode = depend.Writeset
	}
	if c.Workers < 1 {
		c.Workers = 1
		c.Mode = depend.Serial
	}
	if c.Retries <= 0 {
		c.Retries = DefaultRetries
	}
	if c.WindowBytes <= 0 {
		c.WindowBytes = DefaultWindowBytes
	}
	if c.UnitTxns <= 0 {
		c.UnitTxns = 1
	}
	if c.UnitBytes <= 0 {
		c.UnitBytes = DefaultUnitBytes(c.WindowBytes)
	}
	if c.SealQuiet <= 0 {
		c.SealQuiet = DefaultSealQuiet
	}
	if c.UnitMaxWait <= 0 {
		c.UnitMaxWait = DefaultUnitMaxWait
	}
	if c.HeadStallAfter <= 0 {
		c.HeadStallAfter = DefaultHeadStallAfter
	}
	if c.AdaptEvery <= 0 {
		c.AdaptEvery = DefaultAdaptEvery
	}
	return c
}

// SlotMain is the checkpoint slot of in-order modes. Modes schema and
// domain commit in order per schema or domain, each in a slot named by
// its commit-order key.
const SlotMain = "main"

// SlotOf names the checkpoint slot of commit-order key key.
func SlotOf(key string) string {
	if key == "" {
		return SlotMain
	}
	return key
}

// Origin is where a run starts: the gapless floor and each slot's stored
// checkpoint (transactions above the floor that a slot covers are
// skipped by the caller before they are read, see apply.Resume).
type Origin struct {
	Floor position.Floor
	Slots map[string]position.Checkpoint
}

// Reasons a unit waited besides the tracker's: it was larger than the
// window and ran alone; the window was full, so admission waited.
const (
	ReasonBigTransaction depend.Reason = "big-transaction"
	ReasonWindowFull     depend.Reason = "window-full"
)

type state uint8

const (
	loading    state = iota // Admit action given, Admitted not yet fed
	queued                  // admitted, not yet allowed to start
	ready                   // allowed by the tracker, waiting for a worker
	running                 // Start action given
	prepared                // body applied, waiting for its commit turn
	committing              // Commit action given, or started as next to commit
	retryWait               // failed as a conflict; runs again when it is next to commit
)

var stateNames = [...]string{"loading", "queued", "ready", "running", "prepared", "committing", "retry-wait"}

func (s state) String() string { return stateNames[s] }

// Sequencer is the engine's state. Invariants (a broken one panics with
// its name):
//
//   - order: units commit in admission order per commit-order key: a
//     Committed unit is the head of its key's queue.
//   - floor: the floor only covers units that have committed along with
//     every unit admitted before them; each unit's checkpoint carries a
//     floor at or below it.
//   - worker: a worker holds at most one unit, and a running, prepared or
//     committing unit is held by exactly one worker.
//   - admission: units enter the tracker in stream order, one Admit at a
//     time; the tracker releases only admitted units, each once; a unit
//     enters without keys only while the limit is 1 and the tracker holds
//     no unit (feed).
//   - window: while units are in flight, a new one is admitted only if
//     the bytes in flight stay within WindowBytes, and nothing is admitted
//     after a DDL until it has committed (the DDL barrier).
//   - events: an event names a unit in a state it can come from
//     (Prepared: running; Committed: committing, or running as next to
//     commit; Failed: running, prepared or committing).
type Sequencer struct {
	cfg     Config
	tracker *depend.Tracker
	now     time.Time
	backlog bool

	reading, stopping bool
	f                 former
	loadingUnit       *Unit // Admit given, Admitted not yet fed
	// untracked: admitted units not yet in the tracker, in stream order
	// (feed).
	untracked  []*Unit
	quietSince time.Time

	// Positions. gtid holds every transaction taken from the former (or
	// skipped with nothing before it), in stream order.
	gtid        *position.Set
	slotGTID    map[string]*position.Set
	slotApplied map[string]uint64
	slotLast    map[string]position.Checkpoint
	// admittedQ holds admitted units in stream order until they and all
	// before them have committed; floor is the gapless committed position.
	admittedQ []*Unit
	floor     position.Floor
	lastPos   position.Checkpoint

	units    map[uint64]*Unit
	orderQ   map[string][]uint64 // per commit-order key, admitted seqs in order
	readyQ   []uint64            // allowed to start, waiting for a worker, ascending
	idle     []int               // worker ids, a stack
	held     []*Unit             // by worker id
	inflight int                 // bytes admitted and not committed
	ddlHold  bool

	waits        map[depend.Reason]uint64
	yields       map[string]uint64
	waitsVisible bool

	// Concurrency: at most limit units held by workers (a head may
	// exceed it: it never waits for a slot). ctl is nil unless Adapt.
	limit         int
	ctl           *Controller
	smp           sampler
	windowStalled bool
	stats         Stats
	actions       []Action
}

// New returns a sequencer for cfg starting at st.
func New(cfg Config, st Origin) (*Sequencer, error) {
	cfg = cfg.WithDefaults()
	g, err := position.ParseSet(st.Floor.GTIDPos)
	if err != nil {
		return nil, err
	}
	s := &Sequencer{cfg: cfg, tracker: depend.New(cfg.Mode, cfg.Catalog), reading: true,
		f:    former{mode: cfg.Mode, maxTxns: cfg.UnitTxns, maxBytes: cfg.UnitBytes, maxRows: cfg.UnitRows},
		gtid: g, slotGTID: map[string]*position.Set{}, slotApplied: map[string]uint64{},
		slotLast: map[string]position.Checkpoint{}, floor: st.Floor,
		units: map[uint64]*Unit{}, orderQ: map[string][]uint64{}, held: make([]*Unit, cfg.Workers),
		waits: map[depend.Reason]uint64{}, yields: map[string]uint64{}, waitsVisible: cfg.WaitsVisible,
		limit: cfg.Workers}
	if cfg.Adapt && cfg.Workers > 1 {
		s.ctl = NewController(cfg.Workers)
		s.limit = s.ctl.Limit()
	}
	for slot, p := range st.Slots {
		if s.slotGTID[slot], err = position.ParseSet(p.GTIDPos); err != nil {
			return nil, fmt.Errorf("stored position of slot %q: %w", slot, err)
		}
		s.slotApplied[slot], s.slotLast[slot] = p.Applied, p
	}
	for w := cfg.Workers - 1; w >= 0; w-- {
		s.idle = append(s.idle, w) // worker 0 on top: the first to start
	}
	s.lastPos = position.Checkpoint{Slot: SlotMain, GTIDPos: st.Floor.GTIDPos, File: st.Floor.File, Pos: st.Floor.Pos}
	s.stats.UnitHist = make([]uint64, len(UnitBuckets)+1)
	s.stats.Errors = map[string]uint64{}
	s.stats.RetriesBy = map[string]uint64{}
	return s, nil
}

// Config returns the configuration in use, defaults set.
func (s *Sequencer) Config() Config { return s.cfg }

// Tick tells the time, and whether transactions already read wait to be
// fed (backlog: the reader is ahead, so a worker waiting for work is not
// a pause of the source).
func (s *Sequencer) Tick(now time.Time, backlog bool) {
	if now.Before(s.now) {
		panic(fmt.Sprintf("sequencer: invariant broken: time went back from %s to %s", s.now, now))
	}
	s.now, s.backlog = now, backlog
	if s.ctl != nil {
		s.adapt()
	}
}

// sampler accumulates one interval's measurements for the Controller.
// An interval runs from one commit to the first commit after AdaptEvery
// has passed, so that a sample counts whole units: counted on a fixed
// clock, units of hundreds of transactions would make the rate jump by a
// unit's worth between intervals.
type sampler struct {
	start                  time.Time
	txns, units, conflicts uint64
	waited                 uint64 // units committed that waited for an earlier one's lock
	ticks, starved         int
	lastCommit             time.Time // of the interval, zero before its first
	lastTxns, lastUnits    uint64    // stats.Txns, stats.Units after it
}

// adapt counts this tick and, once an interval has ended, feeds the
// controller and takes its limit.
func (s *Sequencer) adapt() {
	m := &s.smp
	if m.start.IsZero() {
		*m = sampler{start: s.now, txns: s.stats.Txns, units: s.stats.Units, conflicts: s.stats.Errors["conflict"]}
		return
	}
	m.ticks++
	// Starved: nothing waits to be fed or started while a slot is free.
	// The end of the input is not: a replay reads its last window's worth
	// (all of a small binlog) at once, and admitted units still wait.
	if s.stopping || (!s.backlog && !s.f.full() && len(s.readyQ) == 0 && s.free() > 0) {
		m.starved++
	}
	conflicts := s.stats.Errors["conflict"] - m.conflicts
	switch {
	case !m.lastCommit.IsZero() && m.lastCommit.Sub(m.start) >= s.cfg.AdaptEvery && m.lastUnits-m.units >= uint64(s.limit):
		// As many units as may be in flight: with units longer than
		// AdaptEvery, one commit would measure one unit's rate whatever
		// the limit.
	case s.now.Sub(m.start) >= 10*s.cfg.AdaptEvery:
		// Nothing or too little committed: a long unit, or a stall.
		// What committed until now is the sample.
		m.lastCommit, m.lastTxns, m.lastUnits = s.now, s.stats.Txns, s.stats.Units
	default:
		return
	}
	smp := Sample{Elapsed: m.lastCommit.Sub(m.start), Txns: m.lastTxns - m.txns, Units: m.lastUnits - m.units,
		Conflicts: conflicts, Waited: m.waited}
	smp.Starved = smp.Txns == 0 || 2*m.starved > m.ticks
	s.limit = s.ctl.Observe(smp)
	*m = sampler{start: m.lastCommit, txns: m.lastTxns, units: m.lastUnits, conflicts: s.stats.Errors["conflict"]}
}

// committedAt notes u's commit for the sampler.
func (s *Sequencer) committedAt(u *Unit) {
	if m := &s.smp; s.ctl != nil && !m.start.IsZero() {
		if u.lockWaited {
			m.waited++
		}
		m.lastCommit, m.lastTxns, m.lastUnits = s.now, s.stats.Txns, s.stats.Units
	}
}

// free is how many more units may start on workers under the limit.
func (s *Sequencer) free() int {
	return max(0, min(len(s.idle), s.limit-s.Busy()))
}

// Concurrency is the number of units that may be in flight now: Workers,
// or the controller's choice with Adapt (a probe's level while one runs).
func (s *Sequencer) Concurrency() int { return s.limit }

// Settled is the limit the controller keeps between its probes
// (Concurrency without Adapt).
func (s *Sequencer) Settled() int {
	if s.ctl == nil {
		return s.limit
	}
	return s.ctl.Settled()
}

// LockWaitsUnseen says that the caller can no longer see the target's
// lock waits: a next-to-commit unit that runs HeadStallAfter makes the
// later prepared units yield, since a wait for their locks is possible.
func (s *Sequencer) LockWaitsUnseen() { s.waitsVisible = false }

// WantsInput reports whether the next transaction read may be fed.
func (s *Sequencer) WantsInput() bool { return s.reading && !s.stopping && !s.f.full() }

// Read feeds the next transaction of the stream; skip: it is counted in
// the position, not applied (filtered out, or already applied).
// Requires WantsInput.
func (s *Sequencer) Read(t *txn.Txn, skip bool) {
	if !s.WantsInput() {
		panic("sequencer: invariant broken: Read while it wants no input")
	}
	s.quietSince = time.Time{} // the source is not quiet: start over
	if skip && s.f.empty() {
		s.gtid.Add(t) // nothing before it waits: the position moves with the next commit
		return
	}
	s.f.add(t, skip, s.now)
}

// EndOfInput says that nothing more will be read: what was read is
// applied, then the sequencer is Done.
func (s *Sequencer) EndOfInput() { s.reading = false }

// Stop is a graceful stop: what is admitted finishes and commits, the
// rest is dropped.
func (s *Sequencer) Stop() {
	s.stopping, s.reading = true, false
	s.f.drop()
}

// Done reports whether everything read has committed (or been dropped by
// Stop) and nothing more will be read.
func (s *Sequencer) Done() bool {
	return !s.reading && s.f.empty() && s.loadingUnit == nil && len(s.units) == 0
}

// Busy is the number of workers that hold a unit.
func (s *Sequencer) Busy() int { return s.cfg.Workers - len(s.idle) }

// InFlight is the number of units admitted and not committed.
func (s *Sequencer) InFlight() int { return len(s.units) }

// Ready does what the time and the events so far allow and returns the
// actions for the caller to perform, in order.
func (s *Sequencer) Ready() []Action {
	s.form()
	s.dispatch()
	if s.cfg.Workers > 1 && !s.waitsVisible {
		s.yieldToStalledHead()
	}
	out := s.actions
	s.actions = nil
	return out
}

// form seals the unit being formed when nothing more will come, or when
// a worker waits for work and the source has been quiet for SealQuiet, or
// the unit has formed for UnitMaxWait, unless it would wait for a unit in
// flight (formingWaits); then admits what the window allows.
func (s *Sequencer) form() {
	f := &s.f
	waiting := s.free() > 0 && len(s.readyQ) == 0 && !f.empty()
	starved := waiting && !s.backlog
	switch {
	case !s.reading:
		f.seal()
	case waiting && s.now.Sub(f.since) >= s.cfg.UnitMaxWait:
		if !s.formingWaits() {
			f.seal() // a steady trickle never goes quiet: do not let it add lag
		}
	case starved && s.quietSince.IsZero():
		s.quietSince = s.now
	case !starved:
		s.quietSince = time.Time{}
	}
	if starved && !s.quietSince.IsZero() && s.now.Sub(s.quietSince) >= s.cfg.SealQuiet {
		s.quietSince = time.Time{}
		if !s.formingWaits() {
			f.seal()
		}
	}
	if s.loadingUnit != nil {
		return // one admission at a time, in stream order
	}
	if f.ready() && s.canAdmit(f.bytes) {
		if f.bytes > s.cfg.WindowBytes {
			s.waits[ReasonBigTransaction]++
		}
		s.admit(f.take(s.now))
		s.windowStalled = false
		return
	}
	if f.ready() && !s.windowStalled && !s.ddlHold {
		s.windowStalled = true // counted once per stall
		s.waits[ReasonWindowFull]++
	}
}

// formingWaits reports whether the unit being formed would wait for a
// unit in flight if it were sealed now. Then a free worker could not run
// it anyway, and sealing it would only make it smaller: on hot rows
// (sysbench oltp, every unit waiting for the one before) units sealed
// after UnitMaxWait were half the size of --workers 0's, and the run
// 10-15% slower. It keeps growing until what it waits for commits (or
// it is full); then UnitMaxWait has passed and it is sealed at once.
//
// Each member's keys are computed once more here, and only while the
// rule would seal: while the unit forms nothing is admitted, so the
// units in flight only commit, a member that would not wait never will,
// and one that would waits while the latest unit it conflicts with is
// pending (depend.Tracker.WouldWait).
func (s *Sequencer) formingWaits() bool {
	f := &s.f
	if s.knownToWait() {
		return true
	}
	if s.cfg.Mode != depend.Writeset || s.loadingUnit != nil || len(s.untracked) > 0 || s.tracker.Pending() == 0 {
		return false // nothing to wait for, or the tracker does not know every unit before it yet
	}
	for ; f.checked < len(f.cur.txs); f.checked++ {
		if f.cur.skip[f.checked] {
			continue
		}
		if on := s.tracker.WouldWait(f.cur.txs[f.checked]); on != 0 {
			f.waitOn = on
			f.checked++
			return true
		}
	}
	return false
}

// knownToWait reports what formingWaits last found, without computing
// anything (for Deadline): the unit being formed waits for a unit that
// has not committed.
func (s *Sequencer) knownToWait() bool {
	return s.f.waitOn != 0 && s.tracker.IsPending(s.f.waitOn)
}

func (s *Sequencer) canAdmit(size int) bool {
	if s.ddlHold {
		return false
	}
	if len(s.units) == 0 {
		return true // a unit larger than the window runs alone
	}
	return s.inflight+size <= s.cfg.WindowBytes && len(s.units) < 64*s.limit
}

// admit takes a sealed batch: positions are computed now, in stream
// order; a unit with members to apply is given to the caller to load
// (Admit) and enters the tracker when it is Admitted.
func (s *Sequencer) admit(b batch) {
	u := &Unit{Members: b.txs, Skip: b.skip, worker: -1}
	ap := u.Applied()
	if len(ap) == 0 {
		// Only skipped transactions: nothing to commit; the position
		// moves past them with the next commit.
		for _, m := range u.Members {
			s.gtid.Add(m)
		}
		return
	}
	u.nApplied = len(ap)
	u.Txn = depend.Merge(ap)
	u.key = depend.OrderKey(s.cfg.Mode, u.Txn)
	slot := SlotOf(u.key)
	sg := s.slotGTID[slot]
	if sg == nil {
		sg = &position.Set{}
		s.slotGTID[slot] = sg
	}
	for _, m := range u.Members {
		s.gtid.Add(m)
		sg.Add(m)
		u.Size += m.Size
	}
	s.slotApplied[slot] += uint64(len(u.Members))
	last := u.Last()
	u.Before = s.slotLast[slot]
	u.Before.Slot = slot
	u.Pos = position.Checkpoint{Slot: slot, GTIDPos: sg.String(), File: last.End.File, Pos: last.End.Offset,
		LastGTID: last.GTID, SourceTS: last.Timestamp, Applied: s.slotApplied[slot]}
	u.floorAfter = position.Floor{GTIDPos: s.gtid.String(), File: last.End.File, Pos: last.End.Offset}
	s.slotLast[slot] = u.Pos
	if _, dup := s.units[u.Seq()]; dup {
		panic(fmt.Sprintf("sequencer: invariant broken (admission): seq %d admitted twice", u.Seq()))
	}
	u.st = loading
	s.units[u.Seq()] = u
	s.orderQ[u.key] = append(s.orderQ[u.key], u.Seq())
	s.admittedQ = append(s.admittedQ, u)
	s.inflight += u.Size
	if u.Txn.IsDDL() {
		s.ddlHold = true
	}
	s.loadingUnit = u
	s.actions = append(s.actions, Action{Kind: Admit, Unit: u, Worker: -1})
}

// Admitted says that the unit of an Admit action is loaded (its tables'
// definitions are in the catalog): it enters the dependency tracker.
func (s *Sequencer) Admitted(seq uint64) {
	u := s.loadingUnit
	if u == nil || u.Seq() != seq {
		panic(fmt.Sprintf("sequencer: invariant broken (admission): Admitted(%d) but the unit loading is %v", seq, seqOf(u)))
	}
	s.loadingUnit = nil
	u.st = queued
	s.untracked = append(s.untracked, u)
	s.feed()
}

// feed enters admitted units into the tracker, in stream order. While at
// most one unit may be in flight (the controller's limit is 1, as at the
// start of every run and wherever more units measured no faster), a unit
// enters only when the tracker holds none, and without its keys
// (depend.Tracker.AddWhole): keys could only let units run at the same
// time, which the limit forbids, and computing them was 4-10% of
// prepl's CPU in runs with workers on sysbench's workloads
// (docs/benchmarks.md, "Keys only when units may run together"), which
// --workers 0 does not spend. Once the limit rises, every unit waiting
// enters with its keys; the one in flight, if any, is a barrier until it
// commits.
func (s *Sequencer) feed() {
	for len(s.untracked) > 0 {
		u := s.untracked[0]
		if s.limit == 1 && s.cfg.Mode == depend.Writeset {
			if s.tracker.Pending() > 0 {
				return
			}
			s.tracker.AddWhole(u.Txn)
		} else {
			s.tracker.Add(u.Txn)
		}
		s.untracked[0] = nil
		s.untracked = s.untracked[1:]
	}
}

func seqOf(u *Unit) any {
	if u == nil {
		return "none"
	}
	return u.Seq()
}

func (s *Sequencer) isHead(u *Unit) bool {
	q := s.orderQ[u.key]
	return len(q) > 0 && q[0] == u.Seq()
}

// keys returns the commit-order keys in a fixed order, so that the same
// events give the same actions.
func (s *Sequencer) keys() []string {
	ks := make([]string, 0, len(s.orderQ))
	for k, q := range s.orderQ {
		if len(q) == 0 {
			delete(s.orderQ, k)
			continue
		}
		ks = append(ks, k)
	}
	if len(ks) > 1 {
		sort.Strings(ks)
	}
	return ks
}

// dispatch moves what the tracker allows to idle workers and gives
// commit turns to the heads of the commit-order queues.
func (s *Sequencer) dispatch() {
	s.feed()
	for _, r := range s.tracker.Ready() {
		u := s.units[r.Seq]
		if u == nil || u.st != queued {
			panic(fmt.Sprintf("sequencer: invariant broken (admission): the tracker released seq %d, not admitted or already released", r.Seq))
		}
		u.reason = r.Reason
		u.st = ready
		s.pushReady(r.Seq)
	}
	for _, k := range s.keys() {
		u := s.units[s.orderQ[k][0]]
		switch u.st {
		case retryWait:
			u.st = ready
			s.pushReady(u.Seq())
		case prepared:
			u.st = committing
			a := Action{Kind: Commit, Unit: u, Worker: u.worker, Pos: u.Pos}
			a.Pos.Floor = s.floorAt(u)
			s.actions = append(s.actions, a)
		}
	}
	for len(s.idle) > 0 && len(s.readyQ) > 0 {
		i := 0
		// The last idle worker (or slot under the limit) is kept for the
		// next unit to commit: if later units took every worker, they
		// would wait for its commit while it waits for a worker. A next
		// to commit starts whenever a worker is idle, over the limit if
		// need be, so a lowered limit never blocks the commit order.
		if fr := s.free(); !s.isHead(s.units[s.readyQ[0]]) && (fr == 0 || (fr == 1 || len(s.idle) == 1) && s.headWaiting()) {
			if i = s.readyHead(); i < 0 {
				break
			}
		}
		u := s.units[s.readyQ[i]]
		s.readyQ = append(s.readyQ[:i], s.readyQ[i+1:]...)
		w := s.idle[len(s.idle)-1]
		s.idle = s.idle[:len(s.idle)-1]
		s.hold(w, u)
		u.st, u.aborted, u.started, u.unseenWait = running, false, s.now, time.Time{}
		a := Action{Kind: Start, Unit: u, Worker: w, Pos: u.Pos, Before: u.Before}
		a.Before.Floor = s.floor
		if s.isHead(u) {
			a.CommitNow = true
			u.st = committing
			a.Pos.Floor = s.floorAt(u)
			a.Oldest = s.admittedQ[0] == u
		}
		s.actions = append(s.actions, a)
	}
}

// readyHead is the index in readyQ of its first unit that is the next to
// commit of its key, or -1. It looks up each key's head rather than
// scanning readyQ: at a limit of one, thousands of admitted units can
// wait there, and dispatch runs on every event.
func (s *Sequencer) readyHead() int {
	i := -1
	for _, q := range s.orderQ {
		if len(q) == 0 || s.units[q[0]].st != ready {
			continue
		}
		j := sort.Search(len(s.readyQ), func(j int) bool { return s.readyQ[j] >= q[0] })
		if i < 0 || j < i {
			i = j
		}
	}
	return i
}

func (s *Sequencer) hold(w int, u *Unit) {
	if s.held[w] != nil || u.worker >= 0 {
		panic(fmt.Sprintf("sequencer: invariant broken (worker): worker %d holds %v, unit %d is on worker %d", w, seqOf(s.held[w]), u.Seq(), u.worker))
	}
	s.held[w], u.worker = u, w
}

// release gives u's worker back.
func (s *Sequencer) release(u *Unit) {
	w := u.worker
	if w < 0 || s.held[w] != u {
		panic(fmt.Sprintf("sequencer: invariant broken (worker): unit %d (%s) released but not held", u.Seq(), u.st))
	}
	s.held[w], u.worker = nil, -1
	s.idle = append(s.idle, w)
}

// headWaiting reports whether a next unit to commit has no worker.
func (s *Sequencer) headWaiting() bool {
	for _, k := range s.keys() {
		if st := s.units[s.orderQ[k][0]].st; st == queued || st == ready || st == retryWait {
			return true
		}
	}
	return false
}

// floorAt is the floor to store with u's commit: its own end when every
// unit before it has committed, else the gapless position so far.
func (s *Sequencer) floorAt(u *Unit) position.Floor {
	if len(s.admittedQ) > 0 && s.admittedQ[0] == u {
		return u.floorAfter
	}
	return s.floor
}

func (s *Sequencer) pushReady(seq uint64) {
	i := sort.Search(len(s.readyQ), func(i int) bool { return s.readyQ[i] >= seq })
	s.readyQ = append(s.readyQ, 0)
	copy(s.readyQ[i+1:], s.readyQ[i:])
	s.readyQ[i] = seq
}

func (s *Sequencer) unit(seq uint64, event string, from ...state) *Unit {
	u := s.units[seq]
	if u == nil {
		panic(fmt.Sprintf("sequencer: invariant broken (events): %s for seq %d, not in flight", event, seq))
	}
	for _, st := range from {
		if u.st == st {
			return u
		}
	}
	panic(fmt.Sprintf("sequencer: invariant broken (events): %s for seq %d in state %s", event, seq, u.st))
}

// Prepared says that a unit started without CommitNow has applied its
// body and waits for its turn; a unit asked to yield meanwhile is rolled
// back instead.
func (s *Sequencer) Prepared(seq uint64) {
	u := s.unit(seq, "Prepared", running)
	if u.aborted {
		s.actions = append(s.actions, Action{Kind: Abort, Unit: u, Worker: u.worker})
		return
	}
	u.st = prepared
}

// Committed says that the unit's target transaction committed with its
// checkpoint.
func (s *Sequencer) Committed(seq uint64) {
	u := s.unit(seq, "Committed", committing)
	q := s.orderQ[u.key]
	if len(q) == 0 || q[0] != seq {
		panic(fmt.Sprintf("sequencer: invariant broken (order): seq %d committed before the head of its key %q (%v)", seq, u.key, q))
	}
	s.orderQ[u.key] = q[1:]
	delete(s.units, seq)
	s.tracker.Done(seq)
	s.release(u)
	s.inflight -= u.Size
	u.committed = true
	for len(s.admittedQ) > 0 && s.admittedQ[0].committed {
		s.floor = s.admittedQ[0].floorAfter
		s.admittedQ = s.admittedQ[1:]
	}
	s.lastPos = position.Checkpoint{Slot: u.Pos.Slot, GTIDPos: s.floor.GTIDPos, File: s.floor.File, Pos: s.floor.Pos,
		LastGTID: u.Pos.LastGTID, SourceTS: u.Pos.SourceTS}
	s.stats.Txns += uint64(u.nApplied)
	s.stats.Rows += uint64(u.Txn.Rows())
	s.stats.Bytes += uint64(u.Txn.Size)
	if u.Txn.IsDDL() {
		s.ddlHold = false
	} else {
		s.stats.Units++
		s.stats.UnitHist[unitBucket(u.nApplied)]++
	}
	s.committedAt(u)
}

// Class is how a failed attempt is treated.
type Class int

const (
	// Fatal: stop, unless the attempt was speculative (then retry).
	Fatal Class = iota
	// Refused: the target refused a statement (a server error): fatal
	// like Fatal; the caller may find which member failed.
	Refused
	// Retry: a deadlock or lock wait timeout: roll back and retry.
	Retry
	// Connection: the connection broke and was opened again: retry.
	Connection
)

var classNames = [...]string{"fatal", "refused", "retry", "connection"}

func (c Class) String() string { return classNames[c] }

// Failure is a failed attempt of a unit, rolled back.
type Failure struct {
	Class   Class
	Yielded bool // rolled back on an Abort action
	// Speculative: the unit started before every unit ahead of it in its
	// commit order had committed, so what failed may be their
	// uncommitted work rather than its own, even if it is the next to
	// commit by the time the failure is told (a PostgreSQL snapshot does
	// not see a row an earlier unit is inserting, where InnoDB waits for
	// it): a conflict, retried.
	Speculative bool
	// Final failures are never retried: the caller could not recover
	// (its connection could not be opened again), or it found and named
	// the failing member.
	Final bool
	Err   error
	// Prefix, when the caller committed the unit's members before the
	// failing one (see PrefixCheckpoint).
	Prefix *Prefix
}

// Prefix is what the caller committed of a failing unit.
type Prefix struct {
	Pos        position.Checkpoint
	Txns, Rows int
}

// ErrGaveUp is wrapped when a unit failed more than Config.Retries times
// while it ran alone as the next to commit.
var ErrGaveUp = errors.New("giving up after retries")

// Failed says that a unit's attempt failed and was rolled back. It
// returns an error when the run must stop: a final or fatal failure of a
// unit that was not speculative, or too many retries. Otherwise the unit
// runs again once it is the next to commit.
func (s *Sequencer) Failed(seq uint64, f Failure) error {
	u := s.unit(seq, "Failed", running, prepared, committing)
	s.release(u)
	if p := f.Prefix; p != nil {
		s.lastPos = p.Pos
		s.stats.Txns += uint64(p.Txns)
		s.stats.Rows += uint64(p.Rows)
	}
	if f.Final {
		s.countError(Fatal, false, f)
		return f.Err
	}
	// A failure is a conflict with speculative work, not counted against
	// Retries, unless the unit was next to commit and ran alone: a
	// deadlock victim chosen among several running units is not to blame.
	conflict := u.aborted || f.Yielded || f.Speculative || !s.isHead(u) || f.Class == Retry && s.othersInFlight(u)
	s.countError(f.Class, conflict, f)
	if !conflict {
		if f.Class == Fatal || f.Class == Refused {
			return f.Err
		}
		u.retries++
		if u.retries > s.cfg.Retries {
			return fmt.Errorf("%s: %w (%d): %w", u.Txn.ID(), ErrGaveUp, s.cfg.Retries, f.Err)
		}
	}
	s.stats.Retries++
	s.stats.RetriesBy[retryCause(conflict, u.aborted || f.Yielded, f.Class)]++
	u.st = retryWait
	return nil
}

// Causes of retries (Stats.RetriesBy).
const (
	RetryYield      = "yield"      // rolled back for an earlier unit (Stats.Yields says why)
	RetryConflict   = "conflict"   // failed ahead of its turn: speculative work, or a deadlock between units in flight
	RetryDeadlock   = "deadlock"   // the next to commit, alone: a deadlock or lock wait timeout with another session
	RetryConnection = "connection" // the connection broke and was opened again
)

func retryCause(conflict, yielded bool, c Class) string {
	switch {
	case yielded:
		return RetryYield
	case conflict:
		return RetryConflict
	case c == Connection:
		return RetryConnection
	}
	return RetryDeadlock
}

// countError counts a failed attempt by class for Stats.Errors.
func (s *Sequencer) countError(c Class, conflict bool, f Failure) {
	name := "conflict"
	switch {
	case conflict:
	case c == Connection:
		name = "connection"
	case c == Fatal || c == Refused:
		name = "fatal"
	default:
		name = "retry"
	}
	s.stats.Errors[name]++
	if !f.Yielded && f.Err != nil {
		s.stats.LastError = f.Err.Error()
	}
}

// othersInFlight reports whether a unit other than u holds or may hold
// locks on the target.
func (s *Sequencer) othersInFlight(u *Unit) bool {
	for _, h := range s.held {
		if h != nil && h != u {
			return true
		}
	}
	return false
}

// LockWait: the unit on worker Requester waits for a lock that the unit
// on worker Blocker holds.
type LockWait struct{ Requester, Blocker int }

// BlockerUnknown as LockWait.Blocker: the requester waits for a lock and
// the target does not say who holds it.
const BlockerUnknown = -1

// Causes of yields (Stats.Yields).
const (
	YieldLockWait       = "lock-wait"        // an earlier unit waits for this one's lock
	YieldLockWaitUnseen = "lock-wait-unseen" // the next to commit waits, holder not named
	YieldHeadStall      = "head-stall"       // waits cannot be seen; the next to commit ran HeadStallAfter
)

// LockWaits resolves waits the target reports: when an earlier unit
// waits for a lock a later one holds, the later one yields (MariaDB's
// rule): a prepared one is rolled back, a running one's statement killed.
// A kill that comes between two of a unit's statements is lost (the
// target forgets it when the next one starts), so a unit asked to yield
// that still runs is killed again while the wait lasts, and so is one
// that was asked to yield and now waits for a lock itself (it may wait
// for an earlier prepared unit, which waits for the next to commit,
// which waits for it: a cycle the target does not see).
func (s *Sequencer) LockWaits(ws []LockWait) {
	on := func(w int) *Unit {
		if w < 0 || w >= len(s.held) {
			return nil
		}
		return s.held[w]
	}
	killed, unseen := map[*Unit]bool{}, map[*Unit]bool{}
	kill := func(u *Unit) {
		if !killed[u] {
			killed[u] = true
			s.actions = append(s.actions, Action{Kind: Kill, Unit: u, Worker: u.worker})
		}
	}
	for _, lw := range ws {
		req, blk := on(lw.Requester), on(lw.Blocker)
		switch {
		case req == nil:
		case req.aborted && req.st == running:
			kill(req)
		case lw.Blocker == BlockerUnknown && s.isHead(req):
			// The next to commit waits and the target does not name the
			// holder: the later prepared units may hold it (an INSERT on
			// a gap another unit locked); they yield, but only those that
			// started before the wait was first seen: a unit started
			// since cannot hold a lock the head already waited for. A
			// head that runs long without waiting makes nobody yield.
			if req.unseenWait.IsZero() {
				req.unseenWait = s.now
			}
			unseen[req] = true
			for _, u := range s.held {
				if u != nil && u.Seq() > req.Seq() && u.st == prepared && !u.aborted && !u.started.After(req.unseenWait) {
					u.aborted = true
					s.yields[YieldLockWaitUnseen]++
					s.actions = append(s.actions, Action{Kind: Abort, Unit: u, Worker: u.worker})
				}
			}
		case blk != nil && blk.Seq() < req.Seq():
			// A later unit waits for an earlier one: the commit order at
			// work, but it holds a slot it cannot use (Sample.Waited).
			req.lockWaited = true
		case blk == nil || blk.st == committing:
			// The holder is not prepl's, or commits now.
		case blk.aborted:
			if blk.st == running {
				kill(blk)
			}
		case blk.st == prepared:
			blk.aborted = true
			s.yields[YieldLockWait]++
			s.actions = append(s.actions, Action{Kind: Abort, Unit: blk, Worker: blk.worker})
		case blk.st == running:
			blk.aborted = true
			s.yields[YieldLockWait]++
			kill(blk)
		}
	}
	for _, u := range s.held {
		if u != nil && !unseen[u] {
			u.unseenWait = time.Time{} // not waiting (so) any more
		}
	}
}

// yieldToStalledHead: when the next unit to commit has run for
// HeadStallAfter while later ones hold their locks waiting for their
// turn, the later ones yield. Lock waits that the target does not show
// (seen on MariaDB 10.11 for an INSERT waiting on a unique-index gap) are
// caught this way; the cost is a retry.
func (s *Sequencer) yieldToStalledHead() {
	for _, k := range s.keys() {
		head := s.units[s.orderQ[k][0]]
		if (head.st != running && head.st != committing) || s.now.Sub(head.started) < s.cfg.HeadStallAfter {
			continue
		}
		for _, u := range s.held {
			if u != nil && u.Seq() > head.Seq() && u.st == prepared && !u.aborted {
				u.aborted = true
				s.yields[YieldHeadStall]++
				s.actions = append(s.actions, Action{Kind: Abort, Unit: u, Worker: u.worker})
			}
		}
	}
}

// Deadline is when Ready next has something to do if no event comes
// (zero: nothing is timed).
func (s *Sequencer) Deadline() time.Time {
	var d time.Time
	earlier := func(t time.Time) {
		if d.IsZero() || t.Before(d) {
			d = t
		}
	}
	// A unit being formed that would wait is sealed after a commit, an
	// event; a sealed one waits for room in the window, also an event
	// (its seal time is past: a deadline then would fire again and again).
	if s.reading && s.free() > 0 && len(s.readyQ) == 0 && !s.f.empty() && !s.f.sealed && !s.knownToWait() {
		earlier(s.f.since.Add(s.cfg.UnitMaxWait))
		if !s.quietSince.IsZero() {
			earlier(s.quietSince.Add(s.cfg.SealQuiet))
		} else if !s.backlog {
			earlier(s.now) // the quiet period starts now
		}
	}
	if s.cfg.Workers > 1 && !s.waitsVisible {
		for _, k := range s.keys() {
			head := s.units[s.orderQ[k][0]]
			if head.st == running || head.st == committing {
				for _, u := range s.held {
					if u != nil && u.Seq() > head.Seq() && u.st == prepared && !u.aborted {
						earlier(head.started.Add(s.cfg.HeadStallAfter))
						break
					}
				}
			}
		}
	}
	return d
}
