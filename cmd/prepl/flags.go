package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/internal/cli"
	prun "github.com/prepl/prepl/run"
	"github.com/prepl/prepl/sequencer"
)

// applyFlags are the flags every applying command shares.
type applyFlags struct {
	target    string
	workers   int
	fixedWork bool
	prefetch  int
	mode      string
	retries   int
	window    string
	memory    string
	memBytes  int // --memory-budget, parsed by config
	keepGTID  bool
	unit      int
	compact   bool
	rowEvents bool
	channel   string
	logFormat string
	logLevel  string
	progress  time.Duration
	reconnect time.Duration
	// standby waits for the channel's active prepl and takes over;
	// takeover is the lease of the channel's lock (docs/standby.md).
	standby  bool
	takeover time.Duration
	// readOnly opens the target without creating prepl's tables (status).
	readOnly bool
	maxEvent string
	maxTxn   string
	// pendingDDL is the user's word on a DDL a crash interrupted.
	pendingDDL string

	gate prun.GateOptions // pause and throttling (throttle.go)
	pg   pgFlags          // the PostgreSQL mapping's options (copy.go)

	ops // metrics, filters, progress bar (ops.go)
	// secrets: password files, option files, TLS (secrets.go)
	secrets prun.Secrets
}

func (f *applyFlags) register(fs *flag.FlagSet, defaultChannel string) {
	fs.StringVar(&f.target, "target", "", "target server URL: mysql://USER@HOST:PORT[?ssl-mode=MODE&ssl-ca=FILE&ssl-cert=FILE&ssl-key=FILE]\n"+
		"or mysql://USER@localhost?socket=/path, or postgres://USER@HOST:5432/DB (required); the password from\n"+
		"--target-password-file, PREPL_TARGET_PASSWORD, --defaults-file or MYSQL_PWD (PostgreSQL: also PGPASSWORD, ~/.pgpass)\n"+
		"rather than in the URL, where ps and shell history show it")
	fs.IntVar(&f.workers, "workers", 4, "worker connections to the target, a ceiling: prepl runs between 1 and this many units at once,\n"+
		"as many as it measures fastest (prepl_concurrency, prepl status); 0 applies serially on one connection")
	fs.BoolVar(&f.fixedWork, "fixed-workers", false, "run --workers units at once all along instead of measuring how many are fastest")
	fs.StringVar(&f.mode, "mode", string(depend.Writeset), "how transactions are found independent: "+strings.Join(modeNames(), ", ")+
		"\n(serial: one at a time; commit-order: the source's group commits; writeset: prepl's own key analysis, any source;\n"+
		"optimistic/aggressive: run ahead, roll back and retry on conflict;\n"+
		"schema/domain: writeset, serial within a schema, committing in order only within a schema/GTID domain).\n"+
		"Every mode but schema/domain commits in the source's order: the target only shows states the source had.\n"+
		"schema/domain commit in order within a schema/domain and out of order across them, each with its own\n"+
		"position row; a restart resumes each one exactly where it stopped. Row keys still order them: a transaction\n"+
		"waits for an earlier one of another schema/domain that touches the same key (or a DDL, a foreign key\n"+
		"parent, a table without a key) until that one has committed, so the end state is always the source's")
	fs.IntVar(&f.retries, "retries", sequencer.DefaultRetries, "retries of a transaction after a deadlock or lock wait timeout (like slave_transaction_retries)")
	fs.StringVar(&f.window, "window", "", "read-ahead window in bytes (like slave_parallel_max_queued): transactions admitted and not yet\n"+
		"committed; a bigger transaction runs alone (default: a quarter of --memory-budget)")
	fs.StringVar(&f.memory, "memory-budget", prun.DefaultMemoryBudget, "bytes of transactions prepl holds in flight, by their size in memory: a quarter is the\n"+
		"--window, an eighth the transactions decoded ahead of it, the rest the SQL rendered for the window and\n"+
		"the decoding (a bigger --window raises it to 4 times the window); Go's soft memory limit is set to this\n"+
		"plus "+formatBytes(prun.MemoryLimitRoom)+" (GOMEMLIMIT in the environment wins). One transaction larger than the budget is still applied,\n"+
		"alone, up to --max-txn-size, and takes about 3 times its binlog size")
	fs.IntVar(&f.unit, "commit-unit", sequencer.DefaultUnitTxns, "commit up to this many consecutive source transactions as one target transaction;\n"+
		"units commit in source order, so the target only ever shows states the source had.\n"+
		"1: one target transaction per source transaction")
	fs.BoolVar(&f.compact, "compact", true, "send each commit unit's net effect per table as multi-row statements (tables with one unique key\n"+
		"and no triggers; not a unit that can set off a cascading foreign key); --compact=false sends every row change\n"+
		"as its own statement")
	fs.BoolVar(&f.rowEvents, "row-events", true, "send a compacted unit's inserts and updates to a MariaDB target from a MariaDB source as rows\n"+
		"events in BINLOG statements, the binlog's own row images, which cost the server about half the CPU of SQL\n"+
		"(where the target's columns are the binlog's, type for type, and its user holds BINLOG REPLAY or SUPER;\n"+
		"else as SQL); --row-events=false: always SQL")
	fs.IntVar(&f.prefetch, "prefetch", 0, "connections that read ahead, with SELECTs by key, the index pages the transactions about to be\n"+
		"applied will touch, so that a target whose data does not fit in its buffer pool waits less on disk reads (0: off;\n"+
		"experimental: not faster in the I/O-bound benchmark, docs/benchmarks.md config D)")
	fs.BoolVar(&f.keepGTID, "keep-gtid", false, "write each source transaction as its own target transaction carrying the source GTID\n(MariaDB targets with a binlog; for replicas that take part in failover)")
	fs.StringVar(&f.pendingDDL, "pending-ddl", "", "ID=applied or ID=not-applied: tell prepl whether the DDL of transaction ID (its GTID, or FILE:POS),\n"+
		"interrupted by a crash, took effect on the target. Needed only when prepl stops and asks: on a target with\n"+
		"atomic DDL (MariaDB 10.6+, MySQL 8.0+) prepl decides by itself from the catalog's state before the DDL.\n"+
		"It answers the same question for transactions that wrote non-transactional tables (MyISAM, Aria) without\n"+
		"a single unique key, which prepl cannot apply again idempotently")
	fs.StringVar(&f.channel, "channel", defaultChannel, "name of this stream's position in the target's prepl.position table")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.DurationVar(&f.progress, "progress", 10*time.Second, "log a progress line this often (0 turns it off)")
	fs.DurationVar(&f.reconnect, "reconnect-timeout", apply.DefaultReconnectTimeout, "how long to retry a lost target connection before giving up")
	fs.BoolVar(&f.standby, "standby", false, "if another prepl is applying this --channel (it holds the channel's lock on the target), wait\n"+
		"for it to go instead of refusing, then take over: raise the channel's epoch (which fences the other: a commit of\n"+
		"its is refused from then on, exit 3) and resume from the stored position. MySQL/MariaDB targets; see docs/standby.md")
	fs.DurationVar(&f.takeover, "takeover-after", prun.DefaultTakeoverAfter, "the lease of the channel's lock, standby or not: the target drops the lock of an active prepl\n"+
		"that has not pinged it for this long (dead, hung, cut off), and a --standby takes over at once (whole seconds, at least 2s)")
	fs.StringVar(&f.maxEvent, "max-event-size", formatBytes(binlog.DefaultMaxEventSize), "largest binlog event accepted (the servers' limit: max_allowed_packet is at most 1GiB),\n"+
		"and the most one event's MariaDB compressed column values may inflate to; a bigger one is taken for\n"+
		"damage and stops the run")
	fs.StringVar(&f.maxTxn, "max-txn-size", defaultMaxTxnSize, "largest transaction accepted, its events' bytes summed; prepl holds a transaction whole in memory\n"+
		"(about 5 times its binlog size), so a bigger one is refused before anything of it is applied, with an error that\n"+
		"names it and says how to go on (raise this when the host has the memory, or apply it outside prepl and leave it out)")
	f.registerOps(fs)
	registerGate(fs, &f.gate)
	f.pg.register(fs)
	registerSecrets(fs, &f.secrets)
}

func modeNames() []string {
	var out []string
	for _, m := range depend.Modes {
		out = append(out, string(m))
	}
	return out
}

func (f *applyFlags) config(log *slog.Logger) (apply.Config, error) {
	mode, err := depend.ParseMode(f.mode)
	if err != nil {
		return apply.Config{}, fmt.Errorf("%w: --mode: %v", errUsage, err)
	}
	if f.unit < 1 {
		return apply.Config{}, fmt.Errorf("%w: --commit-unit must be 1 or more", errUsage)
	}
	if f.workers < 0 {
		return apply.Config{}, fmt.Errorf("%w: --workers must be 0 or more", errUsage)
	}
	if f.takeover < 2*time.Second {
		return apply.Config{}, fmt.Errorf("%w: --takeover-after must be 2s or more (the target's wait_timeout counts whole seconds, "+
			"and the active pings within a quarter of it)", errUsage)
	}
	if f.memBytes, err = parseBytes(f.memory); err != nil {
		return apply.Config{}, fmt.Errorf("%w: --memory-budget: %v", errUsage, err)
	}
	window := prun.WindowOf(f.memBytes)
	if f.window != "" {
		if window, err = parseBytes(f.window); err != nil {
			return apply.Config{}, fmt.Errorf("%w: --window: %v", errUsage, err)
		}
		// A window past its quarter raises the budget: a memory limit
		// below what the window holds would have the collector run
		// without end.
		f.memBytes = max(f.memBytes, 4*window)
	}
	resolve, err := f.resolveDDL()
	if err != nil {
		return apply.Config{}, err
	}
	return apply.Config{Mode: mode, Workers: f.workers, FixedWorkers: f.fixedWork, Retries: f.retries, WindowBytes: window,
		ReadAheadBytes: int(f.readAheadBytes()), UnitTxns: f.unit, NoCompact: !f.compact, Log: log, ProgressEvery: f.progress,
		ReconnectTimeout: f.reconnect, ResolveDDL: resolve}, nil
}

// resolveDDL is --pending-ddl, the user's word on interrupted work: the
// engine's for a DDL, the MySQL target's for non-transactional rows.
func (f *applyFlags) resolveDDL() (apply.ResolveDDL, error) {
	if f.pendingDDL == "" {
		return apply.ResolveDDL{}, nil
	}
	r, err := apply.ParseResolveDDL(f.pendingDDL)
	if err != nil {
		return apply.ResolveDDL{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	return r, nil
}

// readAheadBytes is what the binlog reader may decode ahead of the engine,
// an eighth of the budget: the file reader's (fileset.Options), whose
// batches the engine takes directly, or else the engine's own reader's
// (apply.Config.ReadAheadBytes): one read-ahead in either case.
func (f *applyFlags) readAheadBytes() int64 { return int64(f.memBytes / 8) }

// limits are the binlog reader's caps from --max-event-size and --max-txn-size.
func (f *applyFlags) limits() (binlog.Limits, error) {
	ev, err := parseBytes(f.maxEvent)
	if err != nil {
		return binlog.Limits{}, fmt.Errorf("%w: --max-event-size: %v", errUsage, err)
	}
	tx, err := parseBytes(f.maxTxn)
	if err != nil {
		return binlog.Limits{}, fmt.Errorf("%w: --max-txn-size: %v", errUsage, err)
	}
	return binlog.Limits{MaxEvent: int64(ev), MaxTxn: int64(tx)}, nil
}

// setup makes the logger and the apply configuration from the flags.
func (f *applyFlags) setup(stderr io.Writer) (*slog.Logger, apply.Config, error) {
	log, err := f.logger(stderr)
	if err != nil {
		return nil, apply.Config{}, err
	}
	cfg, err := f.config(log)
	if err == nil {
		err = f.setupOps()
	}
	if err == nil {
		prun.SetMemoryLimit(f.memBytes) // Go's soft memory limit
	}
	return log, cfg, err
}

// logger makes the log of --log-format and --log-level on stderr (through
// the progress bar's terminal when there is one); it becomes slog's default.
func (f *applyFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	return cli.Logger(f.terminal(stderr), f.logFormat, f.logLevel)
}

func printSummary(w io.Writer, s apply.Stats) {
	fmt.Fprintf(w, "applied %d transactions (%d rows, %d bytes) in %s: %.0f txn/s; skipped %d; retries %d\n",
		s.Txns, s.Rows, s.Bytes, s.Elapsed.Round(time.Millisecond), s.Rate(), s.Skipped, s.Retries)
	if s.Units > 0 {
		fmt.Fprintf(w, "commit units: %d (%.1f transactions each); row changes saved by compaction: %d; units re-applied in order: %d\n",
			s.Units, float64(s.Txns)/float64(s.Units), s.CompactedRows, s.CompactFallbacks)
		if s.RowEvents > 0 {
			fmt.Fprintf(w, "row changes sent as rows events (BINLOG statements) rather than SQL: %d\n", s.RowEvents)
		}
	}
	if s.Last.File != "" || s.Last.GTIDPos != "" {
		fmt.Fprintf(w, "position: %s:%d gtid %s\n", s.Last.File, s.Last.Pos, s.Last.GTIDPos)
	}
	if why := prun.Serialized(s.Serialized); why != "" {
		fmt.Fprintf(w, "serialized: %s\n", why)
	}
}

// options makes the logger, the engine's configuration and the rest of a
// run's options from the flags.
func (f *applyFlags) options(stderr io.Writer) (prun.Options, error) {
	log, cfg, err := f.setup(stderr)
	if err != nil {
		return prun.Options{}, err
	}
	tgt, err := f.targetOptions()
	if err != nil {
		return prun.Options{}, err
	}
	return prun.Options{Log: log, Config: cfg, Tables: f.tables, Secrets: &f.secrets, Target: tgt,
		ReadAheadBytes: f.readAheadBytes(), Prefetch: f.prefetch, Gate: f.gate, Standby: f.standby, TakeoverAfter: f.takeover,
		Watch: prun.WatchOptions{Version: version, MetricsAddr: f.metricsAddr, WebConfig: f.webConfig, Progress: f.progress,
			Terminal: f.term, ProgressBar: f.progressBar}}, nil
}

// targetOptions say how to open --target.
func (f *applyFlags) targetOptions() (prun.TargetOptions, error) {
	resolve, err := f.resolveDDL()
	return prun.TargetOptions{URL: f.target, Channel: f.channel, Reconnect: f.reconnect, KeepGTID: f.keepGTID,
		SQLRows: !f.rowEvents, ReadOnly: f.readOnly, PendingDDL: resolve, PGOptions: f.pg.options}, err
}

// report prints what a run ended with: its figures when the engine ran,
// then its warnings (in the log too, but for a dry run's).
func report(o prun.Options, stdout io.Writer, sum prun.Summary, dry bool) {
	if sum.Ran {
		printSummary(stdout, sum.Stats)
	}
	log := o.Log
	if dry {
		log = nil
	}
	for _, msg := range sum.Warnings {
		warn(log, stdout, msg)
	}
}

// parseBytes, formatBytes and defaultWindow are package run's, which
// analyze shares.
var (
	parseBytes    = prun.ParseBytes
	formatBytes   = prun.FormatBytes
	defaultWindow = prun.DefaultWindow
)

// defaultMaxTxnSize is --max-txn-size's, which analyze shares.
const defaultMaxTxnSize = prun.DefaultMaxTxnSize
