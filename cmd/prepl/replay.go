package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
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
	startGTID := fs.String("start-gtid", "", "GTID position already applied: start with the transaction after it (per domain)")
	stopGTID := fs.String("stop-gtid", "", "stop after applying this GTID (inclusive)")
	stopDatetime := fs.String("stop-datetime", "", "stop before the first transaction committed at or after this UTC time\n(\"2006-01-02 15:04:05\" or RFC 3339)")
	var skip multiFlag
	fs.Var(&skip, "skip-gtid", "do not apply this GTID (repeatable); the position still moves past it")
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
event headers and GTID events. --start-gtid, --stop-gtid, --stop-datetime and
--skip-gtid select within the stream; they do not count as gaps.

On a terminal a progress bar shows the bytes read of all files, the rate
and the time left. SIGINT or SIGTERM stops after what is in flight, with the
position stored: the same command resumes.

Examples:
  prepl replay --target mysql://root@127.0.0.1:3306 --workers 8 \
      --stop-datetime "2026-11-20 09:59:00" /backup/binlog.000041 /backup/binlog.000042
  prepl replay --config /etc/prepl/prepl.toml --include 'shop.*' \
      --rewrite-schema shop=shop_restored /backup/binlog.0000*

Flags:
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		return fmt.Errorf("%w: give at least one binlog FILE", errUsage)
	}
	log, cfg, err := af.setup(stderr)
	if err != nil {
		return err
	}
	filter, err := replayFilter(*startGTID, *stopGTID, *stopDatetime, skip)
	if err != nil {
		return err
	}
	cfg.Filter = af.filter(filter)
	lim, err := af.limits()
	if err != nil {
		return err
	}

	tgt, err := af.openTarget(ctx)
	if err != nil {
		return err
	}
	defer tgt.Close()
	checkPrivileges(ctx, log, tgt.DB, "target", tgt.Endpoint, targetNeeds(ctx, tgt, cfg))
	res, err := apply.LoadResume(ctx, tgt)
	if err != nil {
		return err
	}
	if err := checkFileSet(files, res, *startGTID, *allowGaps, log); err != nil {
		return err
	}
	fo := binlog.FileOptions{Limits: lim}
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
	w, err := af.startWatch(ctx, log, &cfg, watchOptions{info: metrics.Info{Command: "replay", Source: filesSource(files),
		Target: tgt.Endpoint.String()}, end: newFileEnd(files), bar: true,
		security: []any{"target_tls", mysql.Security(ctx, tgt.DB, tgt.Endpoint)}})
	if err != nil {
		return err
	}
	stats, err := apply.Run(ctx, rd, tgt, res, cfg)
	w.finish(stats, err)
	printSummary(stdout, stats)
	return err
}

func replayFilter(start, stop, stopAt string, skip []string) (func(*txn.Txn) apply.Action, error) {
	var startPos *position.Set
	if start != "" {
		p, err := position.ParseSet(start)
		if err != nil {
			return nil, fmt.Errorf("%w: --start-gtid: %v", errUsage, err)
		}
		startPos = p
	}
	var until func(*txn.Txn) apply.Action
	if stop != "" {
		until = untilFilter(stop)
	}
	var stopTime time.Time
	if stopAt != "" {
		var err error
		for _, layout := range []string{"2006-01-02 15:04:05", time.RFC3339, "2006-01-02T15:04:05"} {
			if stopTime, err = time.ParseInLocation(layout, stopAt, time.UTC); err == nil {
				break
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: --stop-datetime %q: want \"2006-01-02 15:04:05\" (UTC) or RFC 3339", errUsage, stopAt)
		}
	}
	skipSet := map[string]bool{}
	for _, g := range skip {
		skipSet[g] = true
	}
	return func(t *txn.Txn) apply.Action {
		if !stopTime.IsZero() && !t.Timestamp.Before(stopTime) {
			return apply.Stop
		}
		if startPos != nil && startPos.Contains(t) {
			return apply.Skip
		}
		if skipSet[t.GTID] {
			return apply.Skip
		}
		if until != nil {
			return until(t)
		}
		return apply.Apply
	}, nil
}

// continuityError is a file set that is not one stream: a mistake a
// restart cannot fix, so exit code 2 like a usage error.
type continuityError struct{ msg string }

func (e *continuityError) Error() string { return e.msg }
func (e *continuityError) Unwrap() error { return errUsage }

// checkFileSet refuses files that do not form one stream from the position
// already applied (stored, else --start-gtid), before anything is applied.
func checkFileSet(files []string, res apply.Resume, startGTID string, allowGaps bool, log *slog.Logger) error {
	sums := make([]binlog.FileSummary, len(files))
	for i, f := range files {
		s, err := binlog.ScanFile(f)
		if err != nil {
			return err
		}
		sums[i] = s
	}
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
		return nil
	}
	msgs := make([]string, len(refuse))
	for i, p := range refuse {
		msgs[i] = p.Msg + remedy(p.Kind)
	}
	return &continuityError{"the files do not form one stream, nothing applied: " + strings.Join(msgs, "\n  ")}
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
