package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/fault"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// PositionSchema holds prepl's position table on the target.
const PositionSchema = "prepl"

// Target is one MySQL/MariaDB target: a pool for the catalog and position
// reads, and pinned connections for workers.
type Target struct {
	Endpoint  Endpoint
	DB        *sql.DB
	Catalog   *Catalog
	Channel   string // names this stream's rows in the position table
	Version   string
	IsMariaDB bool
	Galera    Galera // the target's cluster, read at Open (galera.go)
	unlogged  bool
	keepGTID  bool          // see KeepGTIDs
	decodeXA  EventDecoder  // see XADecoder
	reconnect time.Duration // see Reconnect
	log       *slog.Logger
	resolve   apply.ResolveDDL // see ResolvePending
	readOnly  bool             // see ReadOnly
	// calibrating: see Calibrating.
	calibrating bool
	sqlRows     bool // see SQLRows
	// rowEvents: compacted inserts and updates go as rows events
	// (rowevents.go), decided at Open.
	rowEvents bool
	slots     knownSlots // position rows known to exist (keepgtid.go)
	// epoch is the channel's epoch this process claimed (0: not claimed;
	// then position writes check none), tags hands out the connection
	// tags (channel.go).
	epoch, tags atomic.Uint64
	sends       sendTracker // round trips in flight, for Kill

	// Charsets maps the id of each collation the target knows to its
	// character set's name (information_schema.COLLATIONS), read at Open.
	Charsets map[uint16]string
}

// Option changes how Open prepares the target.
type Option func(*Target)

// Unlogged keeps prepl's own setup (the position schema and table) out of
// the target's binlog, so that a target whose binlog must hold only the
// source's transactions (--keep-gtid, a failover candidate) gets no
// transaction of its own. It needs the privilege to set sql_log_bin.
func Unlogged() Option { return func(t *Target) { t.unlogged = true } }

// SQLRows sends a commit unit's compacted rows as SQL even where rows
// events (BINLOG statements, rowevents.go) would cost the target less.
func SQLRows() Option { return func(t *Target) { t.sqlRows = true } }

// RowEvents reports whether compacted inserts and updates go to the
// target as rows events in BINLOG statements (rowevents.go).
func (t *Target) RowEvents() bool { return t.rowEvents }

// ReadOnly opens the target for reading positions only (prepl status): it
// creates nothing, and a target without prepl's tables has no position.
func ReadOnly() Option { return func(t *Target) { t.readOnly = true } }

// Calibrating opens the target as the engine does, deciding what it
// renders (rows events included), but like ReadOnly creates nothing:
// prepl analyze --calibrate times the binlog's units as the engine would
// send them.
func Calibrating() Option { return func(t *Target) { t.readOnly, t.calibrating = true, true } }

// Open connects to the target and creates the position table if missing
// (unless ReadOnly).
func Open(ctx context.Context, e Endpoint, channel string, opts ...Option) (*Target, error) {
	db, err := e.OpenDB()
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(4)
	t := &Target{Endpoint: e, DB: db, Catalog: NewCatalog(db), Channel: channel}
	for _, o := range opts {
		o(t)
	}
	err = t.Retry(ctx, "connect to target", func() error {
		if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&t.Version); err != nil {
			return fmt.Errorf("connect to target %s: %w", e, err)
		}
		t.IsMariaDB = strings.Contains(strings.ToLower(t.Version), "mariadb")
		cs, err := readCharsets(ctx, db)
		if err != nil {
			return err
		}
		t.Charsets = cs
		if t.Galera, err = readGalera(ctx, db); err != nil {
			return err
		}
		if t.readOnly && !t.calibrating {
			return nil
		}
		t.useRowEvents(ctx)
		if t.readOnly {
			return nil
		}
		return t.ensurePositionTable(ctx)
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return t, nil
}

// readCharsets reads the character set of every collation id the server
// knows: from information_schema.COLLATIONS, and on MariaDB 10.10 and
// later from COLLATION_CHARACTER_SET_APPLICABILITY too, the only list of
// the UCA 14 collations' ids (utf8mb4_uca1400_ai_ci is 2304).
func readCharsets(ctx context.Context, db *sql.DB) (map[uint16]string, error) {
	m := map[uint16]string{}
	read := func(q string) error {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id uint16
			var cs string
			if err := rows.Scan(&id, &cs); err != nil {
				return err
			}
			m[id] = cs
		}
		return rows.Err()
	}
	if err := read("SELECT ID, CHARACTER_SET_NAME FROM information_schema.COLLATIONS WHERE ID IS NOT NULL"); err != nil {
		return nil, fmt.Errorf("read the target's collations (information_schema.COLLATIONS): %w", err)
	}
	err := read("SELECT ID, CHARACTER_SET_NAME FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY WHERE ID IS NOT NULL")
	if err != nil && ErrorCode(err) != 1054 { // no column ID: MySQL, MariaDB before 10.10
		return nil, fmt.Errorf("read the target's collations (information_schema.COLLATION_CHARACTER_SET_APPLICABILITY): %w", err)
	}
	return m, nil
}

// Close releases the pool.
func (t *Target) Close() error { return t.DB.Close() }

func (t *Target) ensurePositionTable(ctx context.Context) error {
	c, err := t.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect to target %s: %w", t.Endpoint, err)
	}
	defer discard(c)
	if t.unlogged {
		if _, err := c.ExecContext(ctx, "SET SESSION sql_log_bin=0"); err != nil {
			return fmt.Errorf("keep prepl's setup out of the target's binlog (SET sql_log_bin=0 needs SUPER or BINLOG ADMIN): %w", err)
		}
	}
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS " + PositionSchema,
		`CREATE TABLE IF NOT EXISTS ` + PositionSchema + `.position (
			channel VARCHAR(64) NOT NULL,
			slot VARCHAR(128) NOT NULL,
			gtid_pos TEXT NOT NULL,
			file VARCHAR(512) NOT NULL,
			pos BIGINT UNSIGNED NOT NULL,
			last_gtid VARCHAR(128) NOT NULL,
			source_ts DATETIME(6) NULL COMMENT 'UTC',
			pending_ddl VARCHAR(128) NOT NULL DEFAULT '',
			pending_state VARCHAR(64) NOT NULL DEFAULT '',
			applied BIGINT UNSIGNED NOT NULL DEFAULT 0,
			floor_gtid TEXT NOT NULL,
			floor_file VARCHAR(512) NOT NULL DEFAULT '',
			floor_pos BIGINT UNSIGNED NOT NULL DEFAULT 0,
			updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
			channel_epoch BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'the epoch of prepl.channel that wrote it',
			PRIMARY KEY (channel, slot)
		) ENGINE=InnoDB COMMENT='prepl: applied position, written in the same transaction as the rows'`,
		xaTableSQL, // written inside units, where a CREATE TABLE would commit them
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create position tables %s.position and %s on target: %w", PositionSchema, xaTable, err)
		}
	}
	// Tables made by earlier builds lack the floor and have a narrower slot.
	// Tables made before 2026-11 lack the pending DDL's state and hold
	// source_ts in a TIMESTAMP, which the session's time zone shifts (a
	// DDL's position is stored in the source's session) and which cannot
	// hold every time a binlog carries (1234 written in +03:00 is before
	// its range, Error 1292).
	// Tables made before 2026-11-28 lack the epoch (channel.go).
	var floors, states, slotLen, timestamps, epochs int
	c.QueryRowContext(ctx, `SELECT SUM(column_name = 'floor_gtid'), SUM(column_name = 'pending_state'),
		MAX(IF(column_name = 'slot', character_maximum_length, 0)), SUM(column_name = 'source_ts' AND data_type = 'timestamp'),
		SUM(column_name = 'channel_epoch')
		FROM information_schema.columns WHERE table_schema = ? AND table_name = 'position'`, PositionSchema).Scan(&floors, &states, &slotLen, &timestamps, &epochs)
	var upgrade []string
	if floors == 0 {
		upgrade = append(upgrade, "ADD COLUMN floor_gtid TEXT NOT NULL, ADD COLUMN floor_file VARCHAR(512) NOT NULL DEFAULT '', ADD COLUMN floor_pos BIGINT UNSIGNED NOT NULL DEFAULT 0")
	}
	if states == 0 {
		upgrade = append(upgrade, "ADD COLUMN pending_state VARCHAR(64) NOT NULL DEFAULT '' AFTER pending_ddl")
	}
	if slotLen < 128 {
		upgrade = append(upgrade, "MODIFY slot VARCHAR(128) NOT NULL")
	}
	if timestamps > 0 {
		// The session's time zone is UTC (Endpoint.config): the stored
		// times convert to UTC DATETIMEs.
		upgrade = append(upgrade, "MODIFY source_ts DATETIME(6) NULL COMMENT 'UTC'")
	}
	if epochs == 0 {
		upgrade = append(upgrade, "ADD COLUMN channel_epoch BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'the epoch of prepl.channel that wrote it'")
	}
	if len(upgrade) > 0 {
		if _, err := c.ExecContext(ctx, "ALTER TABLE "+PositionSchema+".position "+strings.Join(upgrade, ", ")); err != nil {
			return fmt.Errorf("upgrade position table %s.position on target: %w", PositionSchema, err)
		}
	}
	return nil
}

const positionColumns = `slot, gtid_pos, file, pos, last_gtid, source_ts, pending_ddl, pending_state, applied,
		floor_gtid, floor_file, floor_pos`

// Positions returns the stored positions of this channel, by slot.
func (t *Target) Positions(ctx context.Context) (map[string]position.Checkpoint, error) {
	return t.ChannelPositions(ctx, t.Channel)
}

// slotPosition returns the stored position of one slot (zero when none).
func (t *Target) slotPosition(ctx context.Context, c *sql.Conn, slot string) (position.Checkpoint, error) {
	rows, err := c.QueryContext(ctx, `SELECT `+positionColumns+` FROM `+PositionSchema+`.position WHERE channel = ? AND slot = ?`, t.Channel, slot)
	if err != nil {
		return position.Checkpoint{}, fmt.Errorf("read position: %w", err)
	}
	ps, err := scanPositions(rows)
	return ps[slot], err
}

func scanPositions(rows *sql.Rows) (map[string]position.Checkpoint, error) {
	defer rows.Close()
	out := map[string]position.Checkpoint{}
	for rows.Next() {
		var p position.Checkpoint
		var ts sql.NullTime
		if err := rows.Scan(&p.Slot, &p.GTIDPos, &p.File, &p.Pos, &p.LastGTID, &ts, &p.PendingDDL, &p.PendingState, &p.Applied,
			&p.Floor.GTIDPos, &p.Floor.File, &p.Floor.Pos); err != nil {
			return nil, err
		}
		p.SourceTS = ts.Time
		out[p.Slot] = p
	}
	return out, rows.Err()
}

// execUnlogged runs q by itself on c; with kept GTIDs, outside the
// target's binlog, which must hold only the source's transactions.
func (t *Target) execUnlogged(ctx context.Context, c *sql.Conn, q string) error {
	if !t.keepGTID {
		_, err := c.ExecContext(ctx, q)
		return err
	}
	_, err := c.ExecContext(ctx, "SET SESSION sql_log_bin=0; "+q+"; SET SESSION sql_log_bin=1")
	if err != nil {
		// A failed statement ends the multi-statement: the session must
		// not go on unlogged (c is a worker's, its units come next).
		if _, rerr := c.ExecContext(ctx, "SET SESSION sql_log_bin=1"); rerr != nil {
			return fmt.Errorf("%w (and the session's binlog could not be turned back on: %v)", err, rerr)
		}
	}
	return err
}

// discard closes c without returning it to the pool: a session changed
// (sql_log_bin=0, a named lock, a transaction half done) never serves
// another caller.
func discard(c *sql.Conn) {
	c.Raw(func(any) error { return driver.ErrBadConn })
	c.Close()
}

// NoPositionTable reports whether err says prepl's schema or position
// table does not exist (errors 1049, 1146).
func NoPositionTable(err error) bool {
	c := ErrorCode(err)
	return c == 1049 || c == 1146
}

// ResetPositions deletes this channel's positions, and the prepared XA
// transactions and the maybe-applied marker stored with them.
func (t *Target) ResetPositions(ctx context.Context) error {
	t.slots.reset()
	for _, table := range []string{PositionSchema + ".position", xaTable, maybeAppliedTable} {
		if _, err := t.DB.ExecContext(ctx, "DELETE FROM "+table+" WHERE channel = ?", t.Channel); err != nil && !NoPositionTable(err) {
			return err
		}
	}
	return nil
}

// createTable runs the CREATE TABLE IF NOT EXISTS q of one of prepl's
// tables made when first written (prepl.skip, prepl.maybe_applied: each
// CREATE costs a fresh target 20-30 ms that most runs never need), out of
// the target's binlog where prepl's setup stays out of it.
func (t *Target) createTable(ctx context.Context, q string) error {
	c, err := t.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer discard(c)
	if t.unlogged || t.keepGTID {
		q = "SET SESSION sql_log_bin=0; " + q
	}
	if _, err := c.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("create %s's table on target: %w", PositionSchema, err)
	}
	return nil
}

// positionSQL is the statement that stores p; it runs inside the
// transaction whose rows it covers, or after a DDL in the DDL's session:
// source_ts is a DATETIME in UTC, which no session time zone shifts.
func (t *Target) positionSQL(p position.Checkpoint) string {
	return t.positionInsert(p, strconv.FormatUint(uint64(p.Pos), 10))
}

// positionInsert is positionSQL with pos, the value of column pos, as an
// SQL expression.
func (t *Target) positionInsert(p position.Checkpoint, pos string) string {
	ts := "NULL"
	if !p.SourceTS.IsZero() {
		ts = QuoteString(p.SourceTS.UTC().Format("2006-01-02 15:04:05.000000"))
	}
	// The fence (channel.go): the epoch read under a shared lock, NULL
	// (refused) when another prepl claimed the channel since.
	epochCol, epochVal, epochSet := "", "", ""
	if f := t.fenceExpr(); f != "" {
		epochCol, epochVal, epochSet = ", channel_epoch", ", "+f, ", channel_epoch=VALUES(channel_epoch)"
	}
	return fmt.Sprintf(`INSERT INTO %s.position (channel, slot, gtid_pos, file, pos, last_gtid, source_ts, pending_ddl, pending_state, applied,
floor_gtid, floor_file, floor_pos%s)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %d, %s, %s, %d%s) ON DUPLICATE KEY UPDATE gtid_pos=VALUES(gtid_pos), file=VALUES(file),
pos=VALUES(pos), last_gtid=VALUES(last_gtid), source_ts=VALUES(source_ts), pending_ddl=VALUES(pending_ddl), pending_state=VALUES(pending_state),
applied=VALUES(applied), floor_gtid=VALUES(floor_gtid), floor_file=VALUES(floor_file), floor_pos=VALUES(floor_pos),
updated_at=CURRENT_TIMESTAMP(6)%s`, PositionSchema, epochCol,
		QuoteString(t.Channel), QuoteString(p.Slot), QuoteString(p.GTIDPos), QuoteString(p.File), pos,
		QuoteString(p.LastGTID), ts, QuoteString(p.PendingDDL), QuoteString(p.PendingState), p.Applied,
		QuoteString(p.Floor.GTIDPos), QuoteString(p.Floor.File), p.Floor.Pos, epochVal, epochSet)
}

// ErrRowCount is wrapped when an UPDATE or DELETE did not find its row, or
// an INSERT did not insert one: the target has diverged from the source.
var ErrRowCount = apply.ErrRowCount

// ErrCompacted is wrapped when a compacted statement (a commit unit's net
// effect on a table) did not do what the unit's row images promised: the
// caller rolls back and applies the unit again in source order, where any
// divergence is named row by row.
var ErrCompacted = apply.ErrCompacted

// ErrUnsupported is wrapped when the stream holds something prepl cannot
// apply yet; it stops before it (fatal, package fault).
var ErrUnsupported = fault.Fatal(errors.New("unsupported"))

// Class of an error: what the applier does with it.
type Class = apply.Class

// Error classes (Classify never returns apply.Refused: Target.Classify
// does, for a server's error number).
const (
	Fatal      = apply.Fatal      // stop: the target diverged or refuses
	Retry      = apply.Retry      // deadlock, lock wait timeout: roll back, retry
	Connection = apply.Connection // the connection broke: reconnect, retry
)

// Classify tells how to treat err from a target connection.
func Classify(err error) Class {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		// 1317, a statement interrupted (KILL QUERY: a later unit yielding
		// to an earlier one), leaves the connection usable: roll back on
		// it and retry, no reconnect; a shutdown behind it shows on the
		// next statement.
		case 1213, 1205, 1020, 1614, 1317: // deadlock, lock wait timeout, record changed, XA deadlock, query interrupted
			return Retry
		case 1927, 2006, 2013, 1053: // connection killed, server gone, lost, shutdown
			return Connection
		case 1047, 1180:
			// A Galera node out of the primary component (a partition,
			// a node leaving, one still joining) answers every statement
			// with 1047 "WSREP has not yet prepared node for application
			// use", and a commit it could not replicate with 1180 "Got
			// error 6 during COMMIT": the transaction rolled back, the
			// node may come back, and a commit whose answer was lost is
			// checked against the stored position like a lost
			// connection's. A certification failure is 1213, above.
			// 1047 from a server without wsrep is an unknown command;
			// 1180 "wsrep_max_ws_rows exceeded" (or _size) repeats on
			// every node: the unit is too big for the cluster.
			if (me.Number == 1180 && !strings.Contains(me.Message, "wsrep_max_ws_")) || strings.Contains(me.Message, "WSREP") {
				return Connection
			}
		}
		return Fatal
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, gomysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) {
		return Connection
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Fatal
	}
	s := err.Error()
	if strings.Contains(s, "connection refused") || strings.Contains(s, "broken pipe") ||
		strings.Contains(s, "connection reset") || strings.Contains(s, "EOF") || strings.Contains(s, "i/o timeout") {
		return Connection
	}
	return Fatal
}

// Diverged reports whether err is the server refusing a row or a table
// because the target is not what the source was: a key in the way or
// missing, a foreign key's row missing, a table or column missing. A
// restart cannot help: someone must repair the target or skip.
func Diverged(err error) bool {
	switch ErrorCode(err) {
	case 1062, 1032, 1451, 1452, 1146, 1054, 1136, 1048, 1364, 1406:
		return true // duplicate, key not found, FK child/parent, no table, no column, column count, NULL, no default, too long
	}
	return false
}

// ErrorCode returns the server error number, or 0.
func ErrorCode(err error) uint16 {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// Describe names a transaction for messages: its GTID and where it starts.
func Describe(t *txn.Txn) string { return describe(t) }

func describe(t *txn.Txn) string {
	if t.GTID != "" {
		return fmt.Sprintf("GTID %s (%s)", t.GTID, t.Start)
	}
	return "transaction at " + t.Start.String()
}

// The driver reports dropped connections on its own logger (stderr); prepl
// reconnects and says so itself, so the driver's lines go to debug.
func init() { gomysql.SetLogger(driverLog{}) }

type driverLog struct{}

func (driverLog) Print(v ...any) { slog.Debug("mysql driver: " + strings.TrimSpace(fmt.Sprint(v...))) }
