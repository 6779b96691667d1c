package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	prun "github.com/prepl/prepl/run"
)

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var af applyFlags
	af.register(fs, prun.ReplayChannel)
	var sf prun.SelectSpec
	registerSelect(fs, &sf)
	dryRun := fs.Bool("dry-run", false, "print what would be applied (transactions, GTID ranges, tables, DDL) and apply nothing;\n"+
		"no target is needed (with --target, its stored position is where the dry run starts)")
	printSQL := fs.Bool("print-sql", false, "with --dry-run: write the SQL the target would be sent, rendered by the applier, each source\n"+
		"transaction a commit unit of its own (as with --commit-unit 1), for review; table definitions come from --target,\n"+
		"else from the binlog's full row metadata (binlog_row_metadata=FULL)")
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
	o, err := af.options(stderr)
	if err != nil {
		return err
	}
	if o.Select, err = prun.ParseSelection(sf, files); err != nil {
		return err
	}
	if o.Limits, err = af.limits(); err != nil {
		return err
	}
	if *printSQL && !*dryRun {
		return fmt.Errorf("%w: --print-sql goes with --dry-run (it prints, it does not apply)", errUsage)
	}
	if *dryRun && o.Standby {
		return fmt.Errorf("%w: --standby goes without --dry-run (a dry run applies nothing, so it claims no channel)", errUsage)
	}
	o.Files, o.AllowGaps = files, *allowGaps
	if *dryRun {
		o.DryRun = &prun.DryRun{Out: stdout, PrintSQL: *printSQL}
	}
	sum, err := prun.Replay(ctx, o)
	report(o, stdout, sum, *dryRun)
	return err
}
