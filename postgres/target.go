package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// PositionSchema holds prepl's tables on the target.
const PositionSchema = "prepl"

// SetupSQL creates prepl's tables on a PostgreSQL target: the position
// (the columns and meaning of the MySQL target's, one row per channel and
// slot, written in the same transaction as the rows), the source's table
// definitions (TablesSQL), the mapping options, the XA transactions
// prepared (see xa.go) and the skip requests.
var SetupSQL = []string{
	"CREATE SCHEMA IF NOT EXISTS " + PositionSchema,
	`CREATE TABLE IF NOT EXISTS ` + PositionSchema + `.position (
		channel varchar(64) NOT NULL,
		slot varchar(128) NOT NULL,
		gtid_pos text NOT NULL,
		file varchar(512) NOT NULL,
		pos bigint NOT NULL,
		last_gtid varchar(128) NOT NULL,
		source_ts timestamptz(6),
		pending_ddl varchar(128) NOT NULL DEFAULT '',
		pending_state varchar(64) NOT NULL DEFAULT '',
		applied bigint NOT NULL DEFAULT 0,
		floor_gtid text NOT NULL,
		floor_file varchar(512) NOT NULL DEFAULT '',
		floor_pos bigint NOT NULL DEFAULT 0,
		updated_at timestamptz(6) NOT NULL DEFAULT now(),
		PRIMARY KEY (channel, slot))`,
	TablesSQL,
	mappingSQL,
	xaSQL,
	`CREATE TABLE IF NOT EXISTS ` + PositionSchema + `.skip (
		channel varchar(64) NOT NULL,
		txn varchar(600) NOT NULL,
		requested_at timestamptz(6) NOT NULL DEFAULT now(),
		skipped_at timestamptz(6),
		PRIMARY KEY (channel, txn))`,
}

// Target is a PostgreSQL target of replicate and replay: a pool for the
// catalog, positions and lock waits, and a pinned connection per worker.
// Every session runs with session_replication_role = replica: the
// target's triggers (foreign keys included) do not fire for rows that
// are the source's effects already.
type Target struct {
	Pool    *pgxpool.Pool
	Channel string
	Opts    Options
	Catalog *Catalog

	conf *pgx.ConnConfig
	ids  identities
	// maxPrepared is the target's max_prepared_transactions: XA
	// transactions need it above 0.
	maxPrepared int
	reconnect   time.Duration
	log         *slog.Logger
	readOnly    bool // see ReadOnly
}

// Option changes how Open prepares the target.
type Option func(*Target)

// ReadOnly opens the target for reading positions only (prepl status): it
// creates nothing and reads no catalog, and a target without prepl's
// tables has no position.
func ReadOnly() Option { return func(t *Target) { t.readOnly = true } }

// Diverged reports whether err is the server refusing a row or a table
// because the target is not what the source was: an integrity constraint
// (SQLSTATE class 23), a table or column missing. A restart cannot help.
func Diverged(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "23") || pe.Code == "42P01" || pe.Code == "42703")
}

// NoPositionTable reports whether err says prepl's schema or position
// table does not exist (SQLSTATE 3F000, 42P01).
func NoPositionTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "3F000" || pe.Code == "42P01")
}

// Reconnect makes Open, and every Retry of the target, retry a lost
// connection for up to timeout, with backoff, logging each loss on log.
func Reconnect(timeout time.Duration, log *slog.Logger) Option {
	return func(t *Target) { t.reconnect, t.log = timeout, log }
}

// IsURL reports whether url names a PostgreSQL server.
func IsURL(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// ParseConfig reads a postgres:// URL (libpq's forms and environment
// variables, PGPASSWORD and ~/.pgpass included) and adds prepl's session
// settings.
func ParseConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("target URL: %w", err)
	}
	p := cfg.ConnConfig.RuntimeParams
	p["TimeZone"] = "UTC"
	p["session_replication_role"] = "replica"
	if p["application_name"] == "" {
		p["application_name"] = "prepl"
	}
	return cfg, nil
}

// Open connects to the target, creates prepl's tables if missing and
// reads the catalog of the source's definitions.
func Open(ctx context.Context, url, channel string, o Options, opts ...Option) (*Target, error) {
	cfg, err := ParseConfig(url)
	if err != nil {
		return nil, err
	}
	t := &Target{Channel: channel, Opts: o, conf: cfg.ConnConfig}
	for _, opt := range opts {
		opt(t)
	}
	if t.Pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("connect to target %s: %w", t, err)
	}
	err = t.Retry(ctx, "connect to target", func() error {
		if t.readOnly {
			return t.Pool.Ping(ctx)
		}
		for _, q := range SetupSQL {
			if _, err := t.Pool.Exec(ctx, q); err != nil {
				return t.connectErr(err)
			}
		}
		var mp string
		if err := t.Pool.QueryRow(ctx, "SHOW max_prepared_transactions").Scan(&mp); err != nil {
			return t.connectErr(err)
		}
		t.maxPrepared, _ = strconv.Atoi(mp)
		defs, err := loadDefs(ctx, t.Pool)
		if err == nil {
			t.Catalog = newCatalog(defs)
		}
		return err
	})
	if err != nil {
		t.Pool.Close()
		return nil, err
	}
	return t, nil
}

// connectErr explains a refused session setting.
func (t *Target) connectErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" && strings.Contains(pe.Message, "session_replication_role") {
		return fmt.Errorf("connect to target %s: prepl's sessions set session_replication_role = replica so that the target's "+
			"triggers and foreign keys do not act on replicated rows, which needs a superuser (or, PostgreSQL 15+: "+
			"GRANT SET ON PARAMETER session_replication_role TO %s): %w", t, t.conf.User, err)
	}
	return fmt.Errorf("connect to target %s: %w", t, err)
}

// Close releases the pool.
func (t *Target) Close() error { t.Pool.Close(); return nil }

// String names the target in messages: postgres://user@host:port/db,
// without a password.
func (t *Target) String() string {
	return fmt.Sprintf("postgres://%s@%s/%s", t.conf.User, net.JoinHostPort(t.conf.Host, fmt.Sprint(t.conf.Port)), t.conf.Database)
}

// CheckStart runs the checks before a run: the mapping's options may name
// only the target's tables (CheckOptions). A user that may not set
// session_replication_role was refused at connect.
func (t *Target) CheckStart(ctx context.Context, _ *slog.Logger, _ apply.Config) error {
	return t.CheckOptions(ctx)
}

// Security says how the target's connection is protected, for a run's
// start line: the sslmode of the URL decides it, pg_stat_ssl tells.
func (t *Target) Security(ctx context.Context) string {
	var ssl bool
	if err := t.Pool.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	if ssl {
		return "TLS (sslmode from the URL)"
	}
	return "none"
}

// KeepsGTIDs is false: PostgreSQL has no GTIDs.
func (t *Target) KeepsGTIDs() bool { return false }

// UnitLimits: PostgreSQL puts no limit of its own on a transaction.
func (t *Target) UnitLimits() (rows, bytes int) { return 0, 0 }

// Tables is the catalog of the source's definitions.
func (t *Target) Tables() txn.Catalog { return t.Catalog }

// Load makes sure the tables tx changes are in the catalog.
func (t *Target) Load(ctx context.Context, tx *txn.Txn) error { return t.Catalog.LoadTxn(tx) }

const positionColumns = `slot, gtid_pos, file, pos, last_gtid, source_ts, pending_ddl, pending_state, applied,
		floor_gtid, floor_file, floor_pos`

// Checkpoints returns the stored positions of this channel, by slot
// (those `prepl copy` stored included).
func (t *Target) Checkpoints(ctx context.Context) (map[string]position.Checkpoint, error) {
	return t.ChannelPositions(ctx, t.Channel)
}

// ChannelPositions returns the stored positions of channel, by slot.
func (t *Target) ChannelPositions(ctx context.Context, channel string) (map[string]position.Checkpoint, error) {
	rows, err := t.Pool.Query(ctx, `SELECT `+positionColumns+` FROM `+PositionSchema+`.position WHERE channel = $1`, channel)
	if NoPositionTable(err) {
		return nil, nil // never written to (a target opened ReadOnly)
	}
	if err != nil {
		return nil, fmt.Errorf("read position: %w", err)
	}
	defer rows.Close()
	out := map[string]position.Checkpoint{}
	for rows.Next() {
		var p position.Checkpoint
		var ts *time.Time
		var pos, applied, floorPos int64
		if err := rows.Scan(&p.Slot, &p.GTIDPos, &p.File, &pos, &p.LastGTID, &ts, &p.PendingDDL, &p.PendingState, &applied,
			&p.Floor.GTIDPos, &p.Floor.File, &floorPos); err != nil {
			return nil, fmt.Errorf("read position: %w", err)
		}
		p.Pos, p.Applied, p.Floor.Pos = uint32(pos), uint64(applied), uint32(floorPos)
		if ts != nil {
			p.SourceTS = ts.UTC()
		}
		out[p.Slot] = p
	}
	return out, rows.Err()
}

// positionSQL is the statement that stores p; it runs inside the
// transaction whose rows it covers.
func (t *Target) positionSQL(p position.Checkpoint) string {
	ts := "NULL"
	if !p.SourceTS.IsZero() {
		ts = QuoteString(p.SourceTS.UTC().Format("2006-01-02 15:04:05.000000+00"))
	}
	return fmt.Sprintf(`INSERT INTO %s.position (channel, slot, gtid_pos, file, pos, last_gtid, source_ts, pending_ddl, pending_state, applied,
floor_gtid, floor_file, floor_pos)
VALUES (%s, %s, %s, %s, %d, %s, %s, %s, %s, %d, %s, %s, %d) ON CONFLICT (channel, slot) DO UPDATE SET gtid_pos=EXCLUDED.gtid_pos,
file=EXCLUDED.file, pos=EXCLUDED.pos, last_gtid=EXCLUDED.last_gtid, source_ts=EXCLUDED.source_ts, pending_ddl=EXCLUDED.pending_ddl,
pending_state=EXCLUDED.pending_state, applied=EXCLUDED.applied, floor_gtid=EXCLUDED.floor_gtid, floor_file=EXCLUDED.floor_file,
floor_pos=EXCLUDED.floor_pos, updated_at=now()`, PositionSchema,
		QuoteString(t.Channel), QuoteString(p.Slot), QuoteString(p.GTIDPos), QuoteString(p.File), p.Pos,
		QuoteString(p.LastGTID), ts, QuoteString(p.PendingDDL), QuoteString(p.PendingState), p.Applied,
		QuoteString(p.Floor.GTIDPos), QuoteString(p.Floor.File), p.Floor.Pos)
}

// Classify tells the engine how to treat err, by SQLSTATE: a
// serialization failure, deadlock, lock timeout or cancelled statement
// (Kill) is retried; a connection exception, an administrator's shutdown
// or a broken connection reconnects; any other server error (integrity
// violations, 23xxx, among them) is a refusal.
func (t *Target) Classify(err error) apply.Class { return Classify(err) }

// Classify is Target.Classify.
func Classify(err error) apply.Class {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001", pe.Code == "40P01", pe.Code == "55P03", pe.Code == "57014":
			return apply.Retry
		case strings.HasPrefix(pe.Code, "08"), pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03":
			return apply.Connection
		}
		return apply.Refused
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return apply.Fatal
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err) {
		return apply.Connection
	}
	s := err.Error()
	for _, m := range []string{"conn closed", "connection refused", "broken pipe", "connection reset", "unexpected EOF", "server closed"} {
		if strings.Contains(s, m) {
			return apply.Connection
		}
	}
	return apply.Fatal
}

// Retry runs f until it succeeds, fails with an error that is not a lost
// connection, or the target has been unreachable for the Reconnect
// timeout. Without the Reconnect option it runs f once.
func (t *Target) Retry(ctx context.Context, what string, f func() error) error {
	return apply.RetryLost(ctx, what, t, t.reconnect, t.log, Classify, f)
}

// lockWaitsSQL pairs each waiting backend of this database with the ones
// that block it, as PostgreSQL itself knows them.
const lockWaitsSQL = `SELECT a.pid, b.pid FROM pg_stat_activity a CROSS JOIN LATERAL unnest(pg_blocking_pids(a.pid)) AS b(pid)
WHERE a.datname = current_database() AND a.wait_event_type = 'Lock'`

// LockWaits lists which backends wait for a lock another one holds.
func (t *Target) LockWaits(ctx context.Context) ([]apply.ConnWait, error) {
	rows, err := t.Pool.Query(ctx, lockWaitsSQL)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("read lock waits: %w", err)
	}
	defer rows.Close()
	var ws []apply.ConnWait
	for rows.Next() {
		var r, b int32
		if err := rows.Scan(&r, &b); err != nil {
			return nil, err
		}
		ws = append(ws, apply.ConnWait{Requester: uint64(r), Blocker: uint64(b)})
	}
	return ws, rows.Err()
}

// Kill cancels the statement backend id runs (pg_cancel_backend): it
// fails with 57014, and its transaction is rolled back and retried.
func (t *Target) Kill(ctx context.Context, id uint64) error {
	_, err := t.Pool.Exec(ctx, "SELECT pg_cancel_backend($1)", int32(id))
	return err
}

// describe names a transaction for messages: its GTID and where it starts.
func describe(t *txn.Txn) string {
	if t.GTID != "" {
		return fmt.Sprintf("GTID %s (%s)", t.GTID, t.Start)
	}
	return "transaction at " + t.Start.String()
}

// Password sets the password, over the URL's.
func Password(pw string) Option { return func(t *Target) { t.conf.Password = pw } }
