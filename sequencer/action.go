package sequencer

import (
	"fmt"
	"maps"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// Kind of an action.
type Kind uint8

const (
	// Admit: load what the unit needs (its tables' definitions into the
	// catalog), then feed Admitted. A unit that is not DDL may be rendered
	// from now on.
	Admit Kind = iota
	// Start: apply the unit on Worker in a new target transaction. With
	// CommitNow it is the next to commit: commit with Pos, then feed
	// Committed; else feed Prepared and wait for Commit or Abort.
	Start
	// Commit: the prepared unit on Worker commits with Pos; feed
	// Committed.
	Commit
	// Abort: roll back the prepared unit on Worker (it yields); feed
	// Failed with Yielded.
	Abort
	// Kill: interrupt the statement the unit on Worker is running (it
	// yields to an earlier unit waiting for its locks); its failure comes
	// as an ordinary Failed.
	Kill
)

var kindNames = [...]string{"admit", "start", "commit", "abort", "kill"}

func (k Kind) String() string { return kindNames[k] }

// Action is what the caller does next.
type Action struct {
	Kind   Kind
	Unit   *Unit
	Worker int // -1 for Admit
	// Pos is the checkpoint to commit with (Start with CommitNow, Commit),
	// its floor set.
	Pos position.Checkpoint
	// Before is the unit's slot checkpoint before it, with the floor when
	// it started (Start): a DDL stores it as pending before it runs.
	Before position.Checkpoint
	// CommitNow: every unit before it in its commit order has committed.
	CommitNow bool
	// Oldest: and so has every unit before it in any slot, so a prefix of
	// it may commit with its own floor (see PrefixCheckpoint).
	Oldest bool
}

func (a Action) String() string {
	s := fmt.Sprintf("%s %s", a.Kind, a.Unit)
	if a.Worker >= 0 {
		s += fmt.Sprintf(" on w%d", a.Worker)
	}
	if a.CommitNow {
		s += " commit-now"
	}
	return s
}

func (u *Unit) String() string {
	if u == nil {
		return "<nil>"
	}
	first := u.Members[0]
	if len(u.Members) == 1 {
		return first.ID()
	}
	return first.ID() + ".." + u.Last().ID()
}

// PrefixCheckpoint is the checkpoint after the members of a unit before
// failed, for a unit started with Oldest: its slot's row before (Before,
// with its floor) plus those members.
func PrefixCheckpoint(before position.Checkpoint, slot string, members []*txn.Txn) (position.Checkpoint, error) {
	sg, err := position.ParseSet(before.GTIDPos)
	if err != nil {
		return position.Checkpoint{}, err
	}
	fg, err := position.ParseSet(before.Floor.GTIDPos)
	if err != nil {
		return position.Checkpoint{}, err
	}
	for _, m := range members {
		sg.Add(m)
		fg.Add(m)
	}
	last := members[len(members)-1]
	return position.Checkpoint{Slot: slot, GTIDPos: sg.String(), File: last.End.File, Pos: last.End.Offset,
		LastGTID: last.GTID, SourceTS: last.Timestamp, Applied: before.Applied + uint64(len(members)),
		Floor: position.Floor{GTIDPos: fg.String(), File: last.End.File, Pos: last.End.Offset}}, nil
}

// Stats are the sequencer's counts; package apply adds the runtime's.
type Stats struct {
	Txns, Rows, Bytes uint64 // committed
	Retries           uint64
	RetriesBy         map[string]uint64 // Retries by cause (RetryYield, ...)
	Units             uint64            // target commits of row units
	UnitHist          []uint64          // units by members, bounds UnitBuckets (+1 overflow)
	Errors            map[string]uint64 // failed attempts: conflict, retry, connection, fatal
	LastError         string
	Serialized        map[depend.Reason]uint64 // how often a unit waited, by reason
	Last              position.Checkpoint      // last committed position
	InFlight          int                      // units admitted and not committed
	QueueBytes        int                      // bytes of InFlight against the window
	// Concurrency is the number of units that may be in flight now (see
	// Config.Adapt); Yields count later units rolled back or killed for
	// an earlier one, by cause (YieldLockWait, ...).
	Concurrency int
	Yields      map[string]uint64
}

// Stats returns a snapshot; maps and slices are the caller's.
func (s *Sequencer) Stats() Stats {
	st := s.stats
	st.UnitHist = append([]uint64(nil), s.stats.UnitHist...)
	st.Errors = maps.Clone(s.stats.Errors)
	st.RetriesBy = maps.Clone(s.stats.RetriesBy)
	st.Serialized = s.tracker.Stats()
	for r, n := range s.waits {
		st.Serialized[r] += n
	}
	st.Last, st.InFlight, st.QueueBytes = s.lastPos, len(s.units), s.inflight
	st.Concurrency = s.limit
	st.Yields = maps.Clone(s.yields)
	return st
}

// Oldest is the oldest transaction admitted and not yet committed (nil:
// none), for lag.
func (s *Sequencer) Oldest() *txn.Txn {
	switch {
	case len(s.admittedQ) > 0:
		return s.admittedQ[0].Members[0]
	case len(s.f.cur.txs) > 0: // the unit being formed
		return s.f.cur.txs[0]
	}
	return s.f.carry // read after a sealed unit; nil when none
}

// Floor is the gapless committed position.
func (s *Sequencer) Floor() position.Floor { return s.floor }

// UnitBuckets are the upper bounds of Stats.UnitHist: commit units by
// number of source transactions; the last bucket counts everything larger.
var UnitBuckets = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}

func unitBucket(n int) int {
	for i, b := range UnitBuckets {
		if n <= b {
			return i
		}
	}
	return len(UnitBuckets)
}

// Since is a helper for callers that keep their own clock: how long ago
// the unit's current attempt started, at now.
func (u *Unit) Since(now time.Time) time.Duration { return now.Sub(u.started) }
