package mysql

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// With --keep-gtid every source transaction is its own target transaction
// carrying the source's GTID. Sent the ordinary way (Conn.Send, then
// Conn.Commit) that is two round trips per source transaction, each a
// system call or two on both sides and a wake-up of the target's thread:
// most of prepl's CPU per transaction, and a good part of the target's.
//
// A unit of a target that keeps GTIDs therefore holds many source
// transactions, rendered each as its own member (EachBatch), and
// Conn.ApplyEach sends them back to back, several transactions per round
// trip, each its own SET of the GTID variables, BEGIN, rows, position
// write and COMMIT:
//
//	SET SESSION gtid_domain_id=0, server_id=1, gtid_seq_no=7;BEGIN;
//	UPDATE ...;
//	UPDATE prepl.position SET ..., pos=IF(ROW_COUNT() = 1, 1234, 'prepl row check failed'), ... WHERE ...;
//	COMMIT;
//	SET SESSION gtid_domain_id=0, server_id=1, gtid_seq_no=8;BEGIN; ...
//
// A COMMIT that follows its rows in the same round trip cannot wait for
// prepl to read their row counts, so the server checks them itself before
// it: the row count of a member's last row statement is checked by its
// position write, which stores a string in an integer column, an error in
// the strict session, when the count differs (ROW_COUNT() there is the
// previous statement's; the session has CLIENT_FOUND_ROWS, so an update
// that changes nothing counts the row it found, as the client check does);
// an earlier UPDATE's or DELETE's count is added up in a user variable
// (SET @prepl_bad = ...) that the position write checks too. An INSERT
// needs no check: without IGNORE it inserts every row or fails. A failed
// statement ends the round trip, and its member's transaction stays open
// and is rolled back: every member before it is committed with its
// position, none after it ran. Which member failed is read back from the
// position row (the count of members committed), and a failed check is
// replayed alone with prepl's own row checks, rolled back, to name the row.
//
// Members the plain path cannot take (tables that are not transactional
// on the target, tables with triggers sent as BINLOG statements) go the
// ordinary way, Send and Commit, in their place in the sequence.

// EachBatch is a unit rendered for a target that keeps GTIDs: each member
// its own target transaction (Conn.ApplyEach).
type EachBatch struct {
	members []*Batch
}

// Saved is 0: members are not compacted.
func (e *EachBatch) Saved() int { return 0 }

// RowEvents implements apply.Batch: --keep-gtid sends no rows events of
// its own (mysql/rowevents.go).
func (e *EachBatch) RowEvents() int { return 0 }

// Each is the number of members (source transactions to apply).
func (e *EachBatch) Each() int { return len(e.members) }

// String shows each member's batch (see Batch.String); ApplyEach adds the
// position write and COMMIT to each.
func (e *EachBatch) String() string {
	var s strings.Builder
	for i, m := range e.members {
		if len(e.members) > 1 {
			fmt.Fprintf(&s, "-- member %d\n", i)
		}
		s.WriteString(m.String())
	}
	return s.String()
}

var _ apply.EachConn = (*Conn)(nil)

// AppliesEach reports whether units are rendered as EachBatch and applied
// with Conn.ApplyEach: a MariaDB target that keeps GTIDs. Other targets
// that keep GTIDs take units of one transaction.
func (t *Target) AppliesEach() bool { return t.keepGTID && t.IsMariaDB }

// eachTxn: txs are rendered as an EachBatch. An XA group (alone in its
// unit) goes the ordinary way.
func (t *Target) eachTxn(txs []*txn.Txn) bool {
	return t.AppliesEach() && !(len(txs) == 1 && txs[0].XA)
}

// renderEach renders each member of a unit as its own batch, from the
// unit's plan p when it has one (its runs split by member), else planned
// here. Members are never compacted: each is a source transaction of its
// own on the target.
func (t *Target) renderEach(ctx context.Context, txs []*txn.Txn, p *compact.UnitPlan) (*EachBatch, error) {
	plans := make([]compact.UnitPlan, 0, len(txs))
	if p != nil {
		for _, r := range p.Runs {
			if r.Plan != nil { // compacted: plan its members again
				plans = nil
				break
			}
			for _, tx := range r.Txs {
				plans = append(plans, compact.UnitPlan{Runs: []compact.Run{{Txs: []*txn.Txn{tx}, Verbatim: r.Verbatim}}})
			}
		}
	}
	if len(plans) != len(txs) {
		plans = plans[:0]
		for _, tx := range txs {
			pl, err := t.Plan(ctx, []*txn.Txn{tx}, false)
			if err != nil {
				return nil, err
			}
			plans = append(plans, pl)
		}
	}
	e := &EachBatch{members: make([]*Batch, len(txs))}
	for i, tx := range txs {
		if tx.XA {
			return nil, fmt.Errorf("apply %s: an XA transaction inside a commit unit: invariant violated", describe(tx))
		}
		b, err := t.renderMember(ctx, tx, plans[i])
		if err != nil {
			return nil, err
		}
		e.members[i] = b
	}
	return e, nil
}

// renderMember renders one source transaction as a target transaction
// carrying its GTID, its row counts checked by the server when it goes
// the plain way (SQL on transactional tables).
func (t *Target) renderMember(ctx context.Context, tx *txn.Txn, p compact.UnitPlan) (*Batch, error) {
	if err := t.refuseOnGalera(ctx, tx); err != nil {
		return nil, err
	}
	txs := []*txn.Txn{tx}
	nonTrans, mixed, err := t.nonTransactional(ctx, txs)
	if err != nil {
		return nil, err
	}
	b := &Batch{hint: t.sqlHint(txs, &p), txs: txs, nonTrans: nonTrans, mixed: mixed}
	b.checks.on = len(nonTrans) == 0
	for _, r := range p.Runs {
		if r.Verbatim != "" {
			b.checks.on = false
		}
	}
	b.begin(txs, true)
	if err := t.renderRuns(ctx, b, p); err != nil {
		return nil, err
	}
	b.restore()
	return b, nil
}

// rowChecks has the server check a batch's row counts (see the top of
// this file): after each checked UPDATE or DELETE, when the next statement
// comes, a SET adds whether its count differed to @prepl_bad; the last
// checked statement, if nothing follows it, is left pending for the
// position write to check.
type rowChecks struct {
	on bool
	// pending: the statement at chunks[chunk].expect[stmt] is checked
	// and its count not yet.
	pending     bool
	chunk, stmt int
	acc         bool // @prepl_bad is set in this batch
}

// added notes a statement just appended to b.
func (r *rowChecks) added(b *Batch, e rowExpect) {
	if r.on && e.check {
		r.pending, r.chunk, r.stmt = true, len(b.chunks)-1, len(b.chunks[len(b.chunks)-1].expect)-1
	}
}

// flush writes the check of the pending statement before the next one.
func (r *rowChecks) flush(b *Batch) {
	if !r.pending {
		return
	}
	r.pending = false
	e := b.chunks[r.chunk].expect[r.stmt]
	if !needsCheck(e) {
		return
	}
	q := "SET @prepl_bad = (ROW_COUNT() <> " + strconv.FormatInt(max(e.want, 1), 10) + ")"
	if r.acc {
		q = "SET @prepl_bad = @prepl_bad + (ROW_COUNT() <> " + strconv.FormatInt(max(e.want, 1), 10) + ")"
	}
	r.acc = true
	b.cur().stmt(q, rowExpect{})
}

// needsCheck: a statement's row count can differ without an error. An
// INSERT (never IGNORE, never ON DUPLICATE KEY UPDATE unless compacted)
// inserts all its rows or fails.
func needsCheck(e rowExpect) bool {
	return e.check && (e.kind != txn.Insert || e.compacted)
}

// fold is the condition the position write of b checks ("" for none).
func (r *rowChecks) fold(b *Batch) string {
	var cond []string
	if r.acc {
		cond = append(cond, "@prepl_bad = 0")
	}
	if r.pending {
		if e := b.chunks[r.chunk].expect[r.stmt]; needsCheck(e) {
			cond = append(cond, "ROW_COUNT() = "+strconv.FormatInt(max(e.want, 1), 10))
		}
	}
	return strings.Join(cond, " AND ")
}

// rowCheckFailed is the text the position write stores in an integer
// column when a check fails: the strict session refuses it (error 1366).
const rowCheckFailed = "prepl row check failed"

// isRowCheck reports whether err is a failed server-side row check.
func isRowCheck(err error) bool {
	return ErrorCode(err) == 1366 && strings.Contains(err.Error(), rowCheckFailed)
}

// knownSlots are the slots whose position row exists on the target: their
// position is written with an UPDATE, cheaper than the INSERT ... ON
// DUPLICATE KEY UPDATE that the first write of a slot needs.
type knownSlots struct {
	mu sync.Mutex
	m  map[string]bool
}

func (k *knownSlots) has(slot string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.m[slot]
}

func (k *knownSlots) add(slot string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]bool{}
	}
	k.m[slot] = true
}

func (k *knownSlots) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m = nil
}

// appendPositionUpdate appends the UPDATE that stores p in its existing
// row, failing (rowCheckFailed) unless cond holds.
func (t *Target) appendPositionUpdate(b []byte, p position.Checkpoint, cond string) []byte {
	b = append(b, "UPDATE "+PositionSchema+".position SET gtid_pos="...)
	b = appendEscaped(b, []byte(p.GTIDPos))
	b = append(b, ", file="...)
	b = appendEscaped(b, []byte(p.File))
	b = append(b, ", pos="...)
	if cond != "" {
		b = append(b, "IF("...)
		b = append(b, cond...)
		b = append(b, ", "...)
		b = strconv.AppendUint(b, uint64(p.Pos), 10)
		b = append(b, ", '"+rowCheckFailed+"')"...)
	} else {
		b = strconv.AppendUint(b, uint64(p.Pos), 10)
	}
	b = append(b, ", last_gtid="...)
	b = appendEscaped(b, []byte(p.LastGTID))
	b = append(b, ", source_ts="...)
	if p.SourceTS.IsZero() {
		b = append(b, "NULL"...)
	} else {
		b = append(b, '\'')
		b = p.SourceTS.UTC().AppendFormat(b, "2006-01-02 15:04:05.000000")
		b = append(b, '\'')
	}
	b = append(b, ", pending_ddl="...)
	b = appendEscaped(b, []byte(p.PendingDDL))
	b = append(b, ", pending_state="...)
	b = appendEscaped(b, []byte(p.PendingState))
	b = append(b, ", applied="...)
	b = strconv.AppendUint(b, p.Applied, 10)
	b = append(b, ", floor_gtid="...)
	b = appendEscaped(b, []byte(p.Floor.GTIDPos))
	b = append(b, ", floor_file="...)
	b = appendEscaped(b, []byte(p.Floor.File))
	b = append(b, ", floor_pos="...)
	b = strconv.AppendUint(b, uint64(p.Floor.Pos), 10)
	if f := t.fenceExpr(); f != "" { // the fence: NULL, refused in the strict session, once another prepl claimed the channel
		b = append(b, ", channel_epoch="...)
		b = append(b, f...)
	}
	b = append(b, ", updated_at=CURRENT_TIMESTAMP(6) WHERE channel="...)
	b = appendEscaped(b, []byte(t.Channel))
	b = append(b, " AND slot="...)
	b = appendEscaped(b, []byte(p.Slot))
	return append(b, ';')
}

// appendPositionWrite appends the statements that store p, checking cond,
// and reports whether the last of them is an UPDATE of an existing row
// (else it inserts the row if missing).
func (t *Target) appendPositionWrite(b []byte, p position.Checkpoint, cond string) ([]byte, []rowExpect, bool) {
	if t.slots.has(p.Slot) {
		return t.appendPositionUpdate(b, p, cond), []rowExpect{{}}, true
	}
	// The slot's first write in this process: its row may be missing.
	// The check goes in a SET (ROW_COUNT() is the previous statement's)
	// and the INSERT stores its outcome.
	var ex []rowExpect
	pos := strconv.FormatUint(uint64(p.Pos), 10)
	if cond != "" {
		b = append(b, "SET @prepl_ok = ("...)
		b = append(b, cond...)
		b = append(b, ");"...)
		ex = append(ex, rowExpect{})
		pos = "IF(@prepl_ok, " + pos + ", '" + rowCheckFailed + "')"
	}
	b = append(append(b, t.positionInsert(p, pos)...), ';')
	return b, append(ex, rowExpect{}), false
}

// ApplyEach applies the members of an EachBatch from the from-th on, each
// in its own target transaction with its GTID, committed with its
// position ps[i]: several members a round trip, in at most maxBatch bytes
// each. It returns how many members are committed in all, from included;
// on an error, the members before that count are committed and none
// after. from < 0 means that an earlier attempt could not tell: the count
// is read from the position row first. A count that cannot be read is
// returned as -1, with the error.
func (c *Conn) ApplyEach(ctx context.Context, ab apply.Batch, from int, ps []position.Checkpoint) (int, error) {
	e, ok := ab.(*EachBatch)
	if !ok || len(ps) != len(e.members) {
		return max(from, 0), fmt.Errorf("apply: a batch of %T with %d positions: invariant violated", ab, len(ps))
	}
	if from < 0 {
		n, err := c.committed(ctx, ps, 0, len(ps))
		if err != nil {
			return -1, err
		}
		from = n
	}
	limit := int(min(int64(maxBatch), max(c.maxPacket/2, 1<<16)))
	var rt eachTrip
	done := from // members committed for sure
	send := func() error {
		if len(rt.sql) == 0 {
			return nil
		}
		err := c.sendTrip(ctx, &rt)
		if err == nil && rt.commits > 0 {
			done = rt.last + 1
			for _, s := range rt.inserted {
				c.t.slots.add(s)
			}
		}
		rt.reset()
		return err
	}
	for i := from; i < len(e.members); i++ {
		m := e.members[i]
		var err error
		if !m.checks.on {
			// Not plain: the ordinary way, in its place.
			if err = send(); err == nil {
				if err = c.Send(ctx, m); err == nil {
					err = c.Commit(ctx, ps[i])
				}
				if err == nil {
					done = i + 1
					continue
				}
			}
			return c.eachFailed(ctx, e, ps, done, i+1, err)
		}
		for _, ch := range m.chunks {
			if len(rt.sql) > 0 && len(rt.sql)+len(ch.sql) > limit {
				if err := send(); err != nil {
					return c.eachFailed(ctx, e, ps, done, i+1, err)
				}
			}
			rt.add(ch)
		}
		sql, ex, update := c.t.appendPositionWrite(rt.sql, ps[i], m.checks.fold(m))
		rt.sql = append(sql, "COMMIT;"...)
		rt.expect = append(append(rt.expect, ex...), rowExpect{})
		if update {
			rt.positions = append(rt.positions, len(rt.expect)-2)
		} else {
			rt.inserted = append(rt.inserted, ps[i].Slot)
		}
		rt.last = i
		rt.commits++
		if len(rt.sql) >= limit {
			if err := send(); err != nil {
				return c.eachFailed(ctx, e, ps, done, i+1, err)
			}
		}
	}
	if err := send(); err != nil {
		return c.eachFailed(ctx, e, ps, done, len(e.members), err)
	}
	return len(e.members), nil
}

// eachTrip is one round trip of ApplyEach being built.
type eachTrip struct {
	sql    []byte
	expect []rowExpect
	// positions are the statements (by index in expect) that UPDATE a
	// position row, which must exist: each must count 1 row.
	positions []int
	inserted  []string // slots whose row an INSERT of the trip writes
	commits   int      // members whose COMMIT it holds
	last      int      // the last of them
}

func (r *eachTrip) add(ch chunk) {
	if r.sql == nil {
		r.sql = make([]byte, 0, len(ch.sql)+4096)
	}
	r.sql = append(r.sql, ch.sql...)
	r.expect = append(r.expect, ch.expect...)
}

func (r *eachTrip) reset() {
	r.sql, r.expect, r.positions, r.inserted, r.commits = r.sql[:0], r.expect[:0], r.positions[:0], r.inserted[:0], 0
}

// sendTrip sends one round trip and checks what the server could not:
// the counts of INSERTs (which cannot differ) and that every position
// UPDATE found its row. These come after the COMMITs: a difference there
// means the target changed under prepl (a position row deleted).
func (c *Conn) sendTrip(ctx context.Context, rt *eachTrip) error {
	affected, err := c.execRaw(ctx, string(rt.sql[:len(rt.sql)-1]))
	if err != nil {
		return c.t.fenced(c.tooLarge(nil, len(rt.sql), err))
	}
	for _, i := range rt.positions {
		if i < len(affected) && affected[i] != 1 {
			return fmt.Errorf("the position row of channel %q was missing on the target when a transaction committed (deleted while prepl ran?): "+
				"the transactions after the last stored position may be applied again at the next start: %w", c.t.Channel, ErrRowCount)
		}
	}
	for i, e := range rt.expect {
		if !e.check || i >= len(affected) {
			continue
		}
		if want := max(e.want, 1); affected[i] != want {
			return fmt.Errorf("apply %s: %s on %s affected %d rows, want %d: the target has diverged from the source%s: %w",
				describe(e.tx), e.kind, e.def.QualifiedName(), affected[i], want, divergedRow(e.row, e.def), ErrRowCount)
		}
	}
	return nil
}

// eachFailed reports an error of ApplyEach: it rolls back the failing
// member's open transaction, reads how many members are committed
// (done for sure, at most upTo), and names the first one that is not:
// a failed row check is replayed alone, rolled back, for prepl's own
// checks to name the row.
func (c *Conn) eachFailed(ctx context.Context, e *EachBatch, ps []position.Checkpoint, done, upTo int, err error) (int, error) {
	c.execRaw(ctx, "ROLLBACK") // the connection may be gone: the pool reads the position
	n, rerr := c.committed(ctx, ps, done, upTo)
	if rerr != nil {
		return -1, fmt.Errorf("%w (and reading back which transactions committed failed: %v)", err, rerr)
	}
	if n >= len(e.members) { // every COMMIT ran: a check after them failed
		return n, err
	}
	m := e.members[n]
	if isRowCheck(err) {
		if rerr := c.Rollback(ctx); rerr == nil {
			m.checks.on = false // Send checks each statement itself
			serr := c.Send(ctx, m)
			m.checks.on = true
			c.Rollback(ctx)
			if errors.Is(serr, ErrRowCount) {
				return n, serr
			}
		}
		return n, fmt.Errorf("apply %s: a row change affected a different number of rows than at the source: the target has diverged from the source: %w: %w",
			describe(m.txs[0]), ErrRowCount, err)
	}
	if strings.HasPrefix(err.Error(), "apply ") { // names its transaction already
		return n, err
	}
	return n, fmt.Errorf("apply %s: %w", describe(m.txs[0]), err)
}

// committed reads the channel's position row to tell how many of the
// members are committed: at least done, at most upTo.
func (c *Conn) committed(ctx context.Context, ps []position.Checkpoint, done, upTo int) (int, error) {
	conn, err := c.t.DB.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	p, err := c.t.slotPosition(ctx, conn, ps[0].Slot)
	if err != nil {
		return 0, err
	}
	for k := upTo; k > done; k-- {
		if q := ps[k-1]; q.Applied == p.Applied && q.File == p.File && q.Pos == p.Pos {
			return k, nil
		}
	}
	if done < len(ps) && p.Applied < ps[done].Applied {
		return done, nil
	}
	if done > 0 && p.Applied == ps[done-1].Applied {
		return done, nil
	}
	return 0, fmt.Errorf("the stored position of slot %q (%s:%d, %d applied) is none of the unit's", ps[0].Slot, p.File, p.Pos, p.Applied)
}
