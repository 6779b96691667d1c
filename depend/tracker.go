// Package depend decides which source transactions may run at the same time
// on the target. It is a pure state machine in the etcd-raft shape: no I/O,
// no goroutines, no locks, no clock. The scheduler drives it:
//
//	t := depend.New(mode, catalog)
//	t.Add(tx)            // in stream order
//	for _, s := range t.Ready() { start s.Seq }
//	t.Done(seq)          // when seq has committed on the target
//
// Dependencies only point backwards: a transaction waits for earlier ones
// (by Seq) to be Done, never for later ones, so some transaction is always
// ready while any is pending and none is running.
package depend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prepl/prepl/txn"
)

// Start is a transaction that may start now.
type Start struct {
	Seq    uint64
	Reason Reason // why it had to wait when added; ReasonNone if it did not
}

// Tracker tracks the dependencies between added and not yet Done
// transactions.
//
// Invariants:
//   - Add is called with strictly increasing tx.Seq.
//   - Ready returns each added transaction exactly once, when every earlier
//     transaction it depends on is Done.
//   - Done is called once per transaction, after Ready returned it.
//   - A transaction may only start after all its dependencies are Done, so
//     "U waits for T" plus "T waits for S" means U waits for S: each
//     transaction records only its nearest dependencies.
type Tracker struct {
	mode Mode
	cat  txn.Catalog

	lastSeq uint64 // Seq of the last Add
	pending map[uint64]*entry
	ready   []uint64 // not started, no open dependencies
	stats   map[Reason]uint64

	scopes map[uint32]*scope // one scope (key 0) for every mode
	co     commitOrder
}

type entry struct {
	seq        uint64
	open       int      // dependencies not yet Done
	dependents []uint64 // later entries waiting for this one
	reason     Reason   // reason of the first dependency found
	started    bool
	scope      *scope
	locks      []Lock
	inClock    bool // in co.clock
}

// scope is a set of transactions among which barriers and locks apply.
type scope struct {
	barrier       uint64 // last barrier not Done; 0 when none
	barrierReason Reason
	since         map[uint64]struct{} // not-Done members added after barrier
	locks         map[uint64]*lockState
}

// lockState is one key's holders, all not Done. Shared holders were added
// after the exclusive one and wait for it.
type lockState struct {
	excl       uint64
	exclReason Reason
	shared     []sharedHolder
}

type sharedHolder struct {
	seq    uint64
	reason Reason
}

// commitOrder is the state of mode commit-order.
type commitOrder struct {
	// MariaDB: consecutive transactions with one commit id form a batch.
	batchID uint64   // commit id of the current batch; 0 = cannot be joined
	batch   []uint64 // members of the current batch
	prev    []uint64 // members of the batch before it

	// MySQL logical clock of the current binlog file.
	file      string
	lastSN    int64
	clock     []clocked // members of the file in SequenceNumber order; may hold Done ones
	clockDone int       // how many entries of clock are Done
	fileDeps  []uint64  // not-Done transactions of earlier files (and barriers) when the file began
}

type clocked struct {
	seq uint64
	sn  int64
}

// New returns a tracker for mode. cat is read by modes writeset, domain and
// schema (keys) and optimistic/aggressive (non-transactional tables); it may
// be nil for the others. New panics on a mode ParseMode would reject.
func New(mode Mode, cat txn.Catalog) *Tracker {
	if !slices.Contains(Modes, mode) {
		panic(fmt.Sprintf("depend.New: unknown mode %q", mode))
	}
	return &Tracker{
		mode:    mode,
		cat:     cat,
		pending: map[uint64]*entry{},
		stats:   map[Reason]uint64{},
		scopes:  map[uint32]*scope{},
		co:      commitOrder{lastSN: -1},
	}
}

// Mode returns the tracker's mode.
func (t *Tracker) Mode() Mode { return t.mode }

// Pending counts transactions added and not Done.
func (t *Tracker) Pending() int { return len(t.pending) }

// Stats counts, by reason, the transactions that had to wait. The map is a
// copy.
func (t *Tracker) Stats() map[Reason]uint64 {
	out := make(map[Reason]uint64, len(t.stats))
	for r, n := range t.stats {
		out[r] = n
	}
	return out
}

// Add adds the next transaction of the stream.
func (t *Tracker) Add(tx *txn.Txn) {
	u, prev := t.enter(tx, "Add")
	switch t.mode {
	case Serial:
		t.barrier(t.scope(0), u, ReasonSerial)
	case CommitOrder:
		t.addCommitOrder(u, tx)
	case Writeset:
		t.addWriteset(t.scope(0), u, tx)
	case Domain:
		// Domains commit out of order (OrderKey), but the keys and barriers
		// of every domain still order them: only independent work reorders.
		t.addWriteset(t.scope(0), u, tx)
	case Optimistic, Aggressive:
		t.addOptimistic(u, tx, prev)
	case Schema:
		t.addSchema(u, tx)
	}
	t.entered(u)
}

// AddWhole adds the next transaction of the stream as a barrier without
// computing its keys: it waits for every transaction pending, and every
// later one waits for it. It is for a caller that lets one transaction
// run at a time for now, to which keys would only cost (computing them
// is most of a writeset tracker's CPU); transactions added later with
// Add get their keys and wait for it as for any barrier. Only mode
// writeset has it.
func (t *Tracker) AddWhole(tx *txn.Txn) {
	if t.mode != Writeset {
		panic(fmt.Sprintf("depend: AddWhole in mode %s: only mode writeset adds without keys", t.mode))
	}
	u, _ := t.enter(tx, "AddWhole")
	t.barrier(t.scope(0), u, ReasonWhole)
	t.entered(u)
}

// enter makes tx's entry pending; prev is the Seq added before it.
func (t *Tracker) enter(tx *txn.Txn, op string) (u *entry, prev uint64) {
	if tx.Seq <= t.lastSeq {
		panic(fmt.Sprintf("depend: %s(seq %d) after seq %d: invariant Seq strictly increasing violated", op, tx.Seq, t.lastSeq))
	}
	prev = t.lastSeq
	t.lastSeq = tx.Seq
	u = &entry{seq: tx.Seq}
	t.pending[u.seq] = u
	return u, prev
}

// entered makes u ready when it waits for nothing.
func (t *Tracker) entered(u *entry) {
	if u.open == 0 {
		t.ready = append(t.ready, u.seq)
	}
}

// WouldWait returns the latest transaction not Done that tx would wait
// for if it were added now, or 0 when it would start at once, without
// adding it. Only mode writeset answers (others return 0): there units
// are Done in Seq order, so tx waits exactly while the returned one is
// pending (IsPending). The sequencer asks it of the unit it is forming:
// a unit that would wait anyway keeps growing rather than being sealed
// for a worker that waits.
func (t *Tracker) WouldWait(tx *txn.Txn) uint64 {
	s := t.scopes[0]
	if t.mode != Writeset || s == nil {
		return 0
	}
	locks, why := memoKeys(tx, t.cat)
	if why != ReasonNone {
		if t.IsPending(t.lastSeq) {
			return t.lastSeq // a barrier waits for everything
		}
		return 0
	}
	on := s.barrier
	for _, l := range locks {
		st := s.locks[l.Key]
		if st == nil {
			continue
		}
		on = max(on, st.excl)
		if !l.Shared {
			for _, h := range st.shared {
				on = max(on, h.seq)
			}
		}
	}
	return on
}

// IsPending reports whether seq was added and is not Done.
func (t *Tracker) IsPending(seq uint64) bool {
	_, ok := t.pending[seq]
	return ok
}

// Ready returns the transactions that may start now, in Seq order; each is
// returned once.
func (t *Tracker) Ready() []Start {
	if len(t.ready) == 0 {
		return nil
	}
	slices.Sort(t.ready)
	out := make([]Start, len(t.ready))
	for i, seq := range t.ready {
		e := t.pending[seq]
		e.started = true
		out[i] = Start{Seq: seq, Reason: e.reason}
		if e.reason != ReasonNone {
			t.stats[e.reason]++
		}
	}
	t.ready = t.ready[:0]
	return out
}

// Done records that seq committed on the target. It panics when seq is not
// pending or was never returned by Ready.
func (t *Tracker) Done(seq uint64) {
	e, ok := t.pending[seq]
	if !ok {
		panic(fmt.Sprintf("depend: Done(seq %d): invariant violated: not pending (never added, or already Done)", seq))
	}
	if !e.started {
		panic(fmt.Sprintf("depend: Done(seq %d): invariant violated: not started (Ready has not returned it)", seq))
	}
	delete(t.pending, seq)
	if s := e.scope; s != nil {
		delete(s.since, seq)
		if s.barrier == seq {
			s.barrier, s.barrierReason = 0, ReasonNone
		}
		t.unlock(s, e)
	}
	if e.inClock {
		t.co.clockDone++
	}
	for _, d := range e.dependents {
		w := t.pending[d]
		if w.open--; w.open == 0 {
			t.ready = append(t.ready, d)
		}
	}
}

func (t *Tracker) scope(key uint32) *scope {
	s := t.scopes[key]
	if s == nil {
		s = &scope{since: map[uint64]struct{}{}, locks: map[uint64]*lockState{}}
		t.scopes[key] = s
	}
	return s
}

// depend makes u wait for on, when on is not Done.
func (t *Tracker) depend(u *entry, on uint64, why Reason) {
	if on == 0 || on == u.seq {
		return
	}
	e := t.pending[on]
	if e == nil {
		return
	}
	if n := len(e.dependents); n > 0 && e.dependents[n-1] == u.seq {
		return // already waiting for it
	}
	e.dependents = append(e.dependents, u.seq)
	u.open++
	if u.reason == ReasonNone {
		u.reason = why
	}
}

// barrier adds u to s as a barrier: it waits for every member of s, and
// every later member waits for it.
func (t *Tracker) barrier(s *scope, u *entry, why Reason) {
	u.scope = s
	t.depend(u, s.barrier, why)
	members := make([]uint64, 0, len(s.since))
	for m := range s.since {
		members = append(members, m)
	}
	slices.Sort(members)
	for _, m := range members {
		t.depend(u, m, why)
	}
	clear(s.since)
	s.barrier, s.barrierReason = u.seq, why
}

// member adds u to s as an ordinary member: it waits for the last barrier.
func (t *Tracker) member(s *scope, u *entry) {
	u.scope = s
	t.depend(u, s.barrier, s.barrierReason)
	s.since[u.seq] = struct{}{}
}

// lock makes u wait for the holders of l.Key it conflicts with, then holds it.
func (t *Tracker) lock(s *scope, u *entry, l Lock) {
	st := s.locks[l.Key]
	if st == nil {
		st = &lockState{}
		s.locks[l.Key] = st
	}
	t.depend(u, st.excl, pick(l.Reason, st.exclReason))
	if l.Shared {
		st.shared = append(st.shared, sharedHolder{u.seq, l.Reason})
		return
	}
	for _, h := range st.shared {
		t.depend(u, h.seq, pick(l.Reason, h.reason))
	}
	st.excl, st.exclReason, st.shared = u.seq, l.Reason, st.shared[:0]
}

// pick names a conflict between a lock of reason mine and one of reason
// theirs: the more specific of the two.
func pick(mine, theirs Reason) Reason {
	switch {
	case mine != ReasonNone && mine != ReasonKeyConflict:
		return mine
	case theirs != ReasonNone:
		return theirs
	case mine != ReasonNone:
		return mine
	}
	return ReasonKeyConflict
}

func (t *Tracker) unlock(s *scope, e *entry) {
	for _, l := range e.locks {
		st := s.locks[l.Key]
		if st == nil {
			continue
		}
		if st.excl == e.seq {
			st.excl, st.exclReason = 0, ReasonNone
		}
		st.shared = slices.DeleteFunc(st.shared, func(h sharedHolder) bool { return h.seq == e.seq })
		if st.excl == 0 && len(st.shared) == 0 {
			delete(s.locks, l.Key)
		}
	}
}

func (t *Tracker) addWriteset(s *scope, u *entry, tx *txn.Txn) {
	locks, why := memoKeys(tx, t.cat)
	if why != ReasonNone {
		t.barrier(s, u, why)
		return
	}
	t.member(s, u)
	u.locks = locks
	for _, l := range locks {
		t.lock(s, u, l)
	}
}

// addOptimistic: no keys; barriers are what cannot be rolled back or retried
// (DDL, XA, non-transactional changes, statements), and changes that can
// set off a cascading foreign key: the cascades run on the target with no
// lock that would make them wait for an earlier unit's uncommitted child
// rows on every target (PostgreSQL's do not wait: a parent DELETE running
// ahead missed a child an earlier unit was inserting, and nothing failed).
func (t *Tracker) addOptimistic(u *entry, tx *txn.Txn, prev uint64) {
	s := t.scope(0)
	why := txBarrier(tx)
	if why == ReasonNone && t.cat != nil {
		why = OptimisticBarrier(tx, t.cat)
	}
	if why != ReasonNone {
		t.barrier(s, u, why)
		return
	}
	t.member(s, u)
	if t.mode == Optimistic && waited(tx) {
		t.depend(u, prev, ReasonWaitedFlag)
	}
}

// OptimisticBarrier says why tx cannot run ahead in the optimistic modes: it
// changes a non-transactional table, or makes a change that can set off a
// cascading foreign key.
func OptimisticBarrier(tx *txn.Txn, cat txn.Catalog) Reason {
	for _, c := range tx.Changes {
		if c.Row == nil || c.Row.Table == nil {
			continue
		}
		def, ok := cat.Table(c.Row.Table.Schema, c.Row.Table.Name)
		switch {
		case !ok || def == nil:
		case !def.Transactional:
			return ReasonNonTransactional
		case def.CanCascade(c.Row):
			return ReasonForeignKey
		}
	}
	return ReasonNone
}

// addSchema: the writeset's keys and barriers (which order schemas among
// themselves, through foreign keys, triggers and unknown tables), plus one
// exclusive lock per schema (serial within a schema); a transaction that
// touches several schemas, or none, is a barrier.
func (t *Tracker) addSchema(u *entry, tx *txn.Txn) {
	s := t.scope(0)
	locks, why := memoKeys(tx, t.cat)
	schemas := Schemas(tx)
	if why == ReasonNone && len(schemas) != 1 {
		why = ReasonSchema
	}
	if why != ReasonNone {
		t.barrier(s, u, why)
		return
	}
	t.member(s, u)
	h := newHasher('D')
	h.str(strings.ToLower(schemas[0]))
	u.locks = append(locks, Lock{Key: uint64(h), Reason: ReasonSchema})
	for _, l := range u.locks {
		t.lock(s, u, l)
	}
}

func (t *Tracker) addCommitOrder(u *entry, tx *txn.Txn) {
	s := t.scope(0)
	co := &t.co
	why := txBarrier(tx)
	mysql := tx.CommitID == 0 && tx.LastCommitted >= 0 && tx.SequenceNumber >= 0
	if why == ReasonNone && tx.CommitID == 0 && !mysql {
		why = ReasonCommitOrder // no tags: nothing says it may run with anything
	}
	if why != ReasonNone {
		t.barrier(s, u, why)
		for _, c := range co.clock {
			if e := t.pending[c.seq]; e != nil {
				e.inClock = false
			}
		}
		co.batchID, co.batch, co.prev = 0, []uint64{u.seq}, nil
		co.file, co.lastSN, co.clock, co.clockDone, co.fileDeps = tx.Start.File, tx.SequenceNumber, nil, 0, nil
		return
	}
	if mysql && co.newFile(tx) {
		co.startFile(t, s)
	}
	t.member(s, u)
	if mysql {
		t.addClock(u, tx)
		return
	}
	// MariaDB: join the current batch, or open the next one.
	if tx.CommitID != co.batchID {
		co.prev = slices.DeleteFunc(co.batch, func(seq uint64) bool { return t.pending[seq] == nil })
		co.batch, co.batchID = nil, tx.CommitID
	}
	for _, p := range co.prev {
		t.depend(u, p, ReasonCommitOrder)
	}
	co.batch = append(co.batch, u.seq)
}

// newFile reports whether tx starts a new logical clock: another binlog
// file, or a sequence number that did not increase.
func (co *commitOrder) newFile(tx *txn.Txn) bool { return clockRestarts(co.lastSN, co.file, tx) }

// clockRestarts reports whether tx, following a transaction with sequence
// number lastSN in file, starts a new MySQL logical clock.
func clockRestarts(lastSN int64, file string, tx *txn.Txn) bool {
	if lastSN < 0 || tx.SequenceNumber <= lastSN || tx.LastCommitted >= tx.SequenceNumber {
		return true
	}
	return tx.Start.File != "" && file != "" && tx.Start.File != file
}

// startFile begins a new logical clock: sequence numbers restart, so
// nothing of the earlier files can be named by last_committed any more, and
// every transaction of the new file waits for all of them.
func (co *commitOrder) startFile(t *Tracker, s *scope) {
	for _, c := range co.clock {
		if e := t.pending[c.seq]; e != nil {
			e.inClock = false
		}
	}
	co.clock, co.clockDone = nil, 0
	co.fileDeps = co.fileDeps[:0]
	if s.barrier != 0 {
		co.fileDeps = append(co.fileDeps, s.barrier)
	}
	for m := range s.since {
		co.fileDeps = append(co.fileDeps, m)
	}
	slices.Sort(co.fileDeps)
}

// addClock: u waits for every member of the file with sequence_number <=
// its last_committed.
func (t *Tracker) addClock(u *entry, tx *txn.Txn) {
	co := &t.co
	if co.clockDone > 0 && co.clockDone*2 >= len(co.clock) {
		co.clock = slices.DeleteFunc(co.clock, func(c clocked) bool { return t.pending[c.seq] == nil })
		co.clockDone = 0
	}
	co.fileDeps = slices.DeleteFunc(co.fileDeps, func(seq uint64) bool { return t.pending[seq] == nil })
	for _, seq := range co.fileDeps {
		t.depend(u, seq, ReasonCommitOrder)
	}
	for _, c := range co.clock {
		if c.sn > tx.LastCommitted {
			break
		}
		t.depend(u, c.seq, ReasonCommitOrder)
	}
	co.clock = append(co.clock, clocked{u.seq, tx.SequenceNumber})
	u.inClock = true
	co.file, co.lastSN = tx.Start.File, tx.SequenceNumber
}
