package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/prepl/prepl/analyze"
	"github.com/prepl/prepl/analyze/calibrate"
	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/binlog/stream"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/redact"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/txn"
)

// analyzeFlags are prepl analyze's flags.
type analyzeFlags struct {
	source, startGTID          string
	duration                   time.Duration
	json                       bool
	html                       string
	catalog, calibrate         string
	workers, modes, compare    string
	unit, top, history         int
	window, big                string
	costRow, costStmt, costKiB time.Duration
	costCommit, costDDL        time.Duration
	costConflict, costRead     time.Duration
	costReadKiB, costStart     time.Duration
	fixedWorkers               bool
	cores                      float64
	compact                    bool
	maxEvent, maxTxn           string
	lim                        binlog.Limits // from maxEvent, maxTxn (options)
}

func (f *analyzeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.source, "source", "", "read a live source's binlog over the replication protocol instead of FILEs:\nmysql://USER@HOST:PORT[?ssl-mode=...&ssl-ca=FILE] (needs REPLICATION SLAVE and REPLICATION CLIENT;\n"+
		"password from PREPL_SOURCE_PASSWORD or MYSQL_PWD)")
	fs.StringVar(&f.startGTID, "start-gtid", "", "with --source: start after this GTID position (default: the oldest binlog)")
	fs.DurationVar(&f.duration, "duration", 0, "with --source: read for this long, following new transactions, then report\n(default: stop at the end the source had when analyze started)")
	fs.BoolVar(&f.json, "json", false, "write the report as JSON instead of text")
	fs.StringVar(&f.html, "html", "", "also write a self-contained HTML report with charts to this file")
	fs.StringVar(&f.catalog, "catalog", "", "read table definitions (keys, unique keys, foreign keys, triggers) from this server;\n"+
		"tables it lacks come from the binlog's metadata. Default: the --source server if any, else the\n"+
		"binlog's metadata only. 'binlog' forces the binlog's metadata")
	fs.StringVar(&f.calibrate, "calibrate", "", "measure the cost model on this target first (creates and drops a scratch table in\n"+
		"database prepl_calibrate): per row, per KiB, per commit, per DDL, and its parallel capacity")
	fs.StringVar(&f.workers, "workers", commaList(analyze.DefaultWorkers), "worker counts to predict (each is a simulated run: fewer is faster)")
	fs.StringVar(&f.modes, "modes", commaList(analyze.DefaultModes), "modes to predict: "+strings.Join(modeNames(), ", "))
	fs.IntVar(&f.unit, "commit-unit", sequencer.DefaultUnitTxns, "commit unit of the apply to predict: consecutive source transactions per target commit\n(as replay/replicate --commit-unit; 1: one target transaction per source transaction)")
	fs.StringVar(&f.compare, "compare-units", "", "other commit unit sizes to predict, for comparison, e.g. 1,50\n(each adds as many simulated runs as the main one)")
	fs.StringVar(&f.window, "window", defaultWindow(), "read-ahead window of the apply to predict (as replay/replicate --window;\n"+
		"the default is theirs: a quarter of their default --memory-budget)")
	fs.BoolVar(&f.compact, "compact", true, "predict the engine with compaction (a unit's net effect per table as multi-row statements,\nas replay/replicate --compact); false: one statement per row change")
	fs.StringVar(&f.big, "big", formatBytes(analyze.DefaultBigBytes), "a transaction at least this big in the binlog is listed as big")
	fs.IntVar(&f.top, "top", analyze.DefaultTop, "offenders listed per kind (tables, hot keys, largest transactions)")
	fs.IntVar(&f.history, "history", analyze.DefaultHistory, "look for dependencies this many transactions back (like MySQL's\nbinlog_transaction_dependency_history_size); larger is slower")
	fs.DurationVar(&f.costRow, "cost-row", 0, "cost model: per row change (default "+analyze.DefaultCosts.Row.String()+", or calibrated)")
	fs.DurationVar(&f.costStmt, "cost-stmt", 0, "cost model: per SQL statement inside a transaction (default "+analyze.DefaultCosts.Stmt.String()+")")
	fs.DurationVar(&f.costKiB, "cost-kib", 0, "cost model: per KiB of binlog events (default "+analyze.DefaultCosts.PerKiB.String()+")")
	fs.DurationVar(&f.costCommit, "cost-commit", 0, "cost model: per target commit, paid in order (default "+analyze.DefaultCosts.Commit.String()+")")
	fs.DurationVar(&f.costDDL, "cost-ddl", 0, "cost model: per DDL statement (default "+analyze.DefaultCosts.DDL.String()+")")
	fs.DurationVar(&f.costConflict, "cost-conflict", 0, "cost model: stall of a row conflict in optimistic mode (default "+analyze.DefaultCosts.Conflict.String()+")")
	fs.DurationVar(&f.costRead, "cost-read", 0, "cost model: prepl's reader, per transaction (default "+analyze.DefaultCosts.ReadTxn.String()+")")
	fs.DurationVar(&f.costReadKiB, "cost-read-kib", 0, "cost model: prepl's reader, per KiB (default "+analyze.DefaultCosts.ReadKiB.String()+")")
	fs.DurationVar(&f.costStart, "cost-start", 0, "cost model: a run's fixed cost besides applying: starting, connecting, scanning the files,\ncreating prepl's tables on a new target (default "+analyze.DefaultCosts.Start.String()+", or calibrated)")
	fs.BoolVar(&f.fixedWorkers, "fixed-workers", false, "predict the engine as replay/replicate --fixed-workers run: --workers units in flight all along\n(default: the workers are a ceiling and the engine's controller chooses, as the engine does)")
	fs.StringVar(&f.maxEvent, "max-event-size", formatBytes(binlog.DefaultMaxEventSize), "largest binlog event accepted, as replay/replicate --max-event-size; a bigger one is taken for damage")
	fs.StringVar(&f.maxTxn, "max-txn-size", defaultMaxTxnSize, "largest transaction accepted, as replay/replicate --max-txn-size (analyze holds the\ntransactions of the simulated runs' windows in memory)")
	fs.Float64Var(&f.cores, "target-cores", 0, "cost model: units the target runs at full speed at once (0: as many as workers)")
}

// commaList writes a list as its flag takes it: "1,2,4".
func commaList[T any](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// runAnalyze runs prepl analyze. On SIGINT/SIGTERM (ctx cancelled) it
// stops at once, as it applies nothing: it reads no further, reports what
// it has read (marked interrupted) and returns errInterrupted.
func runAnalyze(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := analyzeCmd(ctx, args, stdout, stderr)
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w before anything was analyzed: %v", errInterrupted, err)
	}
	return err
}

func analyzeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f analyzeFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl analyze [flags] FILE...
       prepl analyze --source URL [--start-gtid G] [--duration D] [flags]

Tells, before anything is applied, how much parallelism a row-based binlog
holds and what holds it back: group commit sizes (MariaDB commit_id, as
Binlog_commits / Binlog_group_commits), MySQL intervals and their AMIL, the
same recomputed on prepl's own dependencies for every mode, the critical path,
the predicted speedup for 1 to 64 workers per mode (a simulation of prepl's
scheduler with commit units, on the binlog's real dependency graph and a cost
model), what serializes it by name (DDL, tables without a primary key, foreign
key parents, hot rows, big transactions, MySQL binlog rotations) and what to
change. Files of many GB are read in bounded memory. See docs/analyze.md.

Examples:
  prepl analyze /var/lib/mysql/binlog.000041 /var/lib/mysql/binlog.000042
  prepl analyze --json binlog.0000* > report.json
  prepl analyze --html report.html --calibrate mysql://root@replica:3306 binlog.000041
  PREPL_SOURCE_PASSWORD=... prepl analyze --source mysql://repl@10.0.0.1:3306 --start-gtid 0-1-1000 --duration 10m

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		// analyze's heap is its simulations' state, not a read-ahead
		// window: 200 keeps the CPU of prepl's 400 at two thirds of the
		// memory (measured on the oltp benchmark binlog). GOGC still wins.
		debug.SetGCPercent(200)
	}
	opt, err := f.options()
	if err != nil {
		return err
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// What analyze holds is bounded by the window and the number
		// of simulated runs (analyze.MemoryLimit); GOGC's slack would
		// take the process to 3 times that. The soft limit makes the
		// collector keep to it.
		debug.SetMemoryLimit(analyze.MemoryLimit(opt))
	}
	files := fs.Args()
	if err := f.checkInput(files); err != nil {
		return err
	}

	var srvCat *serverCatalog
	catURL := f.catalog
	if catURL == "" {
		catURL = f.source
	}
	if catURL != "" && catURL != "binlog" {
		if srvCat, err = openServerCatalog(ctx, catURL); err != nil {
			return err
		}
		defer srvCat.Close()
		opt.Catalog, opt.CatalogSource = srvCat, "server "+srvCat.name+" (tables it lacks: binlog metadata)"
	}

	if f.calibrate != "" {
		e, err := mysql.ParseURL(f.calibrate)
		if err != nil {
			return fmt.Errorf("%w: --calibrate: %v", errUsage, err)
		}
		c, err := calibrate.URL(ctx, e)
		if err != nil {
			return err
		}
		if len(files) > 0 {
			if c, err = measurePipeline(ctx, c, files, f.lim, srvCat, e); err != nil {
				return err
			}
			scan, err := measureScan(files)
			if err != nil {
				return err
			}
			// replay scans the files while it sets the target up (the
			// connections and DDL of c.Start after the process's start):
			// the run waits for the longer of the two.
			c.Start = max(c.Start, calibrate.ProcessStart+scan)
			var why string
			if c, why, err = measureUnits(ctx, e, c, files, f.lim, f.unit, f.compact); err != nil {
				return err
			}
			if why != "" {
				fmt.Fprintf(stderr, "prepl analyze: the target's time on the binlog's own units was not measured (%s): "+
					"the scratch table's costs stand\n", why)
			}
		}
		fmt.Fprintf(stderr, "calibrated on %s: %s\n", e, c)
		opt.Costs = f.overrideCosts(c)
	}

	var warnings []string
	var rd binlog.Reader
	var prog *progress
	readCtx := ctx
	if f.source != "" {
		var cancel context.CancelFunc
		if f.duration > 0 {
			readCtx, cancel = context.WithTimeout(ctx, f.duration)
			defer cancel()
		}
		sr, w, err := f.openSource(ctx)
		if err != nil {
			return err
		}
		rd, warnings = sr, w
		opt.Input = []string{redact.URL(f.source)}
		prog = newProgress(stderr, nil)
	} else {
		fr, err := fileset.Open(files, fileset.Options{Limits: f.lim})
		if err != nil {
			return err
		}
		rd = fr
		opt.Input = files
		prog = newProgress(stderr, files)
	}
	defer rd.Close()

	a := analyze.New(opt)
	readErr := analyzeStream(ctx, readCtx, rd, a, srvCat, prog, &warnings)
	prog.done()
	rep := a.Finish()
	rep.Files = analyze.FillFiles(rep.Files, files)
	if rep.Flavor == "" {
		rep.Flavor = string(rd.Flavor())
	}
	if srvCat != nil {
		warnings = append(warnings, srvCat.warnings()...)
	}
	rep.Warnings = append(rep.Warnings, warnings...)
	if readErr != nil {
		rep.Partial = fmt.Sprintf("the binlog could not be read further: %v; this report covers the %d complete transactions before it", readErr, rep.Summary.Transactions)
	} else if ctx.Err() != nil {
		rep.Partial = fmt.Sprintf("interrupted; this report covers the %d transactions read", rep.Summary.Transactions)
	}
	if err := writeReports(rep, f, stdout, stderr); err != nil {
		return err
	}
	if readErr != nil {
		return fmt.Errorf("read binlog: %w (the report above covers the %d complete transactions before it)", readErr, rep.Summary.Transactions)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: the report above covers the %d transactions read", errInterrupted, rep.Summary.Transactions)
	}
	return nil
}

// analyzeStream feeds the reader's transactions to the analyzer until the
// end. It returns the error that stopped reading early, if any: nil at the
// end of the files, at the source's end, at --duration, on interrupt, and
// when only the last transaction of the last file is incomplete (a file
// still being written), which becomes a warning.
func analyzeStream(ctx, readCtx context.Context, rd binlog.Reader, a *analyze.Analyzer, srvCat *serverCatalog, prog *progress, warnings *[]string) error {
	for {
		if ctx.Err() != nil {
			return nil // interrupted: the reader may still have transactions read ahead
		}
		tx, err := rd.Next(readCtx)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, binlog.ErrIncomplete):
			*warnings = append(*warnings, fmt.Sprintf("%v (the file may still be written; the incomplete transaction is left out)", err))
			return nil
		case readCtx.Err() != nil && ctx.Err() == nil:
			return nil // --duration elapsed
		case ctx.Err() != nil:
			return nil // interrupted: report what was read
		default:
			return err
		}
		if srvCat != nil {
			srvCat.prepare(ctx, tx)
		}
		a.Add(tx)
		prog.update(tx, a.Transactions())
	}
}

func writeReports(rep *analyze.Report, f analyzeFlags, stdout, stderr io.Writer) error {
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("write JSON report: %w", err)
		}
	} else if err := rep.WriteText(stdout); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if f.html == "" {
		return nil
	}
	out, err := os.Create(f.html)
	if err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	if err := rep.WriteHTML(out); err != nil {
		out.Close()
		return fmt.Errorf("write HTML report %s: %w", f.html, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("write HTML report %s: %w", f.html, err)
	}
	fmt.Fprintf(stderr, "HTML report written to %s\n", f.html)
	return nil
}

// options turns the flags into analyze.Options (without input and catalog).
func (f *analyzeFlags) options() (analyze.Options, error) {
	var opt analyze.Options
	for _, w := range strings.Split(f.workers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 1 || n > 4096 {
			return opt, fmt.Errorf("%w: --workers %q: want a comma-separated list of worker counts from 1 to 4096", errUsage, f.workers)
		}
		opt.Workers = append(opt.Workers, n)
	}
	for _, m := range strings.Split(f.modes, ",") {
		mode, err := depend.ParseMode(m)
		if err != nil {
			return opt, fmt.Errorf("%w: --modes: %v", errUsage, err)
		}
		opt.Modes = append(opt.Modes, mode)
	}
	if f.unit < 1 {
		return opt, fmt.Errorf("%w: --commit-unit must be 1 or more", errUsage)
	}
	for _, u := range strings.Split(f.compare, ",") {
		if strings.TrimSpace(u) == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(u))
		if err != nil || n < 1 {
			return opt, fmt.Errorf("%w: --compare-units %q: want a comma-separated list of unit sizes of 1 or more", errUsage, f.compare)
		}
		opt.CompareUnits = append(opt.CompareUnits, n)
	}
	if f.top < 1 || f.history < 1 {
		return opt, fmt.Errorf("%w: --top and --history must be 1 or more", errUsage)
	}
	window, err := parseBytes(f.window)
	if err != nil {
		return opt, fmt.Errorf("%w: --window: %v", errUsage, err)
	}
	big, err := parseBytes(f.big)
	if err != nil {
		return opt, fmt.Errorf("%w: --big: %v", errUsage, err)
	}
	ev, err := parseBytes(f.maxEvent)
	if err != nil {
		return opt, fmt.Errorf("%w: --max-event-size: %v", errUsage, err)
	}
	tx, err := parseBytes(f.maxTxn)
	if err != nil {
		return opt, fmt.Errorf("%w: --max-txn-size: %v", errUsage, err)
	}
	f.lim = binlog.Limits{MaxEvent: int64(ev), MaxTxn: int64(tx)}
	if f.cores < 0 {
		return opt, fmt.Errorf("%w: --target-cores must be 0 (unlimited) or more", errUsage)
	}
	opt.UnitTxns, opt.WindowBytes, opt.BigBytes, opt.Top, opt.History = f.unit, window, big, f.top, f.history
	opt.FixedWorkers = f.fixedWorkers
	opt.Costs = f.overrideCosts(analyze.Costs{})
	if f.compact {
		opt.Shape = compactShape
	}
	return opt, nil
}

// overrideCosts applies the --cost-* flags over c.
func (f *analyzeFlags) overrideCosts(c analyze.Costs) analyze.Costs {
	set := false
	for _, o := range []struct {
		flag time.Duration
		dst  *time.Duration
	}{{f.costRow, &c.Row}, {f.costStmt, &c.Stmt}, {f.costKiB, &c.PerKiB}, {f.costCommit, &c.Commit}, {f.costDDL, &c.DDL},
		{f.costConflict, &c.Conflict}, {f.costRead, &c.ReadTxn}, {f.costReadKiB, &c.ReadKiB}, {f.costStart, &c.Start}} {
		if o.flag > 0 {
			*o.dst, set = o.flag, true
		}
	}
	if f.cores > 0 {
		c.Cores, set = f.cores, true
	}
	if set {
		if c.Source == "" {
			c.Source = "defaults"
		}
		c.Source += ", with --cost-*/--target-cores flags"
	}
	return c
}

// checkInput checks that there is one input, and that the files exist.
func (f *analyzeFlags) checkInput(files []string) error {
	switch {
	case f.source == "" && len(files) == 0:
		return fmt.Errorf("%w: give binlog FILEs, or --source URL", errUsage)
	case f.source != "" && len(files) > 0:
		return fmt.Errorf("%w: give binlog FILEs or --source, not both", errUsage)
	case f.source == "" && (f.startGTID != "" || f.duration > 0):
		return fmt.Errorf("%w: --start-gtid and --duration go with --source", errUsage)
	}
	return checkBinlogFiles(files)
}

// openSource checks the source's binlog settings and starts reading it.
func (f *analyzeFlags) openSource(ctx context.Context) (binlog.Reader, []string, error) {
	e, err := mysql.ParseURL(f.source)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: --source: %v", errUsage, err)
	}
	e = e.Merge(mysql.Endpoint{Password: cmp.Or(os.Getenv("PREPL_SOURCE_PASSWORD"), os.Getenv("MYSQL_PWD"))})
	redact.Add(e.Password)
	if e.Socket != "" {
		return nil, nil, fmt.Errorf("%w: --source: the replication protocol is read over TCP; give HOST:PORT instead of socket=", errUsage)
	}
	db, err := e.OpenDB()
	if err != nil {
		return nil, nil, err
	}
	warnings, err := stream.Preflight(ctx, db)
	db.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("source %s: %w", e, err)
	}
	tc, fallback, err := e.TLSConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: --source: %v", errUsage, err)
	}
	rd, err := stream.Open(ctx, stream.Config{Host: e.Host, Port: e.Port, User: e.User, PasswordFunc: e.Secret,
		TLS: tc, TLSFallback: fallback, StartGTID: f.startGTID, StopAtEnd: f.duration == 0, Limits: f.lim})
	if err != nil {
		return nil, nil, fmt.Errorf("source %s: %w", e, mysql.ExplainTLSError(e, err))
	}
	return rd, warnings, nil
}

// measurePipeline times prepl's own reading, decoding and rendering on the
// first transactions of files (calibrate.Pipeline), as a dry run does them.
func measurePipeline(ctx context.Context, c analyze.Costs, files []string, lim binlog.Limits, srvCat *serverCatalog, tgt mysql.Endpoint) (analyze.Costs, error) {
	rd, err := fileset.Open(files, fileset.Options{Limits: lim})
	if err != nil {
		return c, err
	}
	defer rd.Close()
	db, err := tgt.OpenDB()
	if err != nil {
		return c, err
	}
	defer db.Close()
	tgtCat := mysql.NewCatalog(db)
	var b bytes.Buffer
	offline := mysql.NewOffline()
	script, err := offline.NewScript(&b, true)
	if err != nil {
		return c, err
	}
	return calibrate.Pipeline(c, func() (int, error) {
		t, err := rd.Next(ctx)
		if err != nil {
			return 0, err
		}
		if err := pipelineDefs(ctx, t, offline.Catalog, srvCat, tgtCat); err != nil {
			return 0, err
		}
		b.Reset()
		if err := script.Txn(ctx, t); err != nil {
			return 0, fmt.Errorf("--print-sql %s: %w", mysql.TxnID(t), err)
		}
		return t.Size, nil
	})
}

// pipelineDefs puts in defs the definitions of the tables t changes that
// it lacks (a rendering target's catalog, mysql.NewOffline), as the engine would find them: the binlog's metadata when it
// is full, else the catalog server's (--catalog, or --source), else the
// calibrated target's. A binlog written without binlog_row_metadata=FULL
// (MariaDB's default) names no columns: a server must have the table.
func pipelineDefs(ctx context.Context, t *txn.Txn, defs *mysql.Catalog, srvCat *serverCatalog, tgtCat *mysql.Catalog) error {
	for _, ch := range t.Changes {
		if ch.Row == nil || ch.Row.Table == nil {
			continue
		}
		tb := ch.Row.Table
		if _, ok := defs.Table(tb.Schema, tb.Name); ok {
			continue
		}
		d, err := binlog.TableDefFromMetadata(tb)
		if err == nil {
			defs.Put(tb.Schema, tb.Name, d)
			continue
		}
		if srvCat != nil {
			srvCat.prepare(ctx, t)
			if d, ok := srvCat.Table(tb.Schema, tb.Name); ok && d != nil {
				defs.Put(tb.Schema, tb.Name, d)
				continue
			}
		}
		d, lerr := tgtCat.Load(ctx, tb.Schema, tb.Name)
		if lerr == nil && len(d.Columns) == len(tb.Types) {
			defs.Put(tb.Schema, tb.Name, d)
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("calibrate prepl's own pipeline on %s at %s: %w; neither the --catalog server nor the --calibrate target "+
			"has the table with its %d columns: give --catalog with a server that has it (the source, or a replica), "+
			"or analyze binlogs written with binlog_row_metadata=FULL", mysql.TxnID(t), t.Start, err, len(tb.Types))
	}
	return nil
}

// scanSample is how many bytes of the files measureScan scans at most.
const scanSample = 256 << 20

// measureScan times what replay does with files before it applies
// anything: fileset.ScanFile of each (the continuity check), on up to
// scanSample bytes of them, scaled to their total size.
func measureScan(files []string) (time.Duration, error) {
	var total, scanned int64
	var took time.Duration
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return 0, err
		}
		total += st.Size()
		if scanned >= scanSample {
			continue
		}
		start := time.Now()
		if _, err := fileset.ScanFile(f); err != nil {
			return 0, err
		}
		took += time.Since(start)
		scanned += st.Size()
	}
	if scanned == 0 {
		return 0, nil
	}
	return time.Duration(float64(took) * float64(total) / float64(scanned)), nil
}

// measureUnits times the target's own work on the binlog's first units
// (calibrate.ScaleWork): up to calibrate.SampleTxns transactions of files,
// in units of unitTxns as the engine forms them while catching up,
// rendered by the target's own code (package mysql) as the engine renders
// them, sent on one connection and rolled back, best of three; the
// sample ends before the first unit that does not apply, or that writes
// a non-transactional table (its rows would stay). It needs the
// target where the binlog starts (a replica about to apply it): when the
// first unit does not apply there (a missing table or row), or the binlog
// starts with a DDL, the costs are returned as they are, with why.
func measureUnits(ctx context.Context, e mysql.Endpoint, c analyze.Costs, files []string, lim binlog.Limits, unitTxns int, compaction bool) (analyze.Costs, string, error) {
	rd, err := fileset.Open(files, fileset.Options{Limits: lim})
	if err != nil {
		return c, "", err
	}
	defer rd.Close()
	var units [][]*txn.Txn
	var unit []*txn.Txn
	for n := 0; n < calibrate.SampleTxns; n++ {
		t, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) || errors.Is(err, binlog.ErrIncomplete) {
			break
		}
		if err != nil {
			return c, "", err
		}
		if t.IsDDL() || t.XA {
			break // a unit of its own, not a row change's cost: the sample ends before it
		}
		if unit = append(unit, t); len(unit) == unitTxns {
			units, unit = append(units, unit), nil
		}
	}
	if len(unit) > 0 {
		units = append(units, unit)
	}
	if len(units) == 0 {
		return c, "the binlog starts with a DDL or an XA transaction", nil
	}
	// Opened as the engine opens it, so that the units are rendered as
	// it renders them (rows events on MariaDB), creating nothing.
	tgt, err := mysql.Open(ctx, e, "", mysql.Calibrating())
	if err != nil {
		return c, "", err
	}
	defer tgt.Close()
	meta := analyze.NewMetadataCatalog()
	shape := analyze.PlainShape
	if compaction {
		shape = compactShape
	}
	var batches []apply.Batch
	var work []float64
	for _, u := range units {
		bytes := 0
		for _, t := range u {
			meta.Observe(t)
			bytes += t.Size
			if err := tgt.Catalog.LoadTxn(ctx, t); err != nil {
				return c, err.Error(), nil
			}
		}
		b, err := tgt.Render(ctx, u, compaction)
		if err != nil {
			return c, err.Error(), nil
		}
		// A rollback leaves a non-transactional table's rows: the
		// calibration must not change the target, so the sample ends.
		if nt := b.(*mysql.Batch).NonTransactional(); len(nt) > 0 {
			if len(batches) == 0 {
				return c, "the binlog starts with changes to non-transactional tables (" + strings.Join(nt, ", ") +
					"), which a rolled-back unit would leave on the target", nil
			}
			break
		}
		batches = append(batches, b)
		work = append(work, c.Work(shape(u, meta), bytes, false))
	}
	conn, err := tgt.Conn(ctx)
	if err != nil {
		return c, "", err
	}
	defer conn.Close()
	// Each unit is rolled back before the next (each opens its own
	// transaction), so a unit that needs an earlier one's rows fails: the
	// sample ends before the first unit that fails.
	var sent time.Duration
	for range 3 {
		var d time.Duration
		for j, b := range batches {
			start := time.Now()
			err := conn.Send(ctx, b)
			took := time.Since(start)
			if rerr := conn.Rollback(ctx); rerr != nil {
				return c, "", rerr
			}
			if err != nil {
				if j == 0 {
					return c, err.Error(), nil
				}
				batches, work = batches[:j], work[:j]
				sent = 0 // the earlier rounds timed more units
				break
			}
			d += took
		}
		if sent == 0 || d < sent {
			sent = d
		}
	}
	model := 0.0
	for _, w := range work {
		model += w
	}
	return calibrate.ScaleWork(c, sent, model), "", nil
}
