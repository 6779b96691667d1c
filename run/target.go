package run

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/postgres"
)

// Store is a target's channel store: what it keeps for each channel beside
// the rows, in its prepl schema. The MySQL target (mysqlTarget) and the
// PostgreSQL one (pgTarget) implement it.
type Store interface {
	// Lock takes the channel's lock, waiting up to wait for a prepl that
	// just died to let it go; release lets it go.
	Lock(ctx context.Context, wait time.Duration) (release func(), err error)
	// SkipRequests lists what `prepl skip` asked the runs to leave out;
	// MarkSkipped records that a run left one out.
	SkipRequests(ctx context.Context) ([]SkipRequest, error)
	MarkSkipped(ctx context.Context, id string) error
	// ChannelName is the channel the target was opened for.
	ChannelName() string
	// Channels lists the channels with a stored position;
	// ChannelPositions reads one channel's, by slot.
	Channels(ctx context.Context) ([]string, error)
	ChannelPositions(ctx context.Context, channel string) (map[string]position.Checkpoint, error)
	// HalfApplied describes a channel's unit that wrote non-transactional
	// tables and was interrupted ("" for none).
	HalfApplied(ctx context.Context, channel string) (string, error)
}

// Target is what a run needs of a target: the engine's apply.Target, its
// channel store, the checks before a run and how the connection is
// protected.
type Target interface {
	apply.Target
	Store
	Close() error
	// CheckStart runs the checks before a run: a MySQL target warns of
	// the privileges its user lacks; a PostgreSQL target refuses mapping
	// options other than its tables' (a user that may not set
	// session_replication_role was refused at connect).
	CheckStart(ctx context.Context, log *slog.Logger, cfg apply.Config) error
	// Security says how the connection is protected, for the start line.
	Security(ctx context.Context) string
}

// SkipRequest is a transaction `prepl skip` named (GTID or FILE:OFFSET),
// and whether a run has skipped it.
type SkipRequest struct {
	Txn  string
	Done bool
}

// TargetOptions say how to open a target.
type TargetOptions struct {
	// URL is mysql://... (resolved with Secrets) or postgres://...
	URL     string
	Channel string
	// Reconnect is how long a lost connection is retried.
	Reconnect time.Duration
	KeepGTID  bool
	// ReadOnly opens the target without creating prepl's tables (status).
	ReadOnly bool
	// PendingDDL is --pending-ddl, the user's word on interrupted work.
	PendingDDL apply.ResolveDDL
	// PG are the PostgreSQL mapping's options (PGOptions parses them when
	// the target is PostgreSQL).
	PGOptions func() (postgres.Options, error)
}

// OpenTarget opens o.URL: postgres:// or postgresql:// for PostgreSQL,
// else MySQL/MariaDB, whose endpoint s completes.
func OpenTarget(ctx context.Context, o TargetOptions, s *Secrets) (Target, error) {
	if o.URL == "" {
		return nil, fmt.Errorf("%w: --target is required", ErrUsage)
	}
	if postgres.IsURL(o.URL) {
		return openPG(ctx, o, s)
	}
	e, err := s.Endpoint(o.URL, &s.Target)
	if err != nil {
		return nil, err
	}
	opts := []mysql.Option{mysql.Reconnect(o.Reconnect, slog.Default()), mysql.XADecoder(binlog.DecodeEvents)}
	if o.PendingDDL.ID != "" {
		opts = append(opts, mysql.ResolvePending(o.PendingDDL))
	}
	if o.KeepGTID {
		opts = append(opts, mysql.KeepGTIDs())
	}
	if o.ReadOnly {
		opts = append(opts, mysql.ReadOnly())
	}
	t, err := mysql.Open(ctx, e, o.Channel, opts...)
	if err != nil {
		return nil, err
	}
	return mysqlTarget{t}, nil
}

func openPG(ctx context.Context, o TargetOptions, s *Secrets) (Target, error) {
	if o.KeepGTID {
		return nil, fmt.Errorf("%w: --keep-gtid: a PostgreSQL target has no GTIDs to keep; the position in prepl.position "+
			"(written with the rows) is what a restart continues from", ErrUsage)
	}
	var po postgres.Options
	if o.PGOptions != nil {
		var err error
		if po, err = o.PGOptions(); err != nil {
			return nil, err
		}
	}
	opts := []postgres.Option{postgres.Reconnect(o.Reconnect, slog.Default())}
	if o.ReadOnly {
		opts = append(opts, postgres.ReadOnly())
	}
	pw, err := s.PGPassword()
	if err != nil {
		return nil, err
	}
	if pw != "" {
		opts = append(opts, postgres.Password(pw))
	}
	t, err := postgres.Open(ctx, o.URL, o.Channel, po, opts...)
	if err != nil {
		return nil, err
	}
	return pgTarget{t}, nil
}

// MySQL is t's MySQL target, nil for another kind: what only MySQL has
// (SHOW STATUS for --max-load, --prefetch, the definitions of a dry run).
func MySQL(t Target) *mysql.Target {
	if m, ok := t.(mysqlTarget); ok {
		return m.Target
	}
	return nil
}

// statusDB is the pool --max-load reads status variables from (nil: none).
func statusDB(t Target) *sql.DB {
	if m := MySQL(t); m != nil {
		return m.DB
	}
	return nil
}

type mysqlTarget struct{ *mysql.Target }

func (m mysqlTarget) Lock(ctx context.Context, wait time.Duration) (func(), error) {
	l, err := m.LockChannel(ctx, wait)
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

func (m mysqlTarget) SkipRequests(ctx context.Context) ([]SkipRequest, error) {
	skips, err := m.Skips(ctx)
	var out []SkipRequest
	for _, s := range skips {
		out = append(out, SkipRequest{s.Txn, s.Skipped != nil})
	}
	return out, err
}

func (m mysqlTarget) ChannelName() string { return m.Channel }

func (m mysqlTarget) CheckStart(ctx context.Context, log *slog.Logger, cfg apply.Config) error {
	checkPrivileges(ctx, log, m.DB, "target", m.Endpoint, targetNeeds(ctx, m.Target, cfg))
	return nil
}

func (m mysqlTarget) Security(ctx context.Context) string {
	return mysql.Security(ctx, m.DB, m.Endpoint)
}

func (m mysqlTarget) Channels(ctx context.Context) ([]string, error) {
	return StoredChannels(ctx, m.DB)
}

func (m mysqlTarget) ChannelPositions(ctx context.Context, channel string) (map[string]position.Checkpoint, error) {
	m.Channel = channel
	return m.Positions(ctx)
}

func (m mysqlTarget) HalfApplied(ctx context.Context, channel string) (string, error) {
	m.Channel = channel
	k, err := m.Marker(ctx)
	if err != nil || k.First == "" {
		return "", err
	}
	what := k.Transactions()
	if k.Failed != "" {
		return fmt.Sprintf("%s wrote non-transactional table(s) %s and the target refused them (%s): what ran before the refusal "+
			"stays; repair the rows, then tell the next run with --pending-ddl", what, k.Tables, k.Failed), nil
	}
	return fmt.Sprintf("%s wrote non-transactional table(s) %s and were interrupted: they may have taken effect in part; "+
		"the next run applies them again by key, or stops and asks", what, k.Tables), nil
}

// StoredChannels lists the channels with a position on a MySQL target.
func StoredChannels(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT channel FROM "+mysql.PositionSchema+".position ORDER BY channel")
	if mysql.NoPositionTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ch string
		if err := rows.Scan(&ch); err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, rows.Err()
}

type pgTarget struct{ *postgres.Target }

// HalfApplied: every PostgreSQL table is transactional.
func (pgTarget) HalfApplied(context.Context, string) (string, error) { return "", nil }

func (p pgTarget) Lock(ctx context.Context, wait time.Duration) (func(), error) {
	l, err := p.LockChannel(ctx, wait)
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

func (p pgTarget) SkipRequests(ctx context.Context) ([]SkipRequest, error) {
	skips, err := p.Skips(ctx)
	var out []SkipRequest
	for _, s := range skips {
		out = append(out, SkipRequest{s.Txn, s.Done})
	}
	return out, err
}

func (p pgTarget) ChannelName() string { return p.Channel }

func (p pgTarget) CheckStart(ctx context.Context, _ *slog.Logger, _ apply.Config) error {
	return p.CheckOptions(ctx)
}

func (p pgTarget) Security(ctx context.Context) string {
	var ssl bool
	if err := p.Pool.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	if ssl {
		return "TLS (sslmode from the URL)"
	}
	return "none"
}

func (p pgTarget) Channels(ctx context.Context) ([]string, error) {
	rows, err := p.Pool.Query(ctx, "SELECT DISTINCT channel FROM "+postgres.PositionSchema+".position ORDER BY channel")
	if postgres.NoPositionTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (p pgTarget) ChannelPositions(ctx context.Context, channel string) (map[string]position.Checkpoint, error) {
	p.Channel = channel
	return p.Checkpoints(ctx)
}
