package mysql

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/prepl/prepl/txn"
)

// XA. A transaction prepared with XA on the source is two binlog groups,
// with other transactions between them: the prepared part (its rows,
// ending with XA PREPARE xid) and, later, XA COMMIT xid or XA ROLLBACK xid.
// On the source the rows become visible only at XA COMMIT, so prepl
// applies them there:
//
//   - the prepared part stores its row events, raw (the format
//     description and the table map and rows events, as BINLOG statements
//     carry them), in prepl.xa_prepared, in the target transaction that
//     moves the position past it: nothing of it is visible, nothing is
//     lost on a crash;
//   - XA COMMIT reads them back, decodes them into row changes
//     (Target.decodeXA, binlog.DecodeEvents) and applies those as any
//     transaction's rows (SQL, or BINLOG statements for tables with
//     triggers), deletes the stored row and moves the position, in one
//     target transaction; XA ROLLBACK only deletes the row;
//   - MySQL's one-phase XA group (XA COMMIT ... ONE PHASE) is an ordinary
//     transaction (MariaDB logs it as one).
//
// Decoding back to row changes, rather than sending the stored events in
// BINLOG statements, works on any target: the BINLOG statement needs a
// privilege (BINLOG REPLAY) that a target user often lacks, and reads only
// events of the target's own flavor. The raw events, not prepl's decoded
// form, are what is stored: they are the binlog's stable format, which a
// later prepl reads after an upgrade.
//
// XA groups are barriers (package depend): the prepared part's events are
// committed before its XA COMMIT starts, which reads them.

// xaTable holds the events of XA transactions prepared on the source and
// not yet committed or rolled back there.
const xaTable = PositionSchema + ".xa_prepared"

const xaTableSQL = `CREATE TABLE IF NOT EXISTS ` + xaTable + ` (
	channel VARCHAR(64) NOT NULL,
	xid VARBINARY(400) NOT NULL,
	part INT UNSIGNED NOT NULL,
	gtid VARCHAR(128) NOT NULL,
	file VARCHAR(512) NOT NULL,
	pos BIGINT UNSIGNED NOT NULL,
	format BLOB NOT NULL,
	events LONGBLOB NOT NULL,
	prepared_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
	PRIMARY KEY (channel, xid, part)
) ENGINE=InnoDB COMMENT='prepl: row events of XA transactions prepared on the source, applied at their XA COMMIT'`

// xaPart bounds the events of one row of xaTable, so that its INSERT (in
// hex) stays well under max_allowed_packet and within one batch chunk.
const xaPart = 1 << 20

// ErrXAUnprepared is wrapped when an XA COMMIT comes whose prepared part
// prepl has not applied on this target.
var ErrXAUnprepared = errors.New("XA COMMIT of a transaction whose XA PREPARE was not applied")

// ErrXAKeepGTID is wrapped when an XA transaction meets --keep-gtid.
var ErrXAKeepGTID = errors.New("an XA transaction cannot keep its source GTIDs on the target")

// EventDecoder decodes stored events (binlog.DecodeEvents): the format
// description event, then table map and rows events.
type EventDecoder func(format, events []byte) (*txn.Txn, error)

// XADecoder gives the target the decoder XA COMMIT needs.
func XADecoder(d EventDecoder) Option { return func(t *Target) { t.decodeXA = d } }

// xaStep is a chunk of an XA COMMIT or ROLLBACK group: it reads the
// prepared part's events on the connection, inside the open transaction.
type xaStep struct {
	tx     *txn.Txn
	xid    string
	commit bool
}

// renderXA writes an XA group (the only member of its unit) after BEGIN.
func (t *Target) renderXA(ctx context.Context, b *Batch, tx *txn.Txn, compaction, keepGTID bool) error {
	kind, xid := tx.XAGroup()
	if kind == txn.XANone {
		return fmt.Errorf("apply %s: an XA transaction prepl cannot read: it ends with %q (%w)", describe(tx), lastSQL(tx), ErrUnsupported)
	}
	if kind != txn.XAOnePhase && keepGTID {
		return fmt.Errorf("apply %s: XA %s: %w: prepl applies an XA transaction's rows at its XA COMMIT, so the target's binlog would not hold its XA PREPARE and XA COMMIT as the source's does; run without --keep-gtid (%w)",
			describe(tx), xid, ErrXAKeepGTID, ErrUnsupported)
	}
	switch kind {
	case txn.XAOnePhase:
		rows, err := xaRows(tx, xid)
		if err != nil {
			return err
		}
		p, err := t.Plan(ctx, []*txn.Txn{rows}, compaction)
		if err != nil {
			return err
		}
		return t.renderRuns(ctx, b, p)
	case txn.XAPrepare:
		return t.renderXAPrepare(b, tx, xid)
	}
	b.closeChunk()
	b.chunks = append(b.chunks, chunk{xa: &xaStep{tx: tx, xid: xid, commit: kind == txn.XACommit}, closed: true})
	return nil
}

// xaRows returns tx without its XA statements; another statement inside
// an XA transaction is refused.
func xaRows(tx *txn.Txn, xid string) (*txn.Txn, error) {
	rows, other := tx.XARows()
	if other != nil {
		return nil, fmt.Errorf("apply %s: XA transaction %s holds the statement %q, which prepl cannot keep with its rows until XA COMMIT (%w)",
			describe(tx), xid, truncate(other.SQL, 100), ErrUnsupported)
	}
	return rows, nil
}

// renderXAPrepare stores the prepared part's row events.
func (t *Target) renderXAPrepare(b *Batch, tx *txn.Txn, xid string) error {
	rows, err := xaRows(tx, xid)
	if err != nil {
		return err
	}
	var format, events []byte
	if rows.Rows() > 0 {
		if events, err = rawEvents(rows); err != nil {
			return fmt.Errorf("apply %s: XA PREPARE %s: its row events cannot be stored until its XA COMMIT: %w (%w)", describe(tx), xid, err, ErrUnsupported)
		}
		format = tx.Format.Event
	}
	part := 0
	for {
		n := min(len(events), xaPart)
		q := fmt.Sprintf("INSERT INTO %s (channel, xid, part, gtid, file, pos, format, events) VALUES (%s, %s, %d, %s, %s, %d, %s, %s)",
			xaTable, QuoteString(t.Channel), QuoteString(xid), part, QuoteString(tx.GTID), QuoteString(tx.Start.File), tx.Start.Offset,
			hexLiteral(format), hexLiteral(events[:n]))
		b.stmt(q, rowExpect{})
		events, format = events[n:], nil
		part++
		if len(events) == 0 {
			return nil
		}
	}
}

// rawEvents returns the events of tx's BINLOG statements, back to back.
func rawEvents(tx *txn.Txn) ([]byte, error) {
	stmts, err := BinlogStatements(tx)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, q := range stmts {
		b64, ok := strings.CutPrefix(q, "BINLOG '")
		if !ok {
			return nil, fmt.Errorf("unexpected statement %q", truncate(q, 100))
		}
		ev, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(b64, "'"))
		if err != nil {
			return nil, err
		}
		out = append(out, ev...)
	}
	return out, nil
}

func hexLiteral(b []byte) string {
	if len(b) == 0 {
		return "''"
	}
	return "X'" + hex.EncodeToString(b) + "'"
}

func lastSQL(tx *txn.Txn) string {
	if n := len(tx.Changes); n > 0 && tx.Changes[n-1].Stmt != nil {
		return truncate(tx.Changes[n-1].Stmt.SQL, 100)
	}
	return ""
}

// execXA applies an XA COMMIT (the stored events' rows) or ROLLBACK, and
// deletes the stored events, inside the open transaction.
func (c *Conn) execXA(ctx context.Context, s *xaStep) error {
	t := c.t
	rows, err := c.c.QueryContext(ctx, "SELECT format, events FROM "+xaTable+" WHERE channel = ? AND xid = ? ORDER BY part FOR UPDATE", t.Channel, s.xid)
	if err != nil {
		return fmt.Errorf("apply %s: read the events of XA %s: %w", describe(s.tx), s.xid, err)
	}
	var format, events []byte
	found := false
	for rows.Next() {
		var f, e []byte
		if err := rows.Scan(&f, &e); err != nil {
			rows.Close()
			return fmt.Errorf("apply %s: read the events of XA %s: %w", describe(s.tx), s.xid, err)
		}
		if !found {
			format = f
		}
		found = true
		events = append(events, e...)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("apply %s: read the events of XA %s: %w", describe(s.tx), s.xid, err)
	}
	rows.Close()
	if !found {
		if !s.commit {
			return nil // rolled back: nothing of it was ever visible
		}
		return fmt.Errorf("apply %s: XA COMMIT %s: prepl has not applied this XA transaction's XA PREPARE on this target (channel %q), so it does not have its rows: the replay or stream started after it. Start again from a position before its XA PREPARE, whose GTID is earlier than %s (or, if the XA PREPARE was skipped on purpose, skip this XA COMMIT too with --skip-gtid %s) (%w; %w)",
			describe(s.tx), s.xid, t.Channel, TxnID(s.tx), TxnID(s.tx), ErrXAUnprepared, ErrUnsupported)
	}
	if s.commit && len(events) > 0 {
		if err := c.applyStored(ctx, s, format, events); err != nil {
			return err
		}
	}
	if _, err := c.execRaw(ctx, "DELETE FROM "+xaTable+" WHERE channel = "+QuoteString(t.Channel)+" AND xid = "+QuoteString(s.xid)); err != nil {
		return fmt.Errorf("apply %s: delete the events of XA %s: %w", describe(s.tx), s.xid, err)
	}
	return nil
}

// applyStored applies the prepared part's rows as the commit group's.
func (c *Conn) applyStored(ctx context.Context, s *xaStep, format, events []byte) error {
	t := c.t
	if t.decodeXA == nil {
		return fmt.Errorf("apply %s: XA COMMIT %s: this target has no event decoder (a program using package mysql must set XADecoder)", describe(s.tx), s.xid)
	}
	dec, err := t.decodeXA(format, events)
	if err != nil {
		return fmt.Errorf("apply %s: XA COMMIT %s: the events stored in %s at its XA PREPARE cannot be read: %w", describe(s.tx), s.xid, xaTable, err)
	}
	// Errors name the commit group: the run stops before it.
	dec.Seq, dec.GTID, dec.Domain, dec.ServerID, dec.SeqNo = s.tx.Seq, s.tx.GTID, s.tx.Domain, s.tx.ServerID, s.tx.SeqNo
	dec.Start, dec.End, dec.Timestamp = s.tx.Start, s.tx.End, s.tx.Timestamp
	b := &Batch{hint: 2*len(events) + 1024}
	p, err := t.Plan(ctx, []*txn.Txn{dec}, false)
	if err != nil {
		return err
	}
	if err := t.renderRuns(ctx, b, p); err != nil {
		return err
	}
	b.restore()
	return c.Send(ctx, b)
}
