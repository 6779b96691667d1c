package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sourceend"
	"github.com/prepl/prepl/txn"
)

type txnT = txn.Txn

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var af applyFlags
	af.register(fs, "replay")
	var sf selectFlags
	sf.register(fs)
	dryRun := fs.Bool("dry-run", false, "print what would be applied (transactions, GTID ranges, tables, DDL) and apply nothing;\n"+
		"no target is needed (with --target, its stored position is where the dry run starts)")
	printSQL := fs.Bool("print-sql", false, "with --dry-run: write the SQL prepl would send, one source transaction at a time\n"+
		"(as with --compact=false --commit-unit=1), for review; table definitions come from --target, else from\n"+
		"the binlog's full row metadata (binlog_row_metadata=FULL)")
	allowGaps := fs.Bool("allow-gaps", false, "apply files that leave transactions out (a deliberate subset), with a warning\nnaming each gap; a repeat or a wrong order is still refused")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl replay --target URL [flags] FILE...

Applies binlog files to the target, in parallel and in the files' order: the
replacement for 'mysqlbinlog FILE... | mysql' in point-in-time recovery.
The position is stored in the target (prepl.position, channel "replay") in the
same transaction as the rows, so after a crash the same command resumes
exactly where it stopped. A damaged file stops the replay with an error naming
the file and offset, after applying every complete transaction before it.

Before applying anything, replay checks that the files form one stream, in
the order given: each file's GTID list (MariaDB Gtid_list, MySQL
Previous_gtids) must be exactly the previous file's list plus the GTIDs that
file holds, and the first file must not start after the stored position (or
--start-gtid). Without GTIDs, the names (base.NNNNNN, one base, numbers up by
one) and the rotate event that ends a file decide. A missing file, a file
given twice or files out of order are refused with exit code 2, naming the
files and the GTIDs missing or repeated; nothing is applied. --allow-gaps
applies a deliberate subset (a warning names each gap). The check reads only
event headers and GTID events.

Selection, as mysqlbinlog's options of the same names (see docs/pitr.md):
--start-datetime/--stop-datetime (local time as mysqlbinlog prints it, or
--timezone, or a time with its zone), --start-position (first file),
--stop-position (last file), --database, --include-gtids/--exclude-gtids,
and --start-gtid, --stop-gtid, --skip-gtid, --skip-position FILE:OFFSET.
They choose transactions within the files; they do not count as gaps.
A transaction that cannot be applied (a partial JSON update without its
before image, a statement the target refuses) stops the replay before
anything of it, named by GTID and file:offset; --skip-gtid or
--skip-position leaves it out. --dry-run lists what would be applied and
touches nothing (no target needed); --print-sql adds the SQL.

A replica's relay logs are read too, their offsets their own (as
mariadb-binlog prints them), a transaction going on from one relay file
into the next. A lagging replica is caught up from its own relay logs:
STOP SLAVE SQL_THREAD, replay from its Relay_Log_File and Relay_Log_Pos
(--start-position) into it, then SET GLOBAL gtid_slave_pos to the GTID
position printed and START SLAVE (docs/pitr.md).

On a terminal a progress bar shows the bytes read of all files, the rate
and the time left. SIGINT or SIGTERM stops after what is in flight, with the
position stored: the same command resumes.

Examples:
  prepl replay --dry-run --stop-datetime "2026-11-20 09:59:00" /backup/binlog.000041 /backup/binlog.000042
  prepl replay --target mysql://root@127.0.0.1:3306 --workers 8 \
      --stop-datetime "2026-11-20 09:59:00" /backup/binlog.000041 /backup/binlog.000042
  prepl replay --config /etc/prepl/prepl.toml --include 'shop.*' \
      --rewrite-schema shop=shop_restored /backup/binlog.0000*

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		return fmt.Errorf("%w: give at least one binlog FILE", errUsage)
	}
	if err := checkBinlogFiles(files); err != nil {
		return err
	}
	log, cfg, err := af.setup(stderr)
	if err != nil {
		return err
	}
	sel, err := sf.parse(files)
	if err != nil {
		return err
	}
	cfg.Filter = af.filter(sel.filter)
	lim, err := af.limits()
	if err != nil {
		return err
	}
	if *printSQL && !*dryRun {
		return fmt.Errorf("%w: --print-sql goes with --dry-run (it prints, it does not apply)", errUsage)
	}
	sel.logSelection(log)

	// The continuity check reads the files from disk while the target is
	// set up over the network: each waits on something else.
	gtidSeen, inFiles := sel.scanGTIDs()
	scanned := scanFiles(files, gtidSeen)
	var tgt target
	var res apply.Resume
	var chRun *channelRun
	if !*dryRun || af.target != "" {
		if tgt, err = af.openTarget(ctx); err != nil {
			return err
		}
		defer tgt.Close()
		if err := tgt.checkStart(ctx, log, cfg); err != nil {
			return err
		}
		if !*dryRun {
			if chRun, err = claimChannel(ctx, log, tgt, &cfg); err != nil {
				return err
			}
			defer chRun.release()
		}
		if res, err = apply.LoadResume(ctx, tgt); err != nil {
			return err
		}
	}
	sums, err := checkFileSet(<-scanned, res, sf.startGTID, *allowGaps, log)
	if err != nil {
		return err
	}
	if err := sel.checkFiles(sums, inFiles); err != nil {
		return err
	}
	if my, ok := tgt.(myTarget); ok && af.keepGTID && my.IsMariaDB {
		for _, s := range sums {
			if s.Flavor == txn.MySQL {
				return fmt.Errorf("%w: --keep-gtid: %s is a MySQL binlog and the target is MariaDB: a MariaDB server cannot carry a "+
					"MySQL GTID (uuid:n), so no transaction could keep its GTID; replay without --keep-gtid (the target's own "+
					"binlog then gives each transaction a MariaDB GTID)", errUsage, s.Name)
			}
		}
	}
	fo := binlog.FileOptions{Limits: lim, ReadAheadBytes: af.readAheadBytes(), Skip: func(gtid string, start txn.Position) bool {
		return gtid != "" && sel.skipGTID[gtid] || sel.skipPos[start]
	}}
	if res.Found {
		for _, f := range files {
			if filepath.Base(f) == res.Position.File {
				fo.StartFile, fo.StartOffset = res.Position.File, res.Position.Pos
			}
		}
		log.Info("resuming from the target's stored position", "file", res.Position.File, "pos", res.Position.Pos,
			"gtid", res.Position.GTIDPos, "channel", af.channel)
	}
	rd, err := binlog.OpenFiles(files, fo)
	if err != nil {
		return err
	}
	defer rd.Close()
	if *dryRun {
		var my *mysql.Target // the definitions --print-sql reads
		if m, ok := tgt.(myTarget); ok {
			my = m.Target
		}
		if err := dryRunReplay(ctx, rd, cfg.Filter, my, *printSQL, sel.loc, stdout); err != nil {
			return err
		}
		for _, msg := range sel.warnings(af.unmatchedIncludes()) {
			warn(nil, stdout, msg)
		}
		return sel.startInside
	}
	gate, rctx, err := af.startGate(ctx, log, tgt.mysqlDB(), &cfg)
	if err != nil {
		return err
	}
	w, err := af.startWatch(ctx, log, &cfg, watchOptions{gate: gate, channel: chRun, info: metrics.Info{Command: "replay", Source: filesSource(files),
		Target: tgt.String()}, end: sourceend.NewFiles(files), bar: true,
		security: []any{"target_tls", tgt.security(ctx)}})
	if err != nil {
		return err
	}
	at, stopPrefetch := af.withPrefetch(log, tgt)
	stats, err := apply.Run(rctx, rd, at, res, cfg)
	stopPrefetch()
	err = gate.stop(rctx, err)
	if err == nil {
		err = sel.startInside
	}
	w.finish(stats, err)
	printSummary(stdout, stats)
	if err == nil {
		for _, msg := range sel.warnings(af.unmatchedIncludes()) {
			warn(log, stdout, msg)
		}
	}
	var refused *gomysql.MySQLError
	var pgRefused *pgconn.PgError
	if errors.As(err, &refused) || errors.As(err, &pgRefused) {
		applied := "nothing of that transaction is applied"
		if half, _ := tgt.halfApplied(ctx, af.channel); half != "" {
			// A non-transactional table keeps what ran before the error.
			applied = "but " + half
		}
		err = fmt.Errorf("%w\n%s. To go on without it (after checking what it does, with "+
			"--dry-run --print-sql): the same command with --skip-gtid GTID, or --skip-position FILE:OFFSET for a "+
			"transaction without GTID", err, applied)
	}
	return err
}

// continuityError is a file set that is not one stream: a mistake a
// restart cannot fix, so exit code 2 like a usage error.
type continuityError struct{ msg string }

func (e *continuityError) Error() string { return e.msg }
func (e *continuityError) Unwrap() error { return errUsage }

// scannedFiles is the continuity scan of a file set: a summary of each
// file, or the first error.
type scannedFiles struct {
	sums []binlog.FileSummary
	err  error
}

// scanFiles scans files (binlog.ScanFileFor, calling gtid with each GTID)
// in a goroutine; the result comes on the channel.
func scanFiles(files []string, gtid func(string)) <-chan scannedFiles {
	out := make(chan scannedFiles, 1)
	go func() {
		sums := make([]binlog.FileSummary, len(files))
		for i, f := range files {
			s, err := binlog.ScanFileFor(f, gtid)
			if err != nil {
				out <- scannedFiles{err: err}
				return
			}
			sums[i] = s
		}
		out <- scannedFiles{sums: sums}
	}()
	return out
}

// checkFileSet refuses files that do not form one stream from the position
// already applied (stored, else --start-gtid), before anything is applied.
func checkFileSet(scan scannedFiles, res apply.Resume, startGTID string, allowGaps bool, log *slog.Logger) ([]binlog.FileSummary, error) {
	if scan.err != nil {
		return nil, scan.err
	}
	sums := scan.sums
	problems := binlog.CheckContinuity(sums)
	what, pos, file := "--start-gtid", startGTID, ""
	if res.Found {
		what, pos, file = "the stored position", res.Position.GTIDPos, res.Position.File
	}
	if p := binlog.CheckResume(what, pos, file, sums[0]); p != nil {
		problems = append(problems, *p)
	}
	refuse, warn := binlog.Refusals(problems, allowGaps)
	for _, p := range warn {
		if p.Kind == binlog.Gap {
			log.Warn("applying a file set with a gap (--allow-gaps): " + p.Msg)
		} else {
			log.Warn(p.Msg)
		}
	}
	if len(refuse) == 0 {
		return sums, nil
	}
	msgs := make([]string, len(refuse))
	for i, p := range refuse {
		msgs[i] = p.Msg + remedy(p.Kind)
	}
	return nil, &continuityError{"the files do not form one stream, nothing applied: " + strings.Join(msgs, "\n  ")}
}

func remedy(k binlog.ProblemKind) string {
	switch k {
	case binlog.Gap:
		return "; give the missing files, or --allow-gaps to apply a deliberate subset"
	case binlog.Repeat:
		return "; give each file once"
	}
	return ""
}
