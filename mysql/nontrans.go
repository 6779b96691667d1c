package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// A write to a non-transactional table (MyISAM, Aria, MEMORY) is durable
// the moment its statement ends, while the position that says it was
// applied commits with the unit, later. A crash, a retry or a fallback
// between the two leaves the write without its position, and applying
// the unit again would double it (a row counted twice, v = v + 1 run
// twice) or stop on a duplicate key. MariaDB's own replica has the same
// window and does not close it.
//
// prepl closes it the way it runs a DDL exactly once: before the first
// statement of a unit that writes such a table it commits a marker in
// prepl.maybe_applied (the unit's source range and connection), and the
// unit's commit deletes the marker with the position. A unit that finds a
// marker over its range may have taken effect, wholly or in part. It then
// waits for the session that wrote the marker to end its statement, and
// applies its net effect idempotently (compact.Idempotent: every row key
// it touched deleted or overwritten with its final image). Where row keys
// cannot say it (a table without a single unique key, statements), prepl
// stops and asks (PendingRowsError), like an undecidable DDL. So does a
// unit the target refused (the marker records it): the target diverged,
// and overwriting would hide it where MariaDB's replica stops.

const maybeAppliedTable = PositionSchema + ".maybe_applied"

const maybeAppliedSQL = `CREATE TABLE IF NOT EXISTS ` + maybeAppliedTable + ` (
			channel VARCHAR(64) NOT NULL,
			txn VARCHAR(600) NOT NULL,
			last_txn VARCHAR(600) NOT NULL,
			start_file VARCHAR(512) NOT NULL,
			start_pos BIGINT UNSIGNED NOT NULL,
			end_file VARCHAR(512) NOT NULL,
			end_pos BIGINT UNSIGNED NOT NULL,
			tables TEXT NOT NULL,
			conn_id BIGINT UNSIGNED NOT NULL,
			failed TEXT NOT NULL,
			marked_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
			PRIMARY KEY (channel)
		) ENGINE=InnoDB COMMENT='prepl: a unit that writes non-transactional tables and may have taken effect; deleted in its commit'`

// Marker describes a channel's marked unit: what prepl status and
// PendingRowsError name.
type Marker struct {
	First, Last string // the unit's first and last transaction (TxnID)
	Tables      string
	Failed      string // the target's refusal of the unit, "" when interrupted
}

// Transactions names the marked unit's source transactions.
func (m Marker) Transactions() string {
	if m.Last != m.First {
		return "the transactions from " + m.First + " to " + m.Last
	}
	return "transaction " + m.First
}

// marker is a row of prepl.maybe_applied.
type marker struct {
	Marker
	start, end txn.Position
	conn       uint64
}

// PendingRowsError says that a unit which writes non-transactional tables
// was interrupted, may have taken effect in part, and cannot be applied
// again idempotently. A restart cannot help.
type PendingRowsError struct {
	Marker
	Why string
}

// Fatal: only the user can answer (package fault).
func (e *PendingRowsError) Fatal() bool { return true }

func (e *PendingRowsError) Error() string {
	return fmt.Sprintf("%s wrote the non-transactional table(s) %s and were interrupted before their position was stored: "+
		"their writes may have taken effect, wholly or in part, and prepl cannot apply them again without doubling them (%s). "+
		"Look at the target's rows; then run again with --pending-ddl '%s=%s' if they took effect in full (prepl goes on after them), "+
		"or --pending-ddl '%s=%s' if none did (prepl applies them); repair a partial effect by hand first. "+
		"Converting the tables to InnoDB closes this window",
		e.Transactions(), e.Tables, e.Why, e.First, DDLApplied, e.First, DDLNotApplied)
}

// nonTransactional lists, in first-touch order, the tables txs write that
// are not transactional on the target;
// mixed reports whether they write transactional tables too.
func (t *Target) nonTransactional(ctx context.Context, txs []*txn.Txn) (out []string, mixed bool, err error) {
	for _, tx := range txs {
		err := t.eachTable(ctx, tx, func(d *txn.TableDef) bool {
			if name := d.QualifiedName(); !d.Transactional && !slices.Contains(out, name) {
				out = append(out, name)
			} else if d.Transactional {
				mixed = true
			}
			return false
		})
		if err != nil {
			return nil, false, err
		}
	}
	return out, mixed && len(out) > 0, nil
}

// markNonTransactional runs before b's first statement: it commits a
// marker over b's range, or, where a marker already covers part of it,
// returns the batch to send instead (idempotent, or empty when the user
// said the range took effect).
func (c *Conn) markNonTransactional(ctx context.Context, b *Batch) (*Batch, error) {
	first, last := b.txs[0], b.txs[len(b.txs)-1]
	if c.t.keepGTID && b.mixed {
		return nil, fmt.Errorf("apply %s: %w (%w); run without --keep-gtid, or convert %s to InnoDB", describe(first), ErrMixedKeepGTID, ErrUnsupported, strings.Join(b.nonTrans, ", "))
	}
	m, found, err := c.t.readMarker(ctx, c.c)
	if err != nil {
		return nil, err
	}
	c.marked = true
	if !found || position.Compare(m.end, first.Start) <= 0 || position.Compare(last.End, m.start) <= 0 {
		c.keepMarker = false
		return b, c.t.writeMarker(ctx, c.c, marker{Marker: Marker{First: first.ID(), Last: last.ID(),
			Tables: strings.Join(b.nonTrans, ", ")}, start: first.Start, end: last.End, conn: c.id})
	}
	// A later unit inside the marked range commits without clearing it;
	// one that runs past it (units are formed anew after a restart) moves
	// the marker's end to its own before it sends anything.
	within := position.Compare(last.End, m.end) <= 0
	c.keepMarker = position.Compare(m.end, last.End) > 0
	if m.conn != c.id {
		if err := c.t.waitForSession(ctx, c.c, m.conn); err != nil {
			return nil, err
		}
	}
	send := b
	switch {
	case c.t.keepGTID && m.Failed == "":
		// One source transaction a unit, sent as one BINLOG statement
		// (verbatimTable): the target's binlog says whether it ran.
		logged, err := c.keptGTIDLogged(ctx, last)
		if err != nil {
			return nil, err
		}
		if logged {
			c.t.logWarn("not applying again a transaction with non-transactional writes that the target's binlog already holds",
				"txn", last.ID(), "tables", m.Tables)
			return b.empty(), nil
		}
		// Not in the binlog: the statement did not run (or the server
		// crashed inside it, which a person must look at): send it again.
	case c.t.resolve.ID == m.First && c.t.resolve.As == DDLApplied && within:
		c.t.logWarn("not applying transactions the user said took effect before a crash (--pending-ddl)",
			"txn", first.ID(), "last", last.ID(), "tables", m.Tables)
		return b.empty(), nil
	case c.t.resolve.ID == m.First && c.t.resolve.As == DDLNotApplied:
	case m.Failed != "":
		return nil, &PendingRowsError{Marker: m.Marker,
			Why: "the target refused them (" + m.Failed + "): it has diverged from the source, and writing their rows over it would hide that"}
	default:
		// Also where the user said "applied" of a range this unit runs
		// past: its net effect is the range's end state and then the rest.
		if send, err = c.t.renderIdempotent(ctx, b.txs); err != nil {
			return nil, err
		}
		if send == nil {
			return nil, &PendingRowsError{Marker: m.Marker,
				Why: "a table without exactly one unique key, a foreign key, a trigger or a statement: row keys cannot tell what was applied"}
		}
		c.t.logWarn("applying again, idempotently, transactions that wrote non-transactional tables and may have taken effect before a crash",
			"txn", first.ID(), "last", last.ID(), "tables", m.Tables)
	}
	if !within {
		m.Last, m.end, m.conn = last.ID(), last.End, c.id
		if err := c.t.writeMarker(ctx, c.c, m); err != nil {
			return nil, err
		}
	}
	return send, nil
}

// commitUnlogged commits a marked unit on a target that keeps GTIDs. The
// server wrote its non-transactional rows to its binlog as they ran, as
// an event group of their own carrying the source's GTID; a position
// written in the same transaction would go to the binlog as a second
// group with the next sequence number, a GTID the source never had. So
// the unit's transaction (nothing transactional in it) commits first, and
// the position, with the marker cleared, commits after it outside the
// binlog. A crash between them leaves the marker: see
// markNonTransactional.
func (c *Conn) commitUnlogged(ctx context.Context, p position.Checkpoint) error {
	clear := !c.keepMarker
	c.marked, c.keepMarker = false, false
	if _, err := c.execRaw(ctx, "COMMIT"); err != nil {
		return err
	}
	q := "BEGIN; " + c.t.positionSQL(p)
	if clear {
		q += "; " + c.t.clearMarkerSQL()
	}
	return c.t.fenced(c.t.execUnlogged(ctx, c.c, q+"; COMMIT"))
}

// keptGTIDLogged reports whether the target's binlog holds the GTID of
// tx already (its gtid_binlog_pos is at or past it in tx's domain): with
// kept GTIDs, a non-transactional unit that reached the binlog took
// effect, and sending it again would log its GTID twice.
func (c *Conn) keptGTIDLogged(ctx context.Context, tx *txn.Txn) (bool, error) {
	if KeepGTIDSQL(tx) == "" {
		return false, nil
	}
	var pos string
	if err := c.c.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		return false, fmt.Errorf("read the target's gtid_binlog_pos: %w", err)
	}
	seqs, err := position.ParseMariaDBPos(pos)
	if err != nil {
		return false, err
	}
	seq, ok := seqs[tx.Domain]
	return ok && seq >= tx.SeqNo, nil
}

// ErrMixedKeepGTID is wrapped when --keep-gtid meets a transaction that
// writes transactional and non-transactional tables: the target's binlog
// would hold it as two event groups, one GTID the source never had.
var ErrMixedKeepGTID = errors.New("a transaction that writes both transactional and non-transactional tables cannot keep its source GTID on the target (the target's binlog would hold it as two transactions)")

// renderIdempotent renders txs as their idempotent net effect, or returns
// nil when row keys cannot make them idempotent.
func (t *Target) renderIdempotent(ctx context.Context, txs []*txn.Txn) (*Batch, error) {
	for _, tx := range txs {
		if tx.XA {
			return nil, nil
		}
		if v, err := t.verbatimTable(ctx, tx); err != nil || v != "" {
			return nil, err
		}
	}
	p, ok, err := compact.Idempotent(txs, t.Lookup(ctx))
	if err != nil || !ok {
		return nil, err
	}
	b := &Batch{hint: t.sqlHint(txs, nil), txs: txs}
	b.begin(txs, t.keepGTID)
	tx := txs[len(txs)-1]
	for _, n := range p.Nets {
		for _, st := range []struct {
			rows   [][]txn.Value
			delete bool
		}{{n.Deletes, true}, {n.Updates, false}} {
			for len(st.rows) > 0 {
				rows := st.rows[:min(len(st.rows), netRows)]
				b.setLax(!st.delete && writesComputed(n.Def) || slices.ContainsFunc(rows, writesEnumZero))
				err := b.add(rowExpect{}, func(buf []byte) ([]byte, error) {
					if st.delete {
						return AppendNetDelete(buf, n, rows)
					}
					return AppendNetUpsert(buf, n, rows, true)
				})
				if err != nil {
					return nil, fmt.Errorf("apply %s: %w", describe(tx), err)
				}
				st.rows = st.rows[len(rows):]
			}
		}
	}
	b.restore()
	return b, nil
}

func (t *Target) readMarker(ctx context.Context, c *sql.Conn) (m marker, found bool, err error) {
	return readMarker(ctx, c, t.Channel)
}

// readMarker reads channel's marked unit.
func readMarker(ctx context.Context, c *sql.Conn, channel string) (m marker, found bool, err error) {
	err = c.QueryRowContext(ctx, `SELECT txn, last_txn, start_file, start_pos, end_file, end_pos, tables, conn_id, failed FROM `+
		maybeAppliedTable+` WHERE channel = ?`, channel).
		Scan(&m.First, &m.Last, &m.start.File, &m.start.Offset, &m.end.File, &m.end.Offset, &m.Tables, &m.conn, &m.Failed)
	if errors.Is(err, sql.ErrNoRows) || NoPositionTable(err) {
		return marker{}, false, nil
	}
	if err != nil {
		return marker{}, false, fmt.Errorf("read %s: %w", maybeAppliedTable, err)
	}
	return m, true, nil
}

// writeMarker commits m by itself, before the unit's transaction begins;
// with kept GTIDs it stays out of the target's binlog.
func (t *Target) writeMarker(ctx context.Context, c *sql.Conn, m marker) error {
	q := fmt.Sprintf(`INSERT INTO %s (channel, txn, last_txn, start_file, start_pos, end_file, end_pos, tables, conn_id, failed)
VALUES (%s, %s, %s, %s, %d, %s, %d, %s, %d, '') ON DUPLICATE KEY UPDATE txn=VALUES(txn), last_txn=VALUES(last_txn),
start_file=VALUES(start_file), start_pos=VALUES(start_pos), end_file=VALUES(end_file), end_pos=VALUES(end_pos),
tables=VALUES(tables), conn_id=VALUES(conn_id), failed='', marked_at=CURRENT_TIMESTAMP(6)`, maybeAppliedTable,
		QuoteString(t.Channel), QuoteString(m.First), QuoteString(m.Last), QuoteString(m.start.File), m.start.Offset,
		QuoteString(m.end.File), m.end.Offset, QuoteString(m.Tables), m.conn)
	err := t.execUnlogged(ctx, c, q)
	if NoPositionTable(err) {
		if err = t.createTable(ctx, maybeAppliedSQL); err == nil {
			err = t.execUnlogged(ctx, c, q)
		}
	}
	if err != nil {
		return fmt.Errorf("mark the unit from %s as maybe applied in %s: %w", m.First, maybeAppliedTable, err)
	}
	return nil
}

// refused reports whether err is the target's refusal of a unit's rows
// (a divergence), not a conflict, a lost connection or a compacted
// statement's surprise.
func refused(err error) bool {
	var me *gomysql.MySQLError
	return errors.Is(err, ErrRowCount) || (errors.As(err, &me) && Classify(err) == apply.Fatal && !errors.Is(err, ErrCompacted))
}

// markFailed records on the channel's marker that the target refused its
// unit: the open transaction will roll back, so it is written on a
// connection of its own.
func (t *Target) markFailed(ctx context.Context, cause error) {
	c, err := t.DB.Conn(ctx)
	if err == nil {
		defer discard(c)
		err = t.execUnlogged(ctx, c, "UPDATE "+maybeAppliedTable+" SET failed = "+QuoteString(truncate(cause.Error(), 500))+
			" WHERE channel = "+QuoteString(t.Channel))
	}
	if err != nil {
		t.logWarn("could not record the target's refusal of a unit with non-transactional writes", "err", err)
	}
}

// clearMarkerSQL deletes the channel's marker, in the unit's commit.
func (t *Target) clearMarkerSQL() string {
	return "DELETE FROM " + maybeAppliedTable + " WHERE channel = " + QuoteString(t.Channel)
}

// waitForSession waits until connection id runs no statement: a unit an
// earlier prepl sent before it was killed runs on to its end.
func (t *Target) waitForSession(ctx context.Context, c *sql.Conn, id uint64) error {
	logged := false
	for {
		var n int
		err := c.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
			WHERE ID = ? AND COMMAND NOT IN ('Sleep', 'Killed')`, id).Scan(&n)
		if err != nil {
			return fmt.Errorf("look for a session still applying an interrupted unit (information_schema.PROCESSLIST): %w", err)
		}
		if n == 0 {
			return nil
		}
		if !logged {
			t.logWarn("an interrupted unit is still running on the target: waiting for it to end", "connection", id)
			logged = true
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (t *Target) logWarn(msg string, args ...any) {
	if t.log != nil {
		t.log.Warn(msg, args...)
	}
}

// ResolvePending gives the target the user's word on an interrupted unit
// (--pending-ddl): it decides a marked non-transactional unit as it does a
// DDL.
func ResolvePending(r apply.ResolveDDL) Option { return func(t *Target) { t.resolve = r } }

// MaybeApplied returns the first transaction of the channel's marked unit,
// "" when none is marked.
func (t *Target) MaybeApplied(ctx context.Context) (string, error) {
	m, err := t.Marker(ctx)
	return m.First, err
}

// Marker returns the channel's marked unit; zero when none is marked.
func (t *Target) Marker(ctx context.Context) (Marker, error) {
	c, err := t.DB.Conn(ctx)
	if err != nil {
		return Marker{}, err
	}
	defer c.Close()
	m, _, err := t.readMarker(ctx, c)
	return m.Marker, err
}
