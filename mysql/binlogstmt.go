package mysql

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"unsafe"

	"github.com/prepl/prepl/fault"
	"github.com/prepl/prepl/txn"
)

// Rows applied from a row-based binlog must not fire the target's
// triggers: the binlog already holds the rows the source's triggers
// wrote. SQL statements would fire them, so a transaction that touches a
// table with triggers on the target is applied the way mariadb-binlog
// does it: its raw events in the server's BINLOG statement, which applies
// them as the replica's SQL thread does (slave_run_triggers_for_rbr=NO).
// The source's Format_description event goes first, once per connection.

// ErrBinlogPrivilege is wrapped when the target refuses the BINLOG
// statement.
var ErrBinlogPrivilege = fault.Fatal(errors.New("BINLOG statement refused")) // a grant is missing: a restart cannot fix it

const (
	eventHeaderLen  = 19
	tableMapEvent   = 19
	rowsFlagStmtEnd = 0x0001
	fdePostHeaderAt = 2 + 50 + 4 + 1 // binlog version, server version, create time, header length
)

// verbatimTable returns the first table tx touches that makes it go as
// BINLOG statements, the source's own row events, with why ("" for none):
// triggers on the target (TableDef.NeedsServerApply), or, on a target
// that keeps GTIDs, a non-transactional table: the server logs such rows
// as they run, one event group per statement, so the source's one
// statement must reach it as one statement to carry the one GTID.
func (t *Target) verbatimTable(ctx context.Context, tx *txn.Txn) (string, error) {
	found := ""
	err := t.eachTable(ctx, tx, func(d *txn.TableDef) bool {
		if why := d.NeedsServerApply(); why != "" {
			found = d.QualifiedName() + " " + why
		} else if t.keepGTID && !d.Transactional {
			found = d.QualifiedName() + " is not transactional, and with --keep-gtid its rows must reach the target's binlog as one event group"
		}
		return found != ""
	})
	if found == "" && err == nil {
		found, err = t.eventsVerbatim(ctx, tx)
	}
	return found, err
}

// eachTable calls f with the target's definition of each table tx
// changes, in the order of its changes (a table again only after another
// one), until f returns true.
func (t *Target) eachTable(ctx context.Context, tx *txn.Txn, f func(*txn.TableDef) bool) error {
	var last *txn.Table
	for _, ch := range tx.Changes {
		if ch.Row == nil || ch.Row.Table == last {
			continue
		}
		last = ch.Row.Table
		d, err := t.table(ctx, last.Schema, last.Name)
		if err != nil {
			return fmt.Errorf("apply %s: %w", describe(tx), err)
		}
		if f(d) {
			return nil
		}
	}
	return nil
}

// renderBinlogTxn writes tx's row changes as BINLOG statements, one per
// source statement, in chunks of their own: an error there names tx.
func (t *Target) renderBinlogTxn(ctx context.Context, b *Batch, tx *txn.Txn, trigger string) error {
	if err := t.canBinlog(tx, trigger); err != nil {
		return err
	}
	stmts, err := BinlogStatements(tx)
	if err != nil {
		return fmt.Errorf("apply %s: %w", describe(tx), err)
	}
	b.binlogChunk(tx)
	b.chunks[len(b.chunks)-1].each = stmts
	b.closeChunk()
	b.events += tx.Rows()
	// A rows event sets foreign_key_checks and unique_checks from its own
	// flags and leaves them so: restore what the batch believes.
	if b.flagsDiffer(tx) {
		b.stmt("SET SESSION foreign_key_checks="+boolInt(!b.fkOff)+", unique_checks="+boolInt(!b.uqOff), rowExpect{})
	}
	return nil
}

// flagsDiffer reports whether a rows event of tx has check flags other
// than the session's.
func (b *Batch) flagsDiffer(tx *txn.Txn) bool {
	for _, ch := range tx.Changes {
		if rc := ch.Row; rc != nil {
			if (rc.Flags&txn.RowsFlagNoForeignKeyChecks != 0) != b.fkOff || (rc.Flags&txn.RowsFlagRelaxedUniqueCheck != 0) != b.uqOff {
				return true
			}
		}
	}
	return false
}

// canBinlog checks that the target can read tx's raw events.
func (t *Target) canBinlog(tx *txn.Txn, trigger string) error {
	why := ""
	switch {
	case tx.Format == nil:
		why = "the binlog reader kept no raw events for it"
	case tx.Format.Flavor == txn.MySQL && t.IsMariaDB:
		why = mysqlUnreadable(tx)
	case tx.Format.Flavor == txn.MariaDB && !t.IsMariaDB:
		why = "its events come from a MariaDB binlog, which MySQL's BINLOG statement does not read"
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("apply %s: table %s; its rows can be applied only with the BINLOG statement, and %s: for triggers, drop them on the target (the rows they write come from the source's binlog), or use a target of the source's flavor (%w)",
		describe(tx), trigger, why, ErrUnsupported)
}

// MySQL's row events that MariaDB's BINLOG statement reads as MySQL's
// replica would: after MySQL's own format description event (whose
// post-header lengths it takes, as mariadb-binlog | mariadb does), the
// table map and the rows events of version 1 (MySQL 5.1-5.5: types
// 23-25) and 2 (5.6+: types 30-32, whose extra data MariaDB skips).
const (
	writeRowsV1   = 23 // and 24, update
	deleteRowsV1  = 25
	writeRowsV2   = 30
	deleteRowsV2  = 32
	partialUpdate = 39 // MySQL 8's PARTIAL_UPDATE_ROWS_EVENT
)

// mysqlUnreadable returns why MariaDB's BINLOG statement cannot apply
// the MySQL rows events of tx ("" if it can): MariaDB 10.11 reads neither
// MySQL's binary JSON columns nor its partial JSON updates (MDEV-39143).
func mysqlUnreadable(tx *txn.Txn) string {
	for _, ch := range tx.Changes {
		rc := ch.Row
		if rc == nil || rc.Event == nil || len(rc.Event.Event) < eventHeaderLen {
			continue
		}
		if i := slices.Index(rc.Table.Types, txn.TypeJSON); i >= 0 {
			return fmt.Sprintf("column %d of %s is MySQL's JSON, whose binary form MariaDB's BINLOG statement cannot read (it fails with Error 1105, as mariadb-binlog | mariadb would); store JSON in a LONGTEXT column on the source", i+1, rc.Table.QualifiedName())
		}
		switch typ := rc.Event.Event[4]; {
		case typ >= writeRowsV1 && typ <= deleteRowsV1, typ >= writeRowsV2 && typ <= deleteRowsV2:
		case typ == partialUpdate:
			return fmt.Sprintf("its update of %s is a MySQL 8 partial JSON update (PARTIAL_UPDATE_ROWS_EVENT, binlog_row_value_options=PARTIAL_JSON on the source), which MariaDB's BINLOG statement cannot read; set binlog_row_value_options='' on the source so that its updates carry whole rows", rc.Table.QualifiedName())
		default:
			return fmt.Sprintf("its rows event of %s is of MySQL event type %d, which MariaDB's BINLOG statement cannot read", rc.Table.QualifiedName(), typ)
		}
	}
	return ""
}

// BinlogStatements returns tx's row changes as BINLOG statements: for
// each source statement, its table maps and rows events, raw, re-encoded
// where the changes kept differ from what the binlog says (a rewritten
// schema; rows events dropped by a filter, which may move the statement
// end flag). Statements inside the transaction (SAVEPOINT) are returned
// as they are, in order. A rows event only partly kept cannot be
// expressed and is an error.
func BinlogStatements(tx *txn.Txn) ([]string, error) {
	if tx.Format == nil {
		return nil, errors.New("no format description event kept for BINLOG")
	}
	f, err := parseFormat(tx.Format)
	if err != nil {
		return nil, err
	}
	var out []string
	var group []*txn.RowChange // the first kept change of each rows event of the statement
	var events []byte          // statements' events for one BINLOG statement
	flush := func() error {
		if len(group) > 0 {
			var err error
			events, err = f.statement(events, group)
			group = group[:0]
			if err != nil {
				return err
			}
		}
		return nil
	}
	// Several statements go in one BINLOG statement (the server applies
	// each up to its end flag), up to maxBatch of text.
	binlogStmt := func() error {
		if err := flush(); err != nil {
			return err
		}
		if len(events) > 0 {
			out = append(out, binlogSQL(events))
			events = events[:0]
		}
		return nil
	}
	var ev *txn.RowsEvent
	seen := 0
	check := func() error {
		if ev != nil && seen != ev.Rows {
			return fmt.Errorf("a rows event of %s is only partly applied (%d of its %d rows): a BINLOG statement cannot carry part of an event", group[len(group)-1].Table.QualifiedName(), seen, ev.Rows)
		}
		return nil
	}
	for _, ch := range tx.Changes {
		if ch.Stmt != nil {
			if err := check(); err != nil {
				return nil, err
			}
			ev = nil
			if err := binlogStmt(); err != nil {
				return nil, err
			}
			out = append(out, ch.Stmt.SQL)
			continue
		}
		rc := ch.Row
		if rc.Event == nil {
			return nil, fmt.Errorf("the binlog reader kept no raw rows event for %s (a MySQL compressed transaction?)", rc.Table.QualifiedName())
		}
		if rc.Event == ev {
			seen++
			continue
		}
		if err := check(); err != nil {
			return nil, err
		}
		if len(group) > 0 && group[0].Event.Statement != rc.Event.Statement {
			if err := flush(); err != nil {
				return nil, err
			}
			if base64.StdEncoding.EncodedLen(len(events)) >= maxBatch {
				if err := binlogStmt(); err != nil {
					return nil, err
				}
			}
		}
		ev, seen = rc.Event, 1
		group = append(group, rc)
	}
	if err := check(); err != nil {
		return nil, err
	}
	if err := binlogStmt(); err != nil {
		return nil, err
	}
	return out, nil
}

// binlogSQL is the BINLOG statement of events. Its text, megabytes for
// a commit unit's rows events, is built in place, not copied into a
// string (as strings.Builder does): q is never written again.
func binlogSQL(events []byte) string {
	q := make([]byte, 0, base64.StdEncoding.EncodedLen(len(events))+len("BINLOG ''"))
	q = append(q, "BINLOG '"...)
	q = base64.StdEncoding.AppendEncode(q, events)
	q = append(q, '\'')
	return unsafe.String(unsafe.SliceData(q), len(q))
}

// format is what re-encoding needs from a format description event.
type format struct {
	postHeader []byte // post-header length per event type - 1
	checksum   bool
}

func parseFormat(f *txn.Format) (*format, error) {
	ev := f.Event
	end := len(ev)
	if f.Checksum {
		end -= 5 // checksum algorithm byte and the CRC32
	}
	if end < eventHeaderLen+fdePostHeaderAt {
		return nil, fmt.Errorf("format description event of %d bytes is too short", len(ev))
	}
	return &format{postHeader: ev[eventHeaderLen+fdePostHeaderAt : end], checksum: f.Checksum}, nil
}

// tableIDLen is the width of the table id in an event's post-header.
func (f *format) tableIDLen(typ byte) int {
	if int(typ) <= len(f.postHeader) && f.postHeader[typ-1] == 6 {
		return 4
	}
	return 6
}

// statement appends one source statement's events to buf: the table
// maps of the group's rows events (each table once), then the rows
// events, the last one flagged as the statement's end.
func (f *format) statement(buf []byte, group []*txn.RowChange) ([]byte, error) {
	mapped := map[string]bool{}
	for _, rc := range group {
		m := rc.Event.Map
		id := string(m[eventHeaderLen : eventHeaderLen+f.tableIDLen(tableMapEvent)])
		if mapped[id] {
			continue
		}
		mapped[id] = true
		m, err := f.renameTableMap(m, rc.Table.Schema, rc.Table.Name)
		if err != nil {
			return buf, err
		}
		buf = append(buf, m...)
	}
	for i, rc := range group {
		ev := rc.Event.Event
		if i == len(group)-1 {
			var err error
			if ev, err = f.stmtEnd(ev); err != nil {
				return buf, err
			}
		}
		buf = append(buf, ev...)
	}
	return buf, nil
}

// renameTableMap returns the table map event m naming schema.name,
// re-encoded when it names another table.
func (f *format) renameTableMap(m []byte, schema, name string) ([]byte, error) {
	at := eventHeaderLen + f.tableIDLen(tableMapEvent) + 2
	end := len(m)
	if f.checksum {
		end -= 4
	}
	bad := fmt.Errorf("table map event for %s.%s is malformed", schema, name)
	if at >= end {
		return nil, bad
	}
	sl := int(m[at])
	if at+1+sl+2 >= end {
		return nil, bad
	}
	oldSchema := m[at+1 : at+1+sl]
	tat := at + 1 + sl + 1
	tl := int(m[tat])
	if tat+1+tl+1 > end {
		return nil, bad
	}
	oldName := m[tat+1 : tat+1+tl]
	if string(oldSchema) == schema && string(oldName) == name {
		return m, nil
	}
	if len(schema) > 255 || len(name) > 255 {
		return nil, fmt.Errorf("name %s.%s too long for a table map event", schema, name)
	}
	out := make([]byte, 0, len(m)+len(schema)+len(name))
	out = append(out, m[:at]...)
	out = append(append(append(out, byte(len(schema))), schema...), 0)
	out = append(append(append(out, byte(len(name))), name...), 0)
	out = append(out, m[tat+1+tl+1:end]...)
	return f.seal(out), nil
}

// stmtEnd returns the rows event ev with its statement end flag set.
func (f *format) stmtEnd(ev []byte) ([]byte, error) {
	at := eventHeaderLen + f.tableIDLen(ev[4])
	if len(ev) < at+2 {
		return nil, errors.New("rows event is malformed")
	}
	flags := binary.LittleEndian.Uint16(ev[at:])
	if flags&rowsFlagStmtEnd != 0 {
		return ev, nil
	}
	end := len(ev)
	if f.checksum {
		end -= 4
	}
	out := bytes.Clone(ev[:end])
	binary.LittleEndian.PutUint16(out[at:], flags|rowsFlagStmtEnd)
	return f.seal(out), nil
}

// seal fixes the length in the header of an event body without checksum
// and appends the checksum when the binlog has them.
func (f *format) seal(ev []byte) []byte {
	n := len(ev)
	if f.checksum {
		n += 4
	}
	binary.LittleEndian.PutUint32(ev[9:], uint32(n))
	if f.checksum {
		ev = binary.LittleEndian.AppendUint32(ev, crc32.ChecksumIEEE(ev))
	}
	return ev
}
