package run

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/store"
)

// Target is what a run needs of a target: the engine's apply.Target, its
// channel store, the checks before a run and how the connection is
// protected. *mysql.Target and *postgres.Target implement it.
type Target interface {
	apply.Target
	store.Store
	Close() error
	// CheckStart runs the checks before a run: a MySQL target warns of
	// the privileges its user lacks; a PostgreSQL target refuses mapping
	// options other than its tables' (a user that may not set
	// session_replication_role was refused at connect).
	CheckStart(ctx context.Context, log *slog.Logger, cfg apply.Config) error
	// Security says how the connection is protected, for the start line.
	Security(ctx context.Context) string
}

// Channels' default names: a live source's (replicate, and copy, which
// replicate continues) and binlog files' (replay).
const (
	DefaultChannel = "default"
	ReplayChannel  = "replay"
)

// TargetOptions say how to open a target.
type TargetOptions struct {
	// URL is mysql://... (resolved with Secrets) or postgres://...
	URL string
	// Channel names the stream's position (DefaultChannel, ReplayChannel).
	Channel string
	// Reconnect is how long a lost connection is retried.
	Reconnect time.Duration
	KeepGTID  bool
	// SQLRows is --row-events=false: a MySQL target gets compacted rows
	// as SQL, never as rows events (mysql.SQLRows).
	SQLRows bool
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
	if o.SQLRows {
		opts = append(opts, mysql.SQLRows())
	}
	t, err := mysql.Open(ctx, e, o.Channel, opts...)
	if err != nil {
		return nil, err
	}
	return t, nil
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
	return t, nil
}

// MySQL is t's MySQL target, nil for another kind: what only MySQL has
// (SHOW STATUS for --max-load, --prefetch, the definitions of a dry run).
func MySQL(t Target) *mysql.Target {
	m, _ := t.(*mysql.Target)
	return m
}

// statusDB is the pool --max-load reads status variables from (nil: none).
func statusDB(t Target) *sql.DB {
	if m := MySQL(t); m != nil {
		return m.DB
	}
	return nil
}

var (
	_ Target = (*mysql.Target)(nil)
	_ Target = (*postgres.Target)(nil)
)
