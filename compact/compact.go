// Package compact reduces a commit unit to its net effect per table.
//
// Inside a commit unit (consecutive source transactions committed as one
// target transaction) only the unit's end state is ever visible, so every
// change to one row collapses to the row's final image, and a table's
// changes become a few multi-row statements: delete the rows that are gone,
// insert the new ones, overwrite the changed ones. Per-statement parsing and
// execution were what one-row-at-a-time apply could not escape (DESIGN.md,
// "Commit order and the position").
//
// Compaction must not change meaning, so a table is compacted only when its
// row key alone decides which row a change touches and nothing else reacts
// to its rows:
//   - it has exactly one unique index (the primary key, or one unique key
//     over NOT NULL columns), not WITHOUT OVERLAPS: an overwrite can then
//     only meet its own row;
//   - no triggers;
//   - every change carries full images and no relaxed-check flags.
//
// Other tables keep their changes in source order. Foreign keys do not
// stop compaction: the unit's end state is a source state, which the
// source checked, so a target applies a compacted unit with its foreign
// key checks off (the order of the statements inside it no longer being
// the source's). What they cannot do then is act: a unit holding a change
// that can set off a cascading foreign key (txn.TableDef.CanCascade),
// whose effects are not in the binlog, is not compacted at all, and goes
// in source order with the checks the source had.
package compact

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/prepl/prepl/txn"
)

// Net is one table's net effect over a unit.
type Net struct {
	Def *txn.TableDef
	Map *txn.Table // the binlog's table map: column types of the images
	// Deletes are the before images of rows the unit removed (they existed
	// before it and do not after).
	Deletes [][]txn.Value
	// Inserts are the final images of rows that did not exist before.
	Inserts [][]txn.Value
	// Updates are the final images of rows that existed before and whose
	// image changed.
	Updates [][]txn.Value
	// Raw is set when every change of the unit to the table carried its
	// images as the binlog did (txn.RowChange.BeforeImage, AfterImage),
	// every column present, under one table map: it then holds those
	// images of Inserts and Updates, so that a target can send them as
	// rows events rather than SQL.
	Raw *RawImages
}

// RawImages are a Net's row images as the binlog carried them, under the
// table map of Event.
type RawImages struct {
	Event   *txn.RowsEvent // a rows event of the table in the unit: its table map, its header
	Inserts [][]byte       // the after image of each of Net.Inserts
	// Updates are the image before the unit and the final one of each of
	// Net.Updates.
	Updates [][2][]byte
}

// Step is a row change kept in source order, with its transaction (for
// messages).
type Step struct {
	Tx  *txn.Txn
	Row *txn.RowChange
}

// Plan is a unit reduced: ordered steps for tables that cannot be
// compacted, net effects for those that can.
type Plan struct {
	Ordered []Step
	Nets    []*Net
	// Dropped counts row changes that compaction made unnecessary.
	Dropped int
	// ForeignKeys: a table of the plan has a foreign key, or a foreign
	// key references it. A target applies such a plan with its foreign
	// key checks off: its statements are no longer in source order (see
	// the package comment).
	ForeignKeys bool
}

// Lookup returns a table's definition.
type Lookup func(schema, name string) (*txn.TableDef, error)

// rowState is one row key's history over the unit.
type rowState struct {
	existed bool        // the row existed before the unit
	before  []txn.Value // its image before the unit (when existed)
	final   []txn.Value // its image after; nil once deleted
	key     []txn.Value // the first image seen: it carries the row key
	// rawBefore and rawFinal are before and final as the binlog carried
	// them, when the table's images are kept raw (table.raw).
	rawBefore, rawFinal []byte
}

type table struct {
	net  *Net
	keys []int // row key columns
	// rows indexes states by row key; states are in first-touch order.
	rows    map[string]int
	states  []rowState
	ok      bool
	buf     []byte // key's, reused
	changes int    // the unit's row changes to the table
	// raw: every change so far carried its raw images, every column
	// present, under the table map net.Map (Net.Raw).
	raw   bool
	event *txn.RowsEvent
}

// Unit reduces txs (a unit's members, in order). ok is false when the unit
// holds statements, or changes that can cascade, which only run in source
// order.
func Unit(txs []*txn.Txn, lookup Lookup) (p Plan, ok bool, err error) {
	ts, ok, err := histories(txs, lookup, false, &p)
	if !ok || err != nil {
		return Plan{}, ok, err
	}
	for _, t := range ts.order {
		if !t.ok {
			continue
		}
		var raw *RawImages
		if t.raw {
			raw = &RawImages{Event: t.event}
		}
		for i := range t.states {
			r := &t.states[i]
			switch {
			case r.existed && r.final == nil:
				t.net.Deletes = append(t.net.Deletes, r.before)
			case !r.existed && r.final != nil:
				t.net.Inserts = append(t.net.Inserts, r.final)
				if raw != nil {
					raw.Inserts = append(raw.Inserts, r.rawFinal)
				}
			case r.existed && !equalImages(r.before, r.final):
				t.net.Updates = append(t.net.Updates, r.final)
				if raw != nil {
					raw.Updates = append(raw.Updates, [2][]byte{r.rawBefore, r.rawFinal})
				}
			default:
				continue // inserted then deleted, or back to its first image
			}
			p.Dropped--
		}
		t.net.Raw = raw
		p.Nets = append(p.Nets, t.net)
	}
	return p, true, nil
}

// Idempotent reduces txs to writes that leave the unit's end state on a
// target where the unit took effect in full, in part or not at all: every
// row key the unit touched is deleted (Net.Deletes: gone at the end) or
// overwritten with its final image (Net.Updates). It is how a unit that
// wrote to a non-transactional table, and may have taken effect before a
// crash, is applied again without doubling anything.
//
// ok is false when row keys alone cannot say it: statements, a table
// without exactly one unique index (a key-less table, or an overwrite that
// could meet another row), foreign keys, triggers, images that are not
// full, or changes that contradict each other. Unlike Unit it takes
// tables of any engine, and it drops nothing: a row inserted then deleted
// is deleted, one back to its first image is written.
func Idempotent(txs []*txn.Txn, lookup Lookup) (p Plan, ok bool, err error) {
	ts, ok, err := histories(txs, lookup, true, &p)
	if !ok || err != nil || len(p.Ordered) > 0 {
		return Plan{}, false, err
	}
	for _, t := range ts.order {
		for i := range t.states {
			if r := &t.states[i]; r.final == nil {
				t.net.Deletes = append(t.net.Deletes, r.key)
			} else {
				t.net.Updates = append(t.net.Updates, r.final)
			}
		}
		p.Nets = append(p.Nets, t.net)
	}
	p.Dropped = 0
	return p, true, nil
}

// histories records each row key's history over txs, per table, for
// tables that qualify (anyEngine: non-transactional ones too); changes to
// the others go to p.Ordered, and each change recorded counts in
// p.Dropped. ok is false when txs hold statements or contradict
// themselves.
func histories(txs []*txn.Txn, lookup Lookup, anyEngine bool, p *Plan) (ts tables, ok bool, err error) {
	ts = tables{byName: map[string]*table{}, byMap: map[*txn.Table]*table{}, anyEngine: anyEngine}
	for _, tx := range txs {
		for _, ch := range tx.Changes {
			if ch.Stmt != nil {
				return ts, false, nil
			}
		}
	}
	// First pass: which tables can be compacted.
	for _, tx := range txs {
		for _, ch := range tx.Changes {
			rc := ch.Row
			t, err := ts.of(rc.Table, lookup)
			if err != nil {
				return ts, false, err
			}
			if t.net.Def.CanCascade(rc) {
				return ts, false, nil
			}
			if t.ok && !fullImages(rc, t.net.Def) {
				t.ok = false
			}
			if t.changes == 0 {
				t.raw, t.event = true, rc.Event // rawImages checks rc.Event
			}
			if t.raw && !rawImages(rc, t.net.Map) {
				t.raw = false
			}
			t.changes++
		}
	}
	for _, t := range ts.order {
		if d := t.net.Def; len(d.ForeignKeys) > 0 || d.Referenced {
			p.ForeignKeys = true
		}
		if t.ok {
			// Room for a history per change: growing the map and the
			// slice change by change rehashed and copied them over and
			// over.
			t.rows = make(map[string]int, t.changes)
			t.states = make([]rowState, 0, t.changes)
		}
	}
	// Second pass: ordered steps, and row histories of compactable tables.
	for _, tx := range txs {
		for _, ch := range tx.Changes {
			rc := ch.Row
			t, _ := ts.of(rc.Table, nil)
			if !t.ok {
				p.Ordered = append(p.Ordered, Step{tx, rc})
				continue
			}
			if !t.apply(rc) {
				// The changes contradict each other (say, an insert of a row
				// the unit already holds): leave the whole unit to the
				// server, in order, where the error will name the row.
				return ts, false, nil
			}
			p.Dropped++
		}
	}
	return ts, true, nil
}

// tables are a unit's tables, in first-touch order.
type tables struct {
	byName map[string]*table // by the binlog's schema.table
	// byMap and last find a table map's table without its name: the
	// binlog reader shares one *txn.Table among the changes to a table.
	byMap map[*txn.Table]*table
	last  *txn.Table
	lastT *table
	order []*table
	// anyEngine qualifies non-transactional tables too (Idempotent).
	anyEngine bool
}

// of returns the table of a table map, looking its definition up the
// first time.
func (ts *tables) of(m *txn.Table, lookup Lookup) (*table, error) {
	if m == ts.last && m != nil {
		return ts.lastT, nil
	}
	t := ts.byMap[m]
	if t == nil {
		name := m.QualifiedName()
		if t = ts.byName[name]; t == nil {
			d, err := lookup(m.Schema, m.Name)
			if err != nil {
				return nil, err
			}
			t = &table{net: &Net{Def: d, Map: m}}
			t.ok, t.keys = compactable(d, ts.anyEngine)
			ts.byName[name] = t
			ts.order = append(ts.order, t)
		}
		ts.byMap[m] = t
	}
	ts.last, ts.lastT = m, t
	return t, nil
}

// compactable reports whether d qualifies, and its row key. A unit's
// writes to a non-transactional table are compacted only with anyEngine
// (Idempotent): a unit that fails half-way leaves them done, and a net
// effect cannot say which of them were. Idempotent, which writes over
// whatever part of a unit took effect, keeps off foreign keys altogether.
func compactable(d *txn.TableDef, anyEngine bool) (bool, []int) {
	k := d.RowKey()
	if k == nil || len(d.Indexes) != 1 || d.HasTriggers || (!d.Transactional && !anyEngine) {
		return false, nil
	}
	if anyEngine && (len(d.ForeignKeys) > 0 || d.Referenced) {
		return false, nil
	}
	if k.WithoutOverlaps {
		// Rows conflict on overlapping periods, which no row key says,
		// and MariaDB refuses ON DUPLICATE KEY UPDATE on such a table.
		return false, nil
	}
	return true, k.Columns
}

// fullImages: every writable column present, no relaxed checks.
func fullImages(rc *txn.RowChange, d *txn.TableDef) bool {
	if rc.Flags&(txn.RowsFlagNoForeignKeyChecks|txn.RowsFlagRelaxedUniqueCheck) != 0 {
		return false
	}
	for _, img := range [][]bool{rc.BeforeCols, rc.AfterCols} {
		for i, present := range img {
			if !present && i < len(d.Columns) && !d.Columns[i].Generated {
				return false
			}
		}
	}
	return true
}

// rawImages: rc carries its images raw, every column present, under the
// table map m.
func rawImages(rc *txn.RowChange, m *txn.Table) bool {
	if rc.Event == nil || rc.Table != m {
		return false
	}
	full := func(img []byte, cols []bool) bool { return img != nil && !slices.Contains(cols, false) }
	switch rc.Kind {
	case txn.Insert:
		return full(rc.AfterImage, rc.AfterCols)
	case txn.Delete:
		return full(rc.BeforeImage, rc.BeforeCols)
	case txn.Update:
		return full(rc.BeforeImage, rc.BeforeCols) && full(rc.AfterImage, rc.AfterCols)
	}
	return false
}

// apply records one change; false when it contradicts the history.
func (t *table) apply(rc *txn.RowChange) bool {
	switch rc.Kind {
	case txn.Insert:
		return t.insert(rc.After, rc.AfterImage)
	case txn.Delete:
		return t.delete(rc.Before, rc.BeforeImage)
	case txn.Update:
		if t.sameKey(rc.Before, rc.After) {
			r := t.row(rc.After)
			if r == nil {
				t.touch(rowState{existed: true, before: rc.Before, final: rc.After, key: rc.Before, rawBefore: rc.BeforeImage, rawFinal: rc.AfterImage})
				return true
			}
			if r.final == nil {
				return false
			}
			r.final, r.rawFinal = rc.After, rc.AfterImage
			return true
		}
		return t.delete(rc.Before, rc.BeforeImage) && t.insert(rc.After, rc.AfterImage)
	}
	return false
}

func (t *table) insert(after []txn.Value, raw []byte) bool {
	r := t.row(after)
	if r == nil {
		t.touch(rowState{final: after, key: after, rawFinal: raw})
		return true
	}
	if r.final != nil {
		return false
	}
	r.final, r.rawFinal = after, raw
	return true
}

func (t *table) delete(before []txn.Value, raw []byte) bool {
	r := t.row(before)
	if r == nil {
		t.touch(rowState{existed: true, before: before, key: before, rawBefore: raw})
		return true
	}
	if r.final == nil {
		return false
	}
	r.final = nil
	return true
}

// row returns the history of img's row key, or nil with the key left in
// t.buf for touch.
func (t *table) row(img []txn.Value) *rowState {
	t.buf = t.appendKey(t.buf[:0], img)
	if i, ok := t.rows[string(t.buf)]; ok {
		return &t.states[i]
	}
	return nil
}

// touch starts the history of the row key in t.buf.
func (t *table) touch(r rowState) {
	t.rows[string(t.buf)] = len(t.states)
	t.states = append(t.states, r)
}

// sameKey reports whether two images have the same row key.
func (t *table) sameKey(a, b []txn.Value) bool {
	t.buf = t.appendKey(t.buf[:0], a)
	n := len(t.buf)
	t.buf = t.appendKey(t.buf, b)
	return string(t.buf[:n]) == string(t.buf[n:])
}

// appendKey appends the row key's values, exactly as the binlog carries
// them. Values that the server takes as equal (by collation) but that
// differ in bytes get different keys; that is safe because deletes are
// applied before inserts and overwrites (see the SQL side).
func (t *table) appendKey(b []byte, img []txn.Value) []byte {
	for _, c := range t.keys {
		b = appendValueKey(b, img[c])
		b = append(b, 0)
	}
	return b
}

func appendValueKey(b []byte, v txn.Value) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'n')
	case []byte:
		return append(append(b, 'b'), x...)
	case int64:
		return strconv.AppendInt(append(b, 'i'), x, 10)
	}
	return fmt.Appendf(b, "%T:%v", v, v)
}

// equalImages reports whether two row images are the same values.
func equalImages(a, b []txn.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !txn.SameValue(a[i], b[i]) {
			return false
		}
	}
	return true
}
