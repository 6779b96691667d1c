// Package apply runs transactions against a Target: the runtime around
// package sequencer, which holds every rule (window, commit units, what
// may start, commit order, retries, yields, positions). Here are only the
// goroutines and the I/O: a reader of the source, a renderer of SQL
// ahead of the workers, one worker per pinned target connection, a
// lock-wait monitor and the timers; each is joined before Run returns.
package apply

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/internal/readahead"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/txn"
)

// Source yields complete transactions in stream order; io.EOF ends it.
// Beside Next, it says how the engine may read it; a Source that cannot
// tell returns the default each method documents.
type Source interface {
	Next(ctx context.Context) (*txn.Txn, error)
	// ReadAhead is the Source's own read-ahead, when it reads ahead in a
	// goroutine of its own (fileset.Reader): the engine takes its batches
	// as they come. Default nil: the engine reads through a
	// readahead.Reader of its own, within Config.ReadAheadBytes, each
	// transaction handed over as soon as it is read (a live stream's next
	// one may be minutes away), unless AtHand says otherwise.
	ReadAhead() *readahead.Reader
	// AtHand reports, after a transaction, whether the next one has
	// already arrived whole (stream.Reader: a stream catching up). Those
	// are handed over in batches, which saves a handoff, and the wake-up
	// of the engine, per transaction. Default false.
	AtHand() bool
	// Silence is how long the Source's server has not been heard from
	// beyond what is normal (stream.Reader): the transactions written
	// meanwhile are unseen, so the lag is at least that. Default 0.
	Silence() time.Duration
}

// Action is a filter's verdict on a transaction.
type Action int

const (
	Apply Action = iota // apply it
	Skip                // do not apply it, but count it in the position
	Stop                // stop before it
	Last                // apply it, then stop
)

// Config of one run.
type Config struct {
	Mode    depend.Mode
	Workers int // 0 or 1: one connection
	// FixedWorkers keeps Workers units in flight; by default Workers is a
	// ceiling and the engine finds how many are fastest (see
	// sequencer.Controller), starting from one.
	FixedWorkers bool
	// Retries bounds how often one transaction is retried after a
	// deadlock or lock wait timeout while it is the oldest (like
	// slave_transaction_retries); conflicts of speculative work do not count.
	Retries int
	// WindowBytes bounds the bytes of transactions read ahead and not yet
	// committed (like slave_parallel_max_queued). A transaction larger than
	// the window runs alone.
	WindowBytes int
	// UnitTxns is the most consecutive source transactions applied on one
	// connection and committed as one target transaction (a commit unit).
	// Units commit in source order, so the target only shows source states.
	// 1 keeps one target transaction per source transaction.
	UnitTxns int
	// UnitBytes bounds a commit unit's size.
	UnitBytes int
	// ReadAheadBytes bounds the transactions read from the source and not
	// yet taken by the sequencer, by their size in memory
	// (txn.Txn.Footprint); a bigger transaction is read alone.
	ReadAheadBytes int
	// NoCompact turns off compaction: by default a unit's changes to a
	// table are reduced to its net effect and sent as multi-row statements
	// (package compact); with NoCompact every row change is one statement.
	NoCompact bool
	// ResolveDDL is the user's word on a DDL a crash interrupted
	// (--pending-ddl ID=applied|not-applied): used only when the stored
	// position names that DDL as pending.
	ResolveDDL ResolveDDL
	// Filter decides per transaction; nil applies everything.
	Filter func(*txn.Txn) Action
	// ReconnectTimeout bounds how long a broken target connection is
	// retried before the run fails.
	ReconnectTimeout time.Duration
	Log              *slog.Logger
	// ProgressEvery logs a progress line this often (0: never).
	ProgressEvery time.Duration
	// Gate, when set, holds admission of new transactions while it is
	// held (pause, throttling).
	Gate *Gate
	// Delay applies each transaction no earlier than its source commit
	// time (the commit event's timestamp) plus Delay, by the local
	// clock, as MASTER_DELAY does; reading goes on ahead within the
	// window. It holds Gate (reason ThrottleDelay), so it needs one.
	Delay time.Duration
	// Live, when set, receives statistics snapshots while the run goes.
	Live *Live
}

func (c *Config) defaults() {
	// The fields the sequencer shares take its defaults.
	s := sequencer.Config{Mode: c.Mode, Workers: c.Workers, Retries: c.Retries, WindowBytes: c.WindowBytes,
		UnitTxns: c.UnitTxns, UnitBytes: c.UnitBytes}.WithDefaults()
	c.Mode, c.Workers, c.Retries, c.WindowBytes, c.UnitTxns, c.UnitBytes = s.Mode, s.Workers, s.Retries, s.WindowBytes, s.UnitTxns, s.UnitBytes
	if c.ReadAheadBytes <= 0 {
		c.ReadAheadBytes = DefaultReadAheadBytes
	}
	if c.ReconnectTimeout <= 0 {
		c.ReconnectTimeout = DefaultReconnectTimeout
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// Defaults of Config besides the sequencer's (Config.defaults).
const (
	DefaultReadAheadBytes   = readahead.DefaultBytes
	DefaultReconnectTimeout = time.Minute
)

// ResolveDDL says whether the DDL of transaction ID took effect
// (DDLApplied or DDLNotApplied).
type ResolveDDL struct{ ID, As string }

// ParseResolveDDL parses "ID=applied" or "ID=not-applied".
func ParseResolveDDL(s string) (ResolveDDL, error) {
	id, as, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok || id == "" || (as != DDLApplied && as != DDLNotApplied) {
		return ResolveDDL{}, fmt.Errorf("--pending-ddl %q: want GTID=%s or GTID=%s (or FILE:POS=...)", s, DDLApplied, DDLNotApplied)
	}
	return ResolveDDL{ID: id, As: as}, nil
}

// Stats of a run. A snapshot: maps and slices are the caller's.
type Stats struct {
	Txns       uint64 // source transactions applied (committed)
	Skipped    uint64 // read and counted in the position, not applied (filtered or already applied)
	Rows       uint64
	Bytes      uint64
	Retries    uint64
	RetriesBy  map[string]uint64        // Retries by cause (sequencer.RetryYield, ...)
	Serialized map[depend.Reason]uint64 // how often a transaction waited, by reason
	Elapsed    time.Duration
	Last       position.Checkpoint // last committed position

	Read     uint64              // source transactions read
	ReadPos  position.Checkpoint // end of the last transaction read (File, Pos, LastGTID, SourceTS)
	Lag      time.Duration       // now minus the source commit time of the oldest transaction not yet applied; 0 when caught up
	InFlight int                 // transactions read and not yet committed
	// QueueBytes of InFlight against the window (WindowBytes).
	QueueBytes, WindowBytes int
	Units                   uint64   // target commits of row transactions
	CompactedRows           uint64   // source row changes compaction made unnecessary
	CompactFallbacks        uint64   // units re-applied in source order after a compacted statement surprised
	RowEvents               uint64   // source row changes sent as rows events (BINLOG statements), not SQL
	UnitHist                []uint64 // commit units by source transactions, bounds UnitBuckets (+1 overflow)
	Workers                 []WorkerStat
	Reconnects              uint64
	Errors                  map[string]uint64 // failed attempts by class: conflict, retry, connection, fatal
	// Concurrency is how many units may be in flight now (at most
	// Workers); Yields count units rolled back or killed for an earlier
	// one, by cause (sequencer.YieldLockWait, ...).
	Concurrency int
	Yields      map[string]uint64
	LastError   string
}

// Reasons of Stats.Serialized besides the tracker's: a unit larger than
// the window ran alone; the window was full, so reading waited.
const (
	ReasonBigTransaction = sequencer.ReasonBigTransaction
	ReasonWindowFull     = sequencer.ReasonWindowFull
)

// Rate is applied transactions per second.
func (s Stats) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Txns) / s.Elapsed.Seconds()
}

// Run applies src to tgt until src ends (io.EOF), the filter says Stop,
// or ctx is cancelled (then what is in flight is finished and committed).
// A source error is returned after every complete transaction before it
// has been applied.
func Run(ctx context.Context, src Source, tgt Target, res Resume, cfg Config) (Stats, error) {
	cfg.defaults()
	e, err := newEngine(tgt, res, cfg)
	if err != nil {
		return Stats{}, err
	}
	return e.run(ctx, src)
}
