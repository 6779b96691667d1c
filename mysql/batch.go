package mysql

import (
	"context"
	"fmt"
	"slices"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/txn"
)

// Batch is the SQL of one commit unit, rendered before a worker connection
// is free to send it (Conn.Send): BEGIN, the unit's statements, in chunks
// of at most maxBatch bytes, and each statement's expected row count. It
// ends with the session's default checks restored, so any connection can
// send it, again after a retry.
type Batch struct {
	chunks []chunk
	hint   int // expected SQL bytes, to size the first chunk once
	fkOff  bool
	uqOff  bool
	// noFK keeps foreign_key_checks off whatever the rows' flags say:
	// a compacted run with foreign keys (compact.Plan.ForeignKeys).
	noFK bool
	lax  bool // sql_mode is laxMode, not strictMode (RowSession)
	// saved counts the source row changes compaction made unnecessary;
	// events those sent as rows events.
	saved, events int
	// txs are the unit's members; nonTrans the tables they write that are
	// not transactional on the target (see nontrans.go).
	txs      []*txn.Txn
	nonTrans []string
	mixed    bool // transactional tables too, beside nonTrans
	keepGTID bool // it carries its single member's GTID
	// checks has the server check the row counts (a member of a unit
	// applied each transaction on its own, keepgtid.go).
	checks rowChecks
	// ins is the INSERT the last chunk ends with, which the next rows of
	// its transaction join while they can (extendInsert).
	ins openInsert
}

// openInsert is the last statement of a batch's last chunk when it is an
// INSERT that more rows may join.
type openInsert struct {
	chunk, stmt int // where it is: b.chunks[chunk].expect[stmt]
	tx          *txn.Txn
	def         *txn.TableDef
	rc          *txn.RowChange // its first row: the others must match its columns
	rows        int
}

// begin opens the batch's target transaction, carrying the single
// member's GTID when the target keeps them.
func (b *Batch) begin(txs []*txn.Txn, keepGTID bool) {
	if keepGTID && len(txs) == 1 {
		if q := KeepGTIDSQL(txs[0]); q != "" {
			b.stmt(q, rowExpect{})
			b.keepGTID = true
		}
	}
	b.stmt("BEGIN", rowExpect{})
}

// empty is b without its changes: a target transaction that only moves
// the position past them.
func (b *Batch) empty() *Batch {
	e := &Batch{txs: b.txs}
	e.begin(b.txs, b.keepGTID)
	return e
}

type chunk struct {
	sql    []byte
	expect []rowExpect // one per statement in sql
	// binlog is the transaction whose BINLOG statements the chunk holds
	// (nothing else): the connection sends its format description first,
	// and an error names it.
	binlog *txn.Txn
	each   []string // the statements of a binlog chunk (sql is unused)
	xa     *xaStep  // an XA COMMIT or ROLLBACK: runs alone (sql is unused)
	closed bool     // takes no more statements
	// compacted: a binlog chunk of a commit unit's net effect
	// (rowevents.go); a refusal re-runs the unit in source order.
	compacted bool
}

type rowExpect struct {
	check bool
	want  int64 // affected rows the statement must report (0 means 1)
	kind  txn.Kind
	tx    *txn.Txn
	def   *txn.TableDef // the statement's table
	// row, for a single row change: named in a divergence error.
	row *txn.RowChange
	// compacted statements cover several source rows (a commit unit's
	// net effect); a surprise there re-runs the unit in source order.
	compacted bool
	// end is where the statement ends in the chunk's sql, after its ';'
	// (a dry run's script prints the statements one a line).
	end int
}

// tx is the first transaction the chunk's statements apply, or nil.
func (c *chunk) tx() *txn.Txn {
	if c.binlog != nil {
		return c.binlog
	}
	for _, e := range c.expect {
		if e.tx != nil {
			return e.tx
		}
	}
	return nil
}

func (c *chunk) stmt(q string, e rowExpect) {
	c.sql = append(c.sql, q...)
	c.sql = append(c.sql, ';')
	e.end = len(c.sql)
	c.expect = append(c.expect, e)
}

// cur is the chunk statements go to; a full one is closed first.
func (b *Batch) cur() *chunk {
	if n := len(b.chunks); n == 0 || len(b.chunks[n-1].sql) >= maxBatch || b.chunks[n-1].closed {
		// Growing a buffer of megabytes by doubling copied and cleared it
		// over and over: a tenth of prepl's CPU.
		b.chunks = append(b.chunks, chunk{sql: make([]byte, 0, min(b.hint, maxBatch+maxBatch/4))})
	}
	return &b.chunks[len(b.chunks)-1]
}

func (b *Batch) stmt(q string, e rowExpect) {
	b.checks.flush(b)
	b.cur().stmt(q, e)
}

// binlogChunk starts a chunk for tx's BINLOG statements.
func (b *Batch) binlogChunk(tx *txn.Txn) {
	b.closeChunk()
	b.chunks = append(b.chunks, chunk{binlog: tx})
}

// closeChunk makes the next statement start a new chunk.
func (b *Batch) closeChunk() {
	if n := len(b.chunks); n > 0 {
		b.chunks[n-1].closed = true
	}
}

// add appends one statement written by write, with its expectation.
func (b *Batch) add(e rowExpect, write func([]byte) ([]byte, error)) error {
	b.checks.flush(b)
	c := b.cur()
	out, err := write(c.sql)
	if err != nil {
		return err // c.sql keeps its length: the partial statement is dropped
	}
	c.sql = append(out, ';')
	e.end = len(c.sql)
	c.expect = append(c.expect, e)
	b.checks.added(b, e)
	return nil
}

// NonTransactional lists the tables the batch writes that are not
// transactional on the target: rolling the batch back leaves their rows.
func (b *Batch) NonTransactional() []string { return b.nonTrans }

// Saved counts the source row changes compaction made unnecessary.
func (b *Batch) Saved() int { return b.saved }

// RowEvents counts the source row changes the batch sends as rows events
// (BINLOG statements).
func (b *Batch) RowEvents() int { return b.events }

func (b *Batch) setFlags(f uint16) {
	fkOff := f&txn.RowsFlagNoForeignKeyChecks != 0 || b.noFK
	uqOff := f&txn.RowsFlagRelaxedUniqueCheck != 0
	if fkOff != b.fkOff {
		b.stmt("SET SESSION foreign_key_checks="+boolInt(!fkOff), rowExpect{})
		b.fkOff = fkOff
	}
	if uqOff != b.uqOff {
		b.stmt("SET SESSION unique_checks="+boolInt(!uqOff), rowExpect{})
		b.uqOff = uqOff
	}
}

// setLax switches the session between strict and lax mode (RowSession)
// for the statements that follow.
func (b *Batch) setLax(lax bool) {
	if lax != b.lax {
		b.stmt(SQLMode(lax), rowExpect{})
		b.lax = lax
	}
}

// SQLMode sets the session's sql_mode to the strict or the lax one
// (RowSession).
func SQLMode(lax bool) string {
	if lax {
		return "SET SESSION sql_mode=" + laxMode
	}
	return "SET SESSION sql_mode=" + strictMode
}

// restore gives the session back its defaults (RowSession) at the end
// of a batch, so that any connection can send the next one.
func (b *Batch) restore() {
	b.setFlags(0)
	b.setLax(false)
}

// NeedsLax says whether a row change is applied in the lax mode (see
// strictMode): it writes an ENUM's empty error value, or it inserts a row
// leaving a column to its default (one only the target has, or one a
// minimal row image leaves out), which may be a NOT NULL column without
// one: MariaDB's replica gives it the type's implicit default (0, an
// empty string), as a lax session does, where a strict one refuses the
// row. Or it writes a row whose generated columns the server computes
// (writesComputed).
func NeedsLax(rc *txn.RowChange, d *txn.TableDef) bool {
	if writesEnumZero(rc.After) || rc.Kind != txn.Delete && writesComputed(d) {
		return true
	}
	if rc.Kind == txn.Insert && rc.AfterCols != nil {
		for i := range d.Columns {
			if i < len(rc.AfterCols) && !rc.AfterCols[i] && !d.Columns[i].Generated {
				return true
			}
		}
	}
	return false
}

// writesComputed: writing a row of d computes a generated column (a
// stored one, or a virtual one in an index), from values the source
// wrote, perhaps in a non-strict session that took a zero date or a
// value too long for the generated column with a warning and computed
// NULL or a cut value. MariaDB's replica applies rows events with
// sql_mode NO_AUTO_VALUE_ON_ZERO alone, so it computes the same; a strict
// session refuses the row (errors 1292, 1406). A delete computes nothing
// that can fail.
func writesComputed(d *txn.TableDef) bool { return d != nil && d.ComputedOnWrite }

// writesEnumZero: a row writes an ENUM's empty error value, which only a
// lax session takes (see strictMode).
func writesEnumZero(vals []txn.Value) bool {
	for _, v := range vals {
		if e, ok := v.(txn.Enum); ok && e == 0 {
			return true
		}
	}
	return false
}

func boolInt(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Render writes the batch of a commit unit's members (in order): Plan,
// then RenderPlan. With compaction the unit's net effect goes as a few
// multi-row statements per table (package compact); if one of them
// surprises the target, Send returns an error wrapping ErrCompacted and
// the caller renders the unit again without compaction. A MariaDB target
// opened with KeepGTIDs renders each member as its own target transaction
// with its GTID (EachBatch, keepgtid.go); another gives the target
// transaction the (single) member's GTID.
func (t *Target) Render(ctx context.Context, txs []*txn.Txn, compaction bool) (apply.Batch, error) {
	if t.eachTxn(txs) {
		return t.renderEach(ctx, txs, nil)
	}
	return t.render(ctx, txs, nil, compaction, t.keepGTID)
}

// Verbatim reports the table with triggers on the target that makes tx
// go as BINLOG statements, the source's own events ("" for none): the
// target's part in planning a unit (compact.PlanUnit).
func (t *Target) Verbatim(ctx context.Context, tx *txn.Txn) (string, error) {
	return t.verbatimTable(ctx, tx)
}

// Lookup gives compaction the target's table definitions.
func (t *Target) Lookup(ctx context.Context) compact.Lookup {
	return func(schema, name string) (*txn.TableDef, error) { return t.table(ctx, schema, name) }
}

// Plan plans a unit for this target (compact.PlanUnit with Verbatim and
// Lookup).
func (t *Target) Plan(ctx context.Context, txs []*txn.Txn, compaction bool) (compact.UnitPlan, error) {
	return compact.PlanUnit(txs, func(tx *txn.Txn) (string, error) { return t.verbatimTable(ctx, tx) }, t.Lookup(ctx), compaction)
}

// RenderPlan writes the batch of a unit planned by the engine: SQL for
// each run of p, BINLOG statements for its verbatim members. An XA group
// (alone in its unit) is planned again from its rows.
func (t *Target) RenderPlan(ctx context.Context, txs []*txn.Txn, p compact.UnitPlan) (apply.Batch, error) {
	if t.eachTxn(txs) {
		return t.renderEach(ctx, txs, &p)
	}
	return t.render(ctx, txs, &p, p.Compaction, t.keepGTID)
}

// render is Render or RenderPlan (p nil: plan here) with the GTID choice
// made by the caller.
func (t *Target) render(ctx context.Context, txs []*txn.Txn, p *compact.UnitPlan, compaction, keepGTID bool) (*Batch, error) {
	xa := len(txs) == 1 && txs[0].XA
	if !xa {
		for _, tx := range txs {
			if tx.XA { // depend.CanJoin keeps them alone
				return nil, fmt.Errorf("apply %s: an XA transaction inside a commit unit: invariant violated", describe(tx))
			}
		}
		if p == nil {
			plan, err := t.Plan(ctx, txs, compaction)
			if err != nil {
				return nil, err
			}
			p = &plan
		}
	}
	for _, tx := range txs {
		if err := t.refuseOnGalera(ctx, tx); err != nil {
			return nil, err
		}
	}
	nonTrans, mixed, err := t.nonTransactional(ctx, txs)
	if err != nil {
		return nil, err
	}
	b := &Batch{hint: t.sqlHint(txs, p), txs: txs, nonTrans: nonTrans, mixed: mixed}
	b.begin(txs, keepGTID)
	if xa {
		if err := t.renderXA(ctx, b, txs[0], compaction, keepGTID); err != nil {
			return nil, err
		}
		b.restore()
		return b, nil
	}
	if err := t.renderRuns(ctx, b, *p); err != nil {
		return nil, err
	}
	b.restore()
	return b, nil
}

// sqlHint guesses the SQL bytes of a unit, to size its first chunk once:
// its row images in the binlog as SQL text, less the rows compaction
// dropped and those that may go as rows events (compact.Net.Raw: a
// chunk of megabytes allocated for them and left empty cost a tenth of
// prepl's CPU).
func (t *Target) sqlHint(txs []*txn.Txn, p *compact.UnitPlan) int {
	size, rows, dropped := 0, 0, 0
	for _, tx := range txs {
		size += tx.Size
		rows += tx.Rows()
	}
	if p != nil {
		for _, r := range p.Runs {
			if r.Plan == nil {
				continue
			}
			dropped += r.Plan.Dropped
			for _, n := range r.Plan.Nets {
				if n.Raw != nil && t.sendsEvents(r.Txs[0].Format) {
					dropped += len(n.Raw.Inserts) + len(n.Raw.Updates)
				}
			}
		}
	}
	dropped = min(dropped, rows)
	if rows > 0 && dropped > 0 {
		size = int(int64(size) * int64(rows-dropped) / int64(rows))
	}
	return 1024 + 2*size
}

// renderRuns writes a plan's runs: a verbatim member as BINLOG
// statements, the others as SQL (compacted where planned).
func (t *Target) renderRuns(ctx context.Context, b *Batch, p compact.UnitPlan) error {
	for _, r := range p.Runs {
		var err error
		switch {
		case r.Verbatim != "":
			err = t.renderBinlogTxn(ctx, b, r.Txs[0], r.Verbatim)
		case r.Plan == nil:
			err = t.renderAll(ctx, b, r.Txs)
		default:
			err = t.renderNet(ctx, b, r.Txs, r.Plan)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// renderTxn writes tx's changes in source order.
func (t *Target) renderTxn(ctx context.Context, b *Batch, tx *txn.Txn) error {
	for _, ch := range tx.Changes {
		if ch.Stmt != nil {
			if ch.Stmt.DDL {
				return fmt.Errorf("apply %s: DDL inside a row transaction", describe(tx))
			}
			b.stmt(ch.Stmt.SQL, rowExpect{})
			continue
		}
		if err := t.renderRow(ctx, b, tx, ch.Row); err != nil {
			return err
		}
	}
	return nil
}

// renderRow writes one row change's statement.
func (t *Target) renderRow(ctx context.Context, b *Batch, tx *txn.Txn, rc *txn.RowChange) error {
	d, err := t.table(ctx, rc.Table.Schema, rc.Table.Name)
	if err != nil {
		return fmt.Errorf("apply %s: %w", describe(tx), err)
	}
	b.setFlags(rc.Flags)
	b.setLax(NeedsLax(rc, d))
	if ok, err := b.extendInsert(tx, rc, d); ok || err != nil {
		return err
	}
	err = b.add(rowExpect{check: true, kind: rc.Kind, tx: tx, row: rc, def: d}, func(buf []byte) ([]byte, error) {
		return AppendRowChange(buf, rc, d)
	})
	if err != nil {
		return fmt.Errorf("apply %s: %w", describe(tx), err)
	}
	if rc.Kind == txn.Insert && !b.lax {
		n := len(b.chunks) - 1
		b.ins = openInsert{chunk: n, stmt: len(b.chunks[n].expect) - 1, tx: tx, def: d, rc: rc, rows: 1}
	}
	return nil
}

// extendInsert adds an inserted row to the INSERT the batch ends with,
// when that statement inserts rows of the same transaction into the same
// table, with the same columns, in the same session state: one
// multi-row INSERT in source order does what the single-row ones would,
// row by row, without a statement's parsing and execution per row (a
// key-less table's big transactions, which compaction leaves in order,
// went one statement per row). Not across transactions, so that an error
// names the right one; not in the lax mode, where a multi-row INSERT
// takes a NULL into a NOT NULL column as the implicit default that a
// single-row one refuses.
func (b *Batch) extendInsert(tx *txn.Txn, rc *txn.RowChange, d *txn.TableDef) (bool, error) {
	o := &b.ins
	n := len(b.chunks) - 1
	if rc.Kind != txn.Insert || b.lax || o.rc == nil || o.tx != tx || o.def != d || o.chunk != n || o.rows >= netRows {
		return false, nil
	}
	c := &b.chunks[n]
	if c.closed || o.stmt != len(c.expect)-1 || len(c.sql) >= maxBatch ||
		!slices.Equal(o.rc.AfterCols, rc.AfterCols) || !slices.Equal(o.rc.Table.Types, rc.Table.Types) {
		return false, nil
	}
	keep := len(c.sql)
	out := append(c.sql[:keep-1], ",("...) // over the statement's ';'
	out, _, err := appendColumns(out, d, rc.AfterCols, ",", func(buf []byte, i int) ([]byte, error) {
		return AppendLiteral(buf, rc.After[i], rc.Table.Types[i], &d.Columns[i])
	})
	if err != nil {
		c.sql = append(c.sql[:keep-1], ';')
		return false, fmt.Errorf("apply %s: %w", describe(tx), err)
	}
	c.sql = append(out, ");"...)
	e := &c.expect[o.stmt]
	o.rows++
	e.want, e.row, e.end = int64(o.rows), nil, len(c.sql)
	return true, nil
}

func (t *Target) table(ctx context.Context, schema, name string) (*txn.TableDef, error) {
	if d, ok := t.Catalog.Table(schema, name); ok {
		return d, nil
	}
	return t.Catalog.Load(ctx, schema, name)
}
