package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/fault"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// maxBatch bounds one round trip's SQL text, well under the server's
// default max_allowed_packet (16 MiB on MariaDB 10.11, 64 MiB on MySQL 8).
const maxBatch = 4 << 20

// Rows are applied in strict mode: a value the target's column cannot
// hold (a narrower column, a missing ENUM member, NULL in NOT NULL) is an
// error, never cut to fit, where MariaDB's replica refuses any column
// whose type differs. ALLOW_INVALID_DATES takes the dates a source with it
// stored. What strict mode refuses that a source or a replica takes goes
// in laxMode (NeedsLax, Batch.setLax): an ENUM's empty error value (index
// 0, from a non-strict session), an insert that leaves a NOT NULL
// column without a default to the type's implicit one, and an insert or
// update of a table whose generated columns the server computes on write
// (writesComputed): strict mode would judge the computed value, which
// the source may have computed with a warning, not the values sent.
const (
	strictMode = "'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION,STRICT_ALL_TABLES,ALLOW_INVALID_DATES'"
	laxMode    = "'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION,ALLOW_INVALID_DATES'"
)

// RowSession is the session rows are applied in. MariaDB's replica
// applies rows events without evaluating CHECK constraints (the source
// evaluated them, or had check_constraint_checks off), so a MariaDB
// target runs with them off (the /*M! comment is MariaDB's alone).
const RowSession = "SET SESSION sql_mode=" + strictMode + ", time_zone='+00:00', " +
	"foreign_key_checks=1, unique_checks=1, autocommit=1, names utf8mb4, innodb_lock_wait_timeout=20 " +
	"/*M!100201 , check_constraint_checks=0 */"

// Conn is one pinned target connection, used by one worker at a time. It
// sends Batches (rendered ahead, see Render) and commits with the position.
type Conn struct {
	t  *Target
	c  *sql.Conn
	id uint64 // CONNECTION_ID() on the target, for lock-wait inspection
	// format is the format description event the session's BINLOG
	// statements read events with (nil: none sent yet).
	format []byte
	// marked: the open transaction's unit writes non-transactional
	// tables and is marked maybe-applied; its commit clears the marker
	// unless keepMarker (the marker covers units after it).
	marked, keepMarker bool
	// maxPacket is the target's max_allowed_packet when connected.
	maxPacket int64
}

// Conn opens a pinned connection with prepl's session settings.
func (t *Target) Conn(ctx context.Context) (apply.Conn, error) { return t.conn(ctx) }

func (t *Target) conn(ctx context.Context) (*Conn, error) {
	c, err := t.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to target %s: %w", t.Endpoint, err)
	}
	if _, err := c.ExecContext(ctx, RowSession); err != nil {
		c.Close()
		return nil, fmt.Errorf("set session on target: %w", err)
	}
	w := &Conn{t: t, c: c}
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID(), @@max_allowed_packet").Scan(&w.id, &w.maxPacket); err != nil {
		c.Close()
		return nil, err
	}
	if t.Galera.On {
		if err := nodeReady(ctx, c); err != nil {
			c.Close()
			return nil, fmt.Errorf("connect to target %s: %w", t.Endpoint, err)
		}
	}
	t.tagConn(ctx, c) // a standby taking over kills it (channel.go)
	return w, nil
}

// ErrTooLarge is wrapped when a statement prepl must send is larger than
// the target's max_allowed_packet: a row whose values, as SQL, are bigger
// than it (a value of 64 KiB or more goes as its own bytes, escaped, about
// its size; AppendLiteral). MariaDB's replica applies the
// row events themselves, within slave_max_allowed_packet (1 GiB); prepl
// sends SQL, so the target must take a packet that big. A restart cannot
// help: the user must raise it (fatal, package fault).
var ErrTooLarge = fault.Fatal(errors.New("statement larger than the target's max_allowed_packet"))

// tooLarge says which transaction needs how big a packet and what to do,
// when err is the driver's refusal to send one over the target's limit.
func (c *Conn) tooLarge(tx *txn.Txn, size int, err error) error {
	if !errors.Is(err, gomysql.ErrPktTooLarge) && ErrorCode(err) != 1153 {
		return err
	}
	want := (int64(size) + 1<<20) &^ (1<<20 - 1) // rounded up to the next MiB
	what := "a unit"
	if tx != nil {
		what = describe(tx)
	}
	return fmt.Errorf("apply %s: a statement of %d bytes (its rows as SQL) is larger than the target's max_allowed_packet, %d: "+
		"raise it on the target (SET GLOBAL max_allowed_packet = %d, and in its configuration; it applies to new connections) and run again: %w: %w",
		what, size, c.maxPacket, want, ErrTooLarge, err)
}

// ID is the connection's CONNECTION_ID() on the target.
func (c *Conn) ID() uint64 { return c.id }

// Close discards the connection (never returned to the pool half-used).
func (c *Conn) Close() {
	discard(c.c)
}

// Send opens a target transaction with b's statements, one round trip per
// chunk, and checks every row statement's affected-row count. The
// transaction stays open for Commit or Rollback.
func (c *Conn) Send(ctx context.Context, ab apply.Batch) error {
	if e, ok := ab.(*EachBatch); ok && len(e.members) == 1 {
		ab = e.members[0] // a caller that does not know ApplyEach (units of one)
	}
	b := ab.(*Batch)
	c.marked, c.keepMarker = false, false
	if len(b.nonTrans) > 0 {
		var err error
		if b, err = c.markNonTransactional(ctx, b); err != nil {
			return err
		}
	}
	for _, ch := range b.chunks {
		if err := c.exec(ctx, ch); err != nil {
			if c.marked && refused(err) {
				c.t.markFailed(ctx, err)
			}
			if !c.marked && ch.binlog == nil && valueRefused(err) {
				return c.sendAsEvents(ctx, b, err)
			}
			return err
		}
	}
	if c.marked {
		CrashPoint("after-nontrans", b.txs[0])
	}
	return nil
}

func (c *Conn) exec(ctx context.Context, ch chunk) error {
	if ch.binlog != nil {
		return c.execBinlog(ctx, ch)
	}
	if ch.xa != nil {
		return c.execXA(ctx, ch.xa)
	}
	if len(ch.sql) == 0 {
		return nil
	}
	q := string(ch.sql[:len(ch.sql)-1])
	var affected []int64
	end := c.t.sends.start(c.id) // a Kill watches it (engine.go)
	err := c.c.Raw(func(dc any) error {
		res, err := dc.(driver.ExecerContext).ExecContext(ctx, q, nil)
		if err != nil {
			if c.compactedRefused(ch, err) {
				return fmt.Errorf("%w: %w", ErrCompacted, err)
			}
			return c.tooLarge(ch.tx(), len(q), err)
		}
		affected = res.(gomysql.Result).AllRowsAffected()
		return nil
	})
	end()
	if err != nil {
		return err
	}
	for i, e := range ch.expect {
		if !e.check || i >= len(affected) {
			continue
		}
		want := max(e.want, 1)
		if e.compacted && affected[i] != want {
			return fmt.Errorf("compacted %s on %s affected %d rows, want %d: %w", e.kind, e.def.QualifiedName(), affected[i], want, ErrCompacted)
		}
		if affected[i] != want {
			return fmt.Errorf("apply %s: %s on %s affected %d rows, want %d: the target has diverged from the source%s: %w; "+
				"repair the row on the target and restart, or skip the transaction with prepl skip (see prepl skip --help)",
				describe(e.tx), e.kind, e.def.QualifiedName(), affected[i], want, divergedRow(e.row, e.def), ErrRowCount)
		}
	}
	return nil
}

// compactedRefused reports whether err is the server refusing a chunk
// that holds a compacted statement: the caller then rolls back and
// applies the unit again in source order, and stops only if that fails
// too. A duplicate key (1062) can be the compacted form's own (a key the
// unit frees later); any other refusal can be too (a form the table does
// not take: MariaDB refuses INSERT ... ON DUPLICATE KEY UPDATE on a key
// WITHOUT OVERLAPS, error 1235), so every server error counts but those
// a retry or a reconnect handles. Only 1062 when the unit writes tables
// that are not transactional on the target (c.marked): what a refused
// statement did to them stays after the rollback.
func (c *Conn) compactedRefused(ch chunk, err error) bool {
	if !ch.compacted && !slices.ContainsFunc(ch.expect, func(e rowExpect) bool { return e.compacted }) {
		return false
	}
	var me *gomysql.MySQLError
	if !errors.As(err, &me) || Classify(err) != Fatal {
		return false
	}
	return me.Number == 1062 || !c.marked
}

// execBinlog sends a chunk of BINLOG statements, after the source's
// format description event if the session has not read it yet.
func (c *Conn) execBinlog(ctx context.Context, ch chunk) error {
	tx := ch.binlog
	if f := tx.Format.Event; !bytes.Equal(f, c.format) {
		c.format = nil
		q := "BINLOG '" + base64.StdEncoding.EncodeToString(f) + "'"
		if _, err := c.execRaw(ctx, q); err != nil {
			return binlogErr(tx, "its format description event", err)
		}
		c.format = f
	}
	// One statement per round trip: MariaDB 10.11 answers a BINLOG
	// statement followed by another in one multi-statement query out of
	// protocol sync ("commands out of sync", "busy buffer").
	for _, q := range ch.each {
		if _, err := c.execRaw(ctx, q); err != nil {
			if c.compactedRefused(ch, err) {
				return fmt.Errorf("compacted rows events of %s: %w: %w", describe(tx), ErrCompacted, err)
			}
			return binlogErr(tx, "its row events", err)
		}
	}
	return nil
}

// execRaw sends q (one or more statements) and returns each statement's
// affected rows.
func (c *Conn) execRaw(ctx context.Context, q string) (affected []int64, err error) {
	err = c.c.Raw(func(dc any) error {
		res, err := dc.(driver.ExecerContext).ExecContext(ctx, q, nil)
		if err != nil {
			return err
		}
		affected = res.(gomysql.Result).AllRowsAffected()
		return nil
	})
	return affected, err
}

// binlogErr names the transaction whose BINLOG statement failed and what
// to do about it.
func binlogErr(tx *txn.Txn, what string, err error) error {
	switch ErrorCode(err) {
	case 1227, 1044, 1045, 1142:
		return fmt.Errorf("apply %s: the target refused the BINLOG statement for %s: grant the target user BINLOG REPLAY (MariaDB 10.5.2 and later; SUPER before; BINLOG_ADMIN on MySQL): rows of tables with triggers on the target are applied with it so that the triggers do not fire (%w): %w",
			describe(tx), what, ErrBinlogPrivilege, err)
	case 1032, 1062:
		return fmt.Errorf("apply %s: BINLOG statement for %s failed: the target has diverged from the source: %w: %w", describe(tx), what, ErrRowCount, err)
	}
	if ErrorCode(err) == 1153 || errors.Is(err, gomysql.ErrPktTooLarge) {
		return fmt.Errorf("apply %s: BINLOG statement for %s is larger than the target's max_allowed_packet (one source statement's row events go in one BINLOG statement): raise max_allowed_packet on the target: %w: %w", describe(tx), what, ErrTooLarge, err)
	}
	return fmt.Errorf("apply %s: BINLOG statement for %s failed: %w", describe(tx), what, err)
}

// Commit stores p in the position table and commits the transaction Send
// opened; the rows were checked before, so a surprise never follows COMMIT.
func (c *Conn) Commit(ctx context.Context, p position.Checkpoint) error {
	if c.marked && c.t.keepGTID {
		return c.commitUnlogged(ctx, p)
	}
	var ch chunk
	ch.stmt(c.t.positionSQL(p), rowExpect{})
	if c.marked && !c.keepMarker {
		ch.stmt(c.t.clearMarkerSQL(), rowExpect{})
	}
	ch.stmt("COMMIT", rowExpect{})
	c.marked, c.keepMarker = false, false
	return c.t.fenced(c.exec(ctx, ch))
}

// Rollback abandons the open transaction. A marker of its unit stays: its
// non-transactional writes may have taken effect. The session gets its
// settings back: a batch stopped part-way may have left checks off or
// the lax sql_mode (Batch.setFlags, Batch.setLax) for the next one.
func (c *Conn) Rollback(ctx context.Context) error {
	c.marked, c.keepMarker = false, false
	if _, err := c.c.ExecContext(ctx, "ROLLBACK"); err != nil {
		return err
	}
	_, err := c.c.ExecContext(ctx, RowSession)
	return err
}

// KeepGTIDSQL returns the statement that makes the next target
// transaction carry tx's GTID (MariaDB), or "" when it cannot.
func KeepGTIDSQL(tx *txn.Txn) string {
	if tx.GTID == "" || strings.Contains(tx.GTID, ":") {
		return ""
	}
	return fmt.Sprintf("SET SESSION gtid_domain_id=%d, server_id=%d, gtid_seq_no=%d", tx.Domain, tx.ServerID, tx.SeqNo)
}

// Resolutions of a pending DDL, the user's word on it (--pending-ddl).
const (
	DDLApplied    = apply.DDLApplied
	DDLNotApplied = apply.DDLNotApplied
)

// PendingDDLError says that prepl cannot tell whether an interrupted DDL
// took effect, and how to tell it. A restart cannot help.
type PendingDDLError struct {
	ID, SQL, Why string
}

// Fatal: only the user can answer (package fault).
func (e *PendingDDLError) Fatal() bool { return true }

func (e *PendingDDLError) Error() string {
	return fmt.Sprintf("DDL %s (%q) was interrupted by a crash and prepl cannot tell whether it took effect on the target: %s. "+
		"Look at the target; then run again with --pending-ddl '%s=%s' if it took effect, or --pending-ddl '%s=%s' if it did not",
		e.ID, truncate(e.SQL, 200), e.Why, e.ID, DDLApplied, e.ID, DDLNotApplied)
}

// ErrDDLWithRowsKeepGTID is wrapped when a CREATE TABLE ... SELECT meets
// --keep-gtid: its CREATE TABLE commits by itself on the target, so its
// rows cannot share the source's GTID.
var ErrDDLWithRowsKeepGTID = fault.Fatal(errors.New("a CREATE TABLE ... SELECT cannot keep its source GTID on the target (its CREATE TABLE commits by itself)"))

// ApplyDDL runs a DDL transaction exactly once across crashes; it reports
// whether it ran the DDL (false: a crash had interrupted it after it took
// effect, so it was not run again).
//
// The position first records the DDL as pending with the state of the
// catalog it can change (ddlState), then the DDL runs with its source
// session state on a connection of its own, then the position moves past
// it: with the rows the DDL's transaction also holds (CREATE TABLE ...
// SELECT) in one target transaction, else alone.
//
// When the stored position of before.Slot already marks this DDL as
// pending (a crash, or a lost connection, interrupted an earlier attempt),
// it is run again only if it did not take effect: resolve, the user's
// word (DDLApplied, DDLNotApplied), or else the catalog's state.
func (t *Target) ApplyDDL(ctx context.Context, tx *txn.Txn, before, after position.Checkpoint, resolve string) (ran bool, err error) {
	keepGTID := t.keepGTID
	st := tx.Changes[0].Stmt
	if keepGTID && len(tx.Changes) > 1 {
		return false, fmt.Errorf("DDL %s: %w; run without --keep-gtid, or skip it with --skip-gtid and create the table by hand", describe(tx), ErrDDLWithRowsKeepGTID)
	}
	c, err := t.DB.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer discard(c)
	// With kept GTIDs the target's binlog must hold exactly the source's
	// transactions: the position writes around a DDL stay out of it.
	storePos := func(p position.Checkpoint, when string) error {
		if err := t.fenced(t.execUnlogged(ctx, c, t.positionSQL(p))); err != nil {
			return fmt.Errorf("store position %s DDL %s: %w", when, describe(tx), err)
		}
		return nil
	}
	stored, err := t.slotPosition(ctx, c, before.Slot)
	if err != nil {
		return false, err
	}
	run := true
	if stored.PendingDDL == TxnID(tx) {
		if run, err = t.rerunDDL(ctx, c, tx, stored.PendingState, resolve); err != nil {
			return false, err
		}
	} else {
		state, err := ddlState(ctx, c, st.SQL, st.Schema, false)
		if err != nil {
			return false, fmt.Errorf("DDL %s: %w", describe(tx), err)
		}
		before.PendingDDL, before.PendingState = TxnID(tx), state
		if err := storePos(before, "before"); err != nil {
			return false, err
		}
	}
	CrashPoint("before-ddl", tx)
	if run {
		// A DDL is not in a transaction the fence can roll back: the
		// channel is checked just before it (channel.go).
		if err := t.checkEpoch(ctx, c); err != nil {
			return false, fmt.Errorf("DDL %s not run: %w", describe(tx), err)
		}
		if err := t.execDDL(ctx, c, tx, keepGTID); err != nil {
			return false, err
		}
	}
	CrashPoint("after-ddl", tx)
	t.Catalog.ForgetDDL(st.SQL, st.Schema)
	if scopeOf(st.SQL) == scopeEvents {
		if err := t.disableEvent(ctx, c, st.SQL, st.Schema, keepGTID); err != nil {
			return false, fmt.Errorf("DDL %s: %w", describe(tx), err)
		}
	}
	if len(tx.Changes) == 1 {
		return run, storePos(after, "after")
	}
	return run, t.applyDDLRows(ctx, tx, after)
}

// rerunDDL decides whether an interrupted DDL must run again: the user's
// word, else whether the catalog still has the state stored before it.
func (t *Target) rerunDDL(ctx context.Context, c *sql.Conn, tx *txn.Txn, state, resolve string) (bool, error) {
	st := tx.Changes[0].Stmt
	switch resolve {
	case DDLApplied:
		return false, nil
	case DDLNotApplied:
		return true, nil
	}
	ask := func(why string) error { return &PendingDDLError{ID: TxnID(tx), SQL: st.SQL, Why: why} }
	if !atomicDDL(t.Version, t.IsMariaDB) {
		return false, ask(fmt.Sprintf("the target (%s) has no atomic DDL, so the DDL may have taken effect in part", t.Version))
	}
	if state == "" {
		return false, ask("the position was stored by an older prepl, without the catalog's state before the DDL")
	}
	// A client killed mid-DDL leaves the server running it to the end: the
	// catalog tells only once that session is done.
	if err := t.waitForDDLSession(ctx, c, st.SQL); err != nil {
		return false, ask(err.Error())
	}
	cur, err := ddlState(ctx, c, st.SQL, st.Schema, !strings.HasPrefix(state, partMark))
	if err != nil {
		return false, ask(err.Error())
	}
	if strings.HasPrefix(cur, partMark) != strings.HasPrefix(state, partMark) {
		return false, ask("the catalog's state before it was stored by a prepl that reads another part of the catalog for this statement")
	}
	if cur == state && strings.HasSuffix(state, noTableIDs) && swapsTables(st.SQL) {
		return false, ask("it may swap tables, and without the PROCESS privilege prepl cannot read the InnoDB table ids that tell a swap from none (GRANT PROCESS ON *.* to prepl's target user)")
	}
	return cur == state, nil
}

// waitForDDLSession waits until no other session on the target runs the
// statement stmt: a DDL an earlier prepl started before it was killed.
func (t *Target) waitForDDLSession(ctx context.Context, c *sql.Conn, stmt string) error {
	logged := false
	for {
		var id sql.NullInt64
		err := c.QueryRowContext(ctx, `SELECT MIN(ID) FROM information_schema.PROCESSLIST
			WHERE INFO = ? AND ID <> CONNECTION_ID()`, stmt).Scan(&id)
		if err != nil {
			return fmt.Errorf("look for a session still running the DDL (information_schema.PROCESSLIST): %w", err)
		}
		if !id.Valid {
			return nil
		}
		if !logged && t.log != nil {
			t.log.Warn("an interrupted DDL is still running on the target: waiting for it to end before deciding whether it took effect",
				"connection", id.Int64, "sql", truncate(stmt, 200))
			logged = true
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// DDLSession is the SET SESSION statement that gives a DDL the source
// session it ran in, as MariaDB's replica restores it from the Query
// event: sql_mode, time zone, character sets, checks (of foreign keys,
// unique keys and, on MariaDB, CHECK constraints), the statement's
// time, explicit_defaults_for_timestamp, the auto-increment step and
// lc_time_names. A MariaDB target (mariadb) also keeps system-versioned
// history through ALTERs. The time, step and locale stay set on the
// session: run DDLSessionReset before using it for anything else.
//
// charsets maps the target's collation ids to their character sets
// (Target.Charsets); nil when there is no target to ask.
func DDLSession(st *txn.Statement, mariadb bool, charsets map[uint16]string) string {
	set := []string{"time_zone='+00:00'", "sql_mode='NO_ENGINE_SUBSTITUTION'"}
	if st.HasSQLMode {
		set = append(set, "sql_mode="+strconv.FormatUint(st.SQLMode, 10))
	}
	if st.TimeZone != "" {
		set = append(set, "time_zone="+QuoteString(st.TimeZone))
	}
	if st.CharsetClient != 0 {
		set = append(set, sessionCharsets(st, charsets)...)
	}
	set = append(set, "foreign_key_checks="+boolInt(st.ForeignKeyChecks), "unique_checks="+boolInt(st.UniqueChecks))
	if st.UnixMicro > 0 {
		set = append(set, fmt.Sprintf("timestamp=%d.%06d", st.UnixMicro/1e6, st.UnixMicro%1e6))
	}
	if st.HasExplicitDefaults {
		set = append(set, "explicit_defaults_for_timestamp="+boolInt(st.ExplicitDefaultsForTimestamp))
	}
	if st.AutoIncrementIncrement > 0 && st.AutoIncrementOffset > 0 {
		set = append(set, fmt.Sprintf("auto_increment_increment=%d, auto_increment_offset=%d",
			st.AutoIncrementIncrement, st.AutoIncrementOffset))
	}
	if st.LCTimeNames != 0 {
		set = append(set, fmt.Sprintf("lc_time_names=%d", st.LCTimeNames))
	}
	if mariadb {
		// The Query event does not carry it; the replica's SQL thread
		// applies ALTERs of system-versioned tables, keeping their history.
		set = append(set, "system_versioning_alter_history=KEEP", "check_constraint_checks="+boolInt(st.CheckConstraintChecks))
	}
	return "SET SESSION " + strings.Join(set, ", ")
}

// sessionCharsets sets the three character set variables of a Query
// event, which carries them as collation ids, as the replica does:
// character_set_client takes only the id of a character set's default
// collation (SET character_set_client=46 fails with "Unknown character
// set" after SET NAMES utf8mb4 COLLATE utf8mb4_bin), so it is set by the
// name of the id's character set, as mariadb-binlog prints it; the two
// collations take any id. An id the target does not know (MySQL 8's
// utf8mb4_0900_ai_ci on MariaDB) is set as its character set's default
// collation there, where MariaDB's replica would stop; an id whose
// character set prepl does not know either goes as a number, for the
// target to refuse.
func sessionCharsets(st *txn.Statement, charsets map[uint16]string) []string {
	charset := func(id uint16) string {
		if cs, ok := charsets[id]; ok {
			return cs
		}
		return txn.CharsetOfCollation(uint64(id))
	}
	var set []string
	if cs := charset(st.CharsetClient); cs != "" {
		set = append(set, "character_set_client="+QuoteString(cs))
	} else {
		set = append(set, fmt.Sprintf("character_set_client=%d", st.CharsetClient))
	}
	collation := func(name, charsetVar string, id uint16) string {
		if _, known := charsets[id]; !known && charsets != nil {
			if cs := charset(id); cs != "" {
				return charsetVar + "=" + QuoteString(cs)
			}
		}
		return fmt.Sprintf("%s=%d", name, id)
	}
	return append(set, collation("collation_connection", "character_set_connection", st.CollationConn),
		collation("collation_server", "character_set_server", st.CollationServer))
}

// UnknownCollations lists the collations of st's session (connection
// and server: of the client's only its character set counts) that the
// target (charsets, from Target.Charsets) does not know, which
// DDLSession replaces by their character set's default collation.
func UnknownCollations(st *txn.Statement, charsets map[uint16]string) []uint16 {
	var ids []uint16
	if st.CharsetClient == 0 || charsets == nil {
		return nil
	}
	for _, id := range []uint16{st.CollationConn, st.CollationServer} {
		if _, ok := charsets[id]; !ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// DDLSessionReset gives a session its own time, auto-increment step and
// locale back after DDLSession.
const DDLSessionReset = "SET SESSION timestamp=DEFAULT, auto_increment_increment=DEFAULT, auto_increment_offset=DEFAULT, " +
	"lc_time_names=DEFAULT"

// execDDL runs the DDL statement with its source session state
// (DDLSession), then gives the session back its own time for the
// position writes that follow.
func (t *Target) execDDL(ctx context.Context, c *sql.Conn, tx *txn.Txn, keepGTID bool) error {
	st := tx.Changes[0].Stmt
	set, use := t.ddlSession(tx, keepGTID)
	if ids := UnknownCollations(st, t.Charsets); len(ids) > 0 && t.log != nil {
		t.log.Warn("the DDL's session has collations the target does not know: it runs with their character set's default collation",
			"gtid", TxnID(tx), "collation_ids", ids)
	}
	if _, err := c.ExecContext(ctx, set); err != nil {
		return fmt.Errorf("set session for DDL %s: %w", describe(tx), err)
	}
	noDB := false
	if use != "" {
		// The replica's SQL thread sets the default database without checking
		// it exists (CREATE DATABASE is logged with itself as default).
		if _, err := c.ExecContext(ctx, use); err != nil {
			if ErrorCode(err) != 1049 {
				return fmt.Errorf("DDL %s: USE %s: %w", describe(tx), st.Schema, err)
			}
			noDB = true
		}
	}
	if err := ddlBeforeRun(tx, st); err != nil {
		return err
	}
	_, err := c.ExecContext(ctx, st.SQL)
	if ErrorCode(err) == 1050 && st.ErrorCode == 0 && t.IsMariaDB { // MySQL has no CREATE OR REPLACE TABLE
		if q, ok := orReplace(st.SQL); ok {
			if t.log != nil {
				t.log.Warn("the DDL creates a table the target has and the source had not: replacing it, as MariaDB's replica does (slave_ddl_exec_mode=IDEMPOTENT)",
					"gtid", TxnID(tx), "err", err)
			}
			_, err = c.ExecContext(ctx, q)
		}
	}
	if err := ddlOutcome(tx, st, err); err != nil {
		if noDB {
			// An unqualified name's error then says little of the cause.
			return fmt.Errorf("%w (the DDL's default database %s does not exist on the target; MariaDB's replica stops here too: create it on the target)",
				err, QuoteIdent(st.Schema))
		}
		return err
	}
	if err != nil && t.log != nil {
		t.log.Warn("the DDL failed on the target as the source logged it did (or a DROP of names that do not exist, which MariaDB's replica takes as IF EXISTS): going on, as the replica does",
			"gtid", TxnID(tx), "source_error", st.ErrorCode, "err", err)
	}
	if _, err := c.ExecContext(ctx, DDLSessionReset); err != nil {
		return fmt.Errorf("after DDL %s: %w", describe(tx), err)
	}
	return nil
}

// ddlSession is what execDDL sends before tx's DDL: the session it ran
// in on the source (DDLSession), with its GTID when kept, and the USE of
// its default database ("" for none).
func (t *Target) ddlSession(tx *txn.Txn, keepGTID bool) (set, use string) {
	st := tx.Changes[0].Stmt
	set = DDLSession(st, t.IsMariaDB, t.Charsets)
	if keepGTID {
		if q := KeepGTIDSQL(tx); q != "" {
			set += ", " + strings.TrimPrefix(q, "SET SESSION ")
		}
	}
	if st.Schema != "" {
		use = "USE " + QuoteIdent(st.Schema)
	}
	return set, use
}

// applyDDLRows applies the rows of a DDL's transaction (CREATE TABLE ...
// SELECT) once the DDL has run, in one target transaction with the
// position after it.
func (t *Target) applyDDLRows(ctx context.Context, tx *txn.Txn, after position.Checkpoint) error {
	b, err := t.renderDDLRows(ctx, tx)
	if err != nil {
		return err
	}
	w, err := t.conn(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Send(ctx, b); err != nil {
		return fmt.Errorf("rows of DDL %s: %w", describe(tx), err)
	}
	return w.Commit(ctx, after)
}

// renderDDLRows renders the rows of a DDL's transaction, in source order.
func (t *Target) renderDDLRows(ctx context.Context, tx *txn.Txn) (*Batch, error) {
	rows := *tx
	rows.Changes = tx.Changes[1:]
	if err := t.Catalog.Redecode(ctx, &rows); err != nil {
		return nil, fmt.Errorf("rows of DDL %s: %w", describe(tx), err)
	}
	return t.render(ctx, []*txn.Txn{&rows}, nil, false, false)
}

// testCrash ("POINT:ID", from the environment variable PREPL_TEST_CRASH)
// makes the process kill itself at a named point of applying transaction
// ID (around a DDL, after a skip is marked): the crash windows there are
// narrow, and tests must hit each of them for sure, not by luck of a
// random kill -9.
var testCrash = os.Getenv("PREPL_TEST_CRASH")

// CrashPoint kills the process at point for transaction tx when
// PREPL_TEST_CRASH names them (tests only).
func CrashPoint(point string, tx *txn.Txn) {
	if testCrash != "" && testCrash == point+":"+TxnID(tx) {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

// TxnID names a transaction stably across runs: its GTID, else its
// starting file:offset.
func TxnID(tx *txn.Txn) string { return tx.ID() }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
