package apply

import (
	"context"
	"fmt"
	"time"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sequencer"
)

// A target that keeps source GTIDs (Target.KeepsGTIDs) writes each source
// transaction as its own target transaction. One per unit costs two round
// trips per source transaction; a target that can (EachTarget) takes units
// of many transactions instead, renders them as a batch of members
// (EachBatch), and applies them back to back with their own GTIDs,
// positions and COMMITs, several a round trip (EachConn.ApplyEach).
//
// Such a unit runs only at its commit turn: its members commit as they go,
// in order, so it cannot start ahead of the units before it. A member
// that fails leaves the members before it committed: a retry goes on from
// the first one not committed (rendering.committed), and a failure that
// stops the run counts the committed ones (sequencer.Prefix).

// EachTarget is a Target that keeps GTIDs and applies units of many
// transactions, each its own target transaction, when AppliesEach.
type EachTarget interface {
	AppliesEach() bool
}

// EachConn is a Conn that applies an EachBatch.
type EachConn interface {
	// ApplyEach applies b's members from the from-th on, each in its own
	// target transaction committed with its checkpoint ps[i], in order.
	// It returns how many are committed in all, also with an error (none
	// after them ran); from or the count -1: not known, read from the
	// target.
	ApplyEach(ctx context.Context, b Batch, from int, ps []position.Checkpoint) (int, error)
}

// EachBatch is a unit rendered as one target transaction per member.
type EachBatch interface {
	Batch
	Each() int
}

// appliesEach reports whether tgt takes units of many transactions each
// applied as its own target transaction.
func appliesEach(tgt Target) bool {
	e, ok := tgt.(EachTarget)
	return ok && tgt.KeepsGTIDs() && e.AppliesEach()
}

// eachPositions is the checkpoint after each applied member of j's unit:
// its slot's row before the unit plus the members up to it (skipped ones
// included), its floor the member's end when the unit is the oldest of
// all not committed, else the floor when it started. The last is the
// unit's own (j.pos).
func eachPositions(j job) ([]position.Checkpoint, error) {
	u := j.unit
	sg, err := position.ParseSet(j.before.GTIDPos)
	if err != nil {
		return nil, err
	}
	fg, err := position.ParseSet(j.before.Floor.GTIDPos)
	if err != nil {
		return nil, err
	}
	var ps []position.Checkpoint
	applied := j.before.Applied
	for i, m := range u.Members {
		sg.Add(m)
		fg.Add(m)
		applied++
		if u.Skip[i] {
			continue
		}
		p := position.Checkpoint{Slot: j.pos.Slot, GTIDPos: sg.String(), File: m.End.File, Pos: m.End.Offset,
			LastGTID: m.GTID, SourceTS: m.Timestamp, Applied: applied, Floor: j.before.Floor}
		if j.oldest {
			p.Floor = position.Floor{GTIDPos: fg.String(), File: m.End.File, Pos: m.End.Offset}
		}
		ps = append(ps, p)
	}
	if len(ps) > 0 {
		ps[len(ps)-1] = j.pos
	}
	return ps, nil
}

// runEach applies a unit of a target that AppliesEach; it reports false,
// having done nothing, when the unit was not rendered as an EachBatch (an
// XA transaction), for the ordinary path.
func (w *worker) runEach(j job, t0 *time.Time) bool {
	ec, ok := w.conn.(EachConn)
	if !ok || j.ren == nil {
		return false
	}
	b, err := w.sh.render.take(w.ctx, j.ren)
	if err != nil {
		w.fail(j, err)
		return true
	}
	eb, ok := b.(EachBatch)
	if !ok {
		return false
	}
	// Its members commit as they go: it waits for its turn first.
	if !j.commitNow {
		if !w.waitTurn(&j, t0) {
			return true
		}
		j.commitNow = true
	}
	w.setState("committing", j.txID())
	ps, err := eachPositions(j)
	if err == nil && len(ps) != eb.Each() {
		err = fmt.Errorf("apply: %d positions for a unit of %d members: invariant violated", len(ps), eb.Each())
	}
	if err != nil {
		w.send(event{kind: evFailed, seq: j.seq(), err: fatalErr{err}})
		return true
	}
	n, err := ec.ApplyEach(w.ctx, b, j.ren.committed, ps)
	j.ren.committed = n
	if err == nil {
		w.send(event{kind: evCommitted, seq: j.seq()})
		return true
	}
	switch w.sh.tgt.Classify(err) {
	case Retry, Connection:
		w.fail(j, err) // runs again from the first member not committed
		return true
	}
	// The run stops: the members before the failing one are counted.
	w.conn.Rollback(w.ctx)
	var prefix *sequencer.Prefix
	if n > 0 {
		ap := j.ren.txs
		rows := 0
		for _, m := range ap[:n] {
			rows += m.Rows()
		}
		prefix = &sequencer.Prefix{Pos: ps[n-1], Txns: n, Rows: rows}
	}
	w.send(event{kind: evFailed, seq: j.seq(), err: fatalErr{err}, prefix: prefix})
	return true
}
