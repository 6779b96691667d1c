package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/postgres"
)

// target is what replay and replicate need of a target: the engine's
// apply.Target, and around it the channel's lock and skip requests, the
// start-up checks and how the connection is protected. The MySQL target
// (myTarget) and the PostgreSQL one (pgTarget) implement it; what only
// MySQL has (SHOW STATUS for --max-load, SHOW GRANTS) is behind mysqlDB.
type target interface {
	apply.Target
	Close() error
	// lockChannel takes the channel's lock; release lets it go.
	lockChannel(ctx context.Context, wait time.Duration) (release func(), err error)
	// skipRequests lists what `prepl skip` asked the runs to leave out.
	skipRequests(ctx context.Context) ([]skipRequest, error)
	markSkipped(ctx context.Context, id string) error
	channelName() string
	// checkStart runs the checks before a run: a MySQL target warns of
	// the privileges its user lacks; a PostgreSQL target refuses mapping
	// options other than its tables' (a user that may not set
	// session_replication_role was refused at connect).
	checkStart(ctx context.Context, log *slog.Logger, cfg apply.Config) error
	// security says how the connection is protected, for the start line.
	security(ctx context.Context) string
	// mysqlDB is a MySQL target's pool (nil for PostgreSQL).
	mysqlDB() *sql.DB
	// channels lists the channels with a stored position; positions
	// reads one channel's (prepl status).
	channels(ctx context.Context) ([]string, error)
	positions(ctx context.Context, channel string) (map[string]position.Checkpoint, error)
	// halfApplied describes a channel's unit that wrote non-transactional
	// tables and was interrupted ("" for none; prepl status).
	halfApplied(ctx context.Context, channel string) (string, error)
}

type myTarget struct{ *mysql.Target }

func (m myTarget) lockChannel(ctx context.Context, wait time.Duration) (func(), error) {
	l, err := m.LockChannel(ctx, wait)
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

// skipRequest is a transaction `prepl skip` named (GTID or FILE:OFFSET),
// and whether a run has skipped it.
type skipRequest struct {
	txn  string
	done bool
}

func (m myTarget) skipRequests(ctx context.Context) ([]skipRequest, error) {
	skips, err := m.Skips(ctx)
	var out []skipRequest
	for _, s := range skips {
		out = append(out, skipRequest{s.Txn, s.Skipped != nil})
	}
	return out, err
}

func (m myTarget) markSkipped(ctx context.Context, id string) error { return m.MarkSkipped(ctx, id) }
func (m myTarget) channelName() string                              { return m.Channel }
func (m myTarget) mysqlDB() *sql.DB                                 { return m.DB }

func (m myTarget) checkStart(ctx context.Context, log *slog.Logger, cfg apply.Config) error {
	checkPrivileges(ctx, log, m.DB, "target", m.Endpoint, targetNeeds(ctx, m.Target, cfg))
	return nil
}

func (m myTarget) security(ctx context.Context) string { return mysql.Security(ctx, m.DB, m.Endpoint) }

func (m myTarget) channels(ctx context.Context) ([]string, error) { return storedChannels(ctx, m.DB) }

func (m myTarget) positions(ctx context.Context, channel string) (map[string]position.Checkpoint, error) {
	m.Channel = channel
	return m.Positions(ctx)
}

func (m myTarget) halfApplied(ctx context.Context, channel string) (string, error) {
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

type pgTarget struct{ *postgres.Target }

// halfApplied: every PostgreSQL table is transactional.
func (pgTarget) halfApplied(context.Context, string) (string, error) { return "", nil }

func (p pgTarget) lockChannel(ctx context.Context, wait time.Duration) (func(), error) {
	l, err := p.LockChannel(ctx, wait)
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

func (p pgTarget) skipRequests(ctx context.Context) ([]skipRequest, error) {
	skips, err := p.Skips(ctx)
	var out []skipRequest
	for _, s := range skips {
		out = append(out, skipRequest{s.Txn, s.Done})
	}
	return out, err
}
func (p pgTarget) markSkipped(ctx context.Context, id string) error { return p.MarkSkipped(ctx, id) }
func (p pgTarget) channelName() string                              { return p.Channel }
func (p pgTarget) mysqlDB() *sql.DB                                 { return nil }

func (p pgTarget) checkStart(ctx context.Context, _ *slog.Logger, _ apply.Config) error {
	return p.CheckOptions(ctx)
}

func (p pgTarget) security(ctx context.Context) string {
	var ssl bool
	if err := p.Pool.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	if ssl {
		return "TLS (sslmode from the URL)"
	}
	return "none"
}

func (p pgTarget) channels(ctx context.Context) ([]string, error) {
	rows, err := p.Pool.Query(ctx, "SELECT DISTINCT channel FROM "+postgres.PositionSchema+".position ORDER BY channel")
	if postgres.NoPositionTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (p pgTarget) positions(ctx context.Context, channel string) (map[string]position.Checkpoint, error) {
	p.Channel = channel
	return p.Checkpoints(ctx)
}

// openTarget opens --target: postgres:// or postgresql:// for
// PostgreSQL, else MySQL/MariaDB.
func (f *applyFlags) openTarget(ctx context.Context) (target, error) {
	if f.target == "" {
		return nil, fmt.Errorf("%w: --target is required", errUsage)
	}
	if postgres.IsURL(f.target) {
		return f.openPG(ctx)
	}
	e, err := f.secrets.endpoint(f.target, &f.secrets.target)
	if err != nil {
		return nil, err
	}
	opts := []mysql.Option{mysql.Reconnect(f.reconnect, slog.Default()), mysql.XADecoder(binlog.DecodeEvents)}
	resolve, err := f.resolveDDL()
	if err != nil {
		return nil, err
	}
	if resolve.ID != "" {
		opts = append(opts, mysql.ResolvePending(resolve))
	}
	if f.keepGTID {
		opts = append(opts, mysql.KeepGTIDs())
	}
	if f.readOnly {
		opts = append(opts, mysql.ReadOnly())
	}
	t, err := mysql.Open(ctx, e, f.channel, opts...)
	if err != nil {
		return nil, err
	}
	return myTarget{t}, nil
}

func (f *applyFlags) openPG(ctx context.Context) (target, error) {
	if f.keepGTID {
		return nil, fmt.Errorf("%w: --keep-gtid: a PostgreSQL target has no GTIDs to keep; the position in prepl.position "+
			"(written with the rows) is what a restart continues from", errUsage)
	}
	o, err := f.pg.options()
	if err != nil {
		return nil, err
	}
	opts := []postgres.Option{postgres.Reconnect(f.reconnect, slog.Default())}
	if f.readOnly {
		opts = append(opts, postgres.ReadOnly())
	}
	pw, err := f.pgPassword()
	if err != nil {
		return nil, err
	}
	if pw != "" {
		opts = append(opts, postgres.Password(pw))
	}
	t, err := postgres.Open(ctx, f.target, f.channel, o, opts...)
	if err != nil {
		return nil, err
	}
	return pgTarget{t}, nil
}

// pgPassword is the PostgreSQL target's password from
// --target-password-file or PREPL_TARGET_PASSWORD ("" leaves it to the
// URL, PGPASSWORD or ~/.pgpass).
func (f *applyFlags) pgPassword() (string, error) {
	if pf := f.secrets.target.passwordFile; pf != "" {
		b, err := os.ReadFile(pf)
		if err != nil {
			return "", fmt.Errorf("%w: --target-password-file: %v", errUsage, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return os.Getenv("PREPL_TARGET_PASSWORD"), nil
}
