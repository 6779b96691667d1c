package apply

import (
	"context"
	"fmt"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/txn"
)

// Positions and slots.
//
// In-order modes keep one position row, slot "main". Modes schema and
// domain commit out of order across schemas/domains, in order within one,
// so each keeps a row per slot ("schema:NAME", "domain:N"): the slot's own
// applied position, written in the same transaction as its rows. A
// transaction touching several schemas (or a barrier that is global) goes
// to "main", which then only holds transactions that committed after
// everything before them.
//
// Every row also carries the floor: the position up to which everything
// had committed, without a gap, when the row was written. A restart reads
// from the highest floor; above it, a transaction is already applied when
// the row of the slot it belongs to covers it. A slot's row covers only
// its own transactions, except "main", whose transactions committed after
// all earlier ones, so it covers everything before it.

// SlotMain is the position row of in-order modes.
const SlotMain = sequencer.SlotMain

// Resume is where a run starts: the stored positions, if any.
type Resume struct {
	// Position is where reading starts: the highest floor (GTIDPos, File,
	// Pos), with the DDL a crash may have interrupted (PendingDDL).
	Position position.Checkpoint
	Found    bool
	// Slots are the stored rows by slot, for transactions above the floor.
	Slots map[string]position.Checkpoint

	floor *position.Set
	slots map[string]*position.Set
}

// LoadResume reads the stored positions of the target's channel.
func LoadResume(ctx context.Context, tgt Target) (Resume, error) {
	var ps map[string]position.Checkpoint
	err := tgt.Retry(ctx, "read the stored position", func() (err error) {
		ps, err = tgt.Checkpoints(ctx)
		return err
	})
	if err != nil {
		return Resume{}, err
	}
	return newResume(ps)
}

func newResume(ps map[string]position.Checkpoint) (Resume, error) {
	r := Resume{Found: len(ps) > 0, Slots: ps, slots: map[string]*position.Set{}}
	floor, err := position.ParseSet("")
	if err != nil {
		return Resume{}, err
	}
	for slot, p := range ps {
		f := p.Floor
		if f.GTIDPos == "" && f.File == "" && slot == SlotMain {
			f = position.Floor{GTIDPos: p.GTIDPos, File: p.File, Pos: p.Pos} // a row from before floors
		}
		if err := floor.Merge(f.GTIDPos); err != nil {
			return Resume{}, fmt.Errorf("stored position of slot %q: %w", slot, err)
		}
		if f.File != "" && (r.Position.File == "" || position.Less(r.Position.File, r.Position.Pos, f.File, f.Pos)) {
			r.Position.File, r.Position.Pos = f.File, f.Pos
		}
		if p.PendingDDL != "" {
			r.Position.PendingDDL = p.PendingDDL
		}
		if r.slots[slot], err = position.ParseSet(p.GTIDPos); err != nil {
			return Resume{}, fmt.Errorf("stored position of slot %q: %w", slot, err)
		}
	}
	r.Position.GTIDPos = floor.String()
	return r, nil
}

// init makes r usable by Already when its Position was set by hand (a
// start position given by the user).
func (r *Resume) init() error {
	if r.slots == nil {
		r.slots = map[string]*position.Set{}
	}
	var err error
	r.floor, err = position.ParseSet(r.Position.GTIDPos)
	return err
}

// Already reports whether the stored positions cover t, so a restart that
// re-reads it must not apply it again.
func (r *Resume) Already(t *txn.Txn) bool {
	if r.covers(r.Position.File, r.Position.Pos, r.floor, t) {
		return true
	}
	if !r.Found {
		return false
	}
	for _, slot := range slotsOf(t) {
		if p, ok := r.Slots[slot]; ok && r.covers(p.File, p.Pos, r.slots[slot], t) {
			return true
		}
	}
	return false
}

// covers: a GTID position (when both have GTIDs), else a file position.
func (r *Resume) covers(file string, pos uint32, g *position.Set, t *txn.Txn) bool {
	if t.GTID != "" && g != nil && !g.Empty() {
		return g.Contains(t)
	}
	return file != "" && t.End.File != "" && !position.Less(file, pos, t.End.File, t.End.Offset)
}

// slotsOf lists the rows that could hold t: main, its GTID domain's, and
// its schema's when it touches one.
func slotsOf(t *txn.Txn) []string {
	out := []string{SlotMain, depend.OrderKey(depend.Domain, t)}
	if k := depend.OrderKey(depend.Schema, t); k != "" {
		out = append(out, k)
	}
	return out
}

// StartAfter makes a run whose stored position has no GTIDs start after
// GTID position pos (--start-gtid): what pos covers is skipped.
func (r *Resume) StartAfter(pos string) {
	if pos != "" && r.Position.GTIDPos == "" {
		r.Position.GTIDPos = pos
	}
}
