package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/prepl/prepl/filter"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
	prun "github.com/prepl/prepl/run"
	"github.com/prepl/prepl/snapshot"
)

// pgFlags are the PostgreSQL mapping's options.
type pgFlags struct {
	lowercase bool
	zeroDates string
	postgis   bool
}

func (p *pgFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&p.lowercase, "lowercase-names", false, "PostgreSQL target: lowercase every schema, table, column and index name")
	fs.StringVar(&p.zeroDates, "zero-dates", "error", "PostgreSQL target: a zero date ('0000-00-00') is an `error` or stored as `null`")
	fs.BoolVar(&p.postgis, "postgis", false, "PostgreSQL target: spatial columns to PostGIS geometry (the extension must be installed)")
}

func (p *pgFlags) options() (postgres.Options, error) {
	if p.zeroDates != "error" && p.zeroDates != "null" {
		return postgres.Options{}, fmt.Errorf("%w: --zero-dates is error or null, not %q", errUsage, p.zeroDates)
	}
	return postgres.Options{LowercaseNames: p.lowercase, ZeroDateNull: p.zeroDates == "null", PostGIS: p.postgis}, nil
}

// copyFlags are the flags copy and verify share: the two servers, the
// databases, and the PostgreSQL mapping options.
type copyFlags struct {
	source, target, dbs string
	include, exclude    multiFlag
	rewrite             multiFlag
	pg                  pgFlags
}

func (f *copyFlags) register(fs *flag.FlagSet, verb string) {
	fs.StringVar(&f.source, "source", "", "source server URL (mysql://user@host:port)")
	fs.StringVar(&f.target, "target", "", "target URL: mysql://... or postgres://user@host:5432/db")
	fs.StringVar(&f.dbs, "databases", "", "comma-separated databases to "+verb+" (default: all but the system ones)")
	fs.Var(&f.include, "include", verb+" only tables matching this SCHEMA.TABLE pattern (globs * ? [..], source names;\n"+
		"repeatable), as replicate and replay select them")
	fs.Var(&f.exclude, "exclude", "do not "+verb+" tables matching this SCHEMA.TABLE pattern (repeatable; wins over --include)")
	fs.Var(&f.rewrite, "rewrite-schema", "source schema SRC is schema DST on the target: SRC=DST (repeatable), as replicate and replay\n"+
		"rewrite it (foreign keys to a rewritten schema included)")
	f.pg.register(fs)
}

// parse checks the flags of command cmd: the source endpoint and the
// PostgreSQL options.
func (f *copyFlags) parse(cmd string) (mysql.Endpoint, postgres.Options, error) {
	if f.source == "" || f.target == "" {
		return mysql.Endpoint{}, postgres.Options{}, fmt.Errorf("%w: %s needs --source and --target", errUsage, cmd)
	}
	o, err := f.pg.options()
	if err != nil {
		return mysql.Endpoint{}, postgres.Options{}, err
	}
	src, err := mysql.ParseURL(f.source)
	if err == nil {
		src, err = src.WithDefaults()
	}
	if err != nil {
		return mysql.Endpoint{}, postgres.Options{}, fmt.Errorf("%w: --source: %v", errUsage, err)
	}
	return src, o, nil
}

// tables is the selection of --include and --exclude (nil: every table)
// and the renaming of --rewrite-schema (nil: none).
func (f *copyFlags) tables() (snapshot.TableFunc, snapshot.Renamer, error) {
	if len(f.include) == 0 && len(f.exclude) == 0 && len(f.rewrite) == 0 {
		return nil, nil, nil
	}
	t, err := filter.New(f.include, f.exclude, f.rewrite)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	var r snapshot.Renamer
	if len(f.rewrite) > 0 {
		r = t
	}
	return t.Table, r, nil
}

func (f *copyFlags) databases() []string {
	if f.dbs == "" {
		return nil
	}
	return strings.Split(f.dbs, ",")
}

func runCopy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ends copyFlags
	ends.register(fs, "copy")
	channel := fs.String("channel", prun.DefaultChannel, "position channel `replicate` will continue")
	workers := fs.Int("workers", 4, "tables copied at once, each on its own connection to the snapshot")
	chunk := fs.Int("chunk-rows", 5000, "rows per chunk (each chunk commits with its progress)")
	prog := fs.Bool("progress", true, "show a progress bar on stderr")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl copy --source URL --target URL [flags]

Copies a consistent snapshot of the source's tables to a MySQL/MariaDB or
PostgreSQL target, creates the tables there, and stores the snapshot's
binlog position in the target's prepl.position table, so that
`+"`prepl replicate`"+` with the same --channel continues from exactly there.
Resumes after a crash from the last committed chunk, if the source has not
committed anything since.

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	src, o, err := ends.parse("copy")
	if err != nil {
		return err
	}
	sel, rename, err := ends.tables()
	if err != nil {
		return err
	}
	tgt, err := prun.OpenCopyTarget(ctx, ends.target, o)
	if err != nil {
		return err
	}
	defer tgt.Close()
	cfg := snapshot.Config{Source: src, Target: tgt, ParseTable: postgres.ParseCreateTable, Channel: *channel,
		Workers: *workers, ChunkRows: *chunk, Databases: ends.databases(), Tables: sel, Rename: rename}
	if *prog {
		cfg.Progress = stderr
	}
	pos, err := snapshot.Run(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "copied; position stored for channel %s: gtid %s, %s:%d\n", *channel, pos.GTIDPos, pos.File, pos.Pos)
	return nil
}

// stderrIf is stderr when cond (stdout holds something else), else stdout.
func stderrIf(cond bool, stdout, stderr io.Writer) io.Writer {
	if cond {
		return stderr
	}
	return stdout
}

func runVerifyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ends copyFlags
	ends.register(fs, "compare")
	chunk := fs.Int("chunk-rows", 5000, "rows per checksummed chunk")
	max := fs.Int("max-differences", 100, "stop after this many differences (with --fix-sql: print this many, fix them all)")
	fixSQL := fs.String("fix-sql", "", "write to `FILE` (- for stdout) the statements that make the target equal to the source\n"+
		"for every difference found (pt-table-sync --print): deletes, updates, inserts, in one transaction; apply them\n"+
		"to the target with its own client, then verify again")
	online := fs.Bool("online", false, "the target is being replicated to (prepl replicate runs on --channel): a chunk that differs\n"+
		"is compared again once the channel has applied what the source had when it was read, and only what\n"+
		"still differs then is reported")
	channel := fs.String("channel", prun.DefaultChannel, "with --online: the channel prepl replicate applies on")
	onlineWait := fs.Duration("online-wait", time.Minute, "with --online: how long to wait for the channel to apply the source's position")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl verify --source URL --target URL [flags]

Compares every source table with the target, row by row (chunked checksums,
then the differing chunks row by row), values normalized by the PostgreSQL
type mapping. Prints the differences; exit status 1 when there are any.
With --fix-sql FILE it also writes the SQL that repairs them. With --online
it runs while prepl replicate applies to the target, and reports only rows
that still differ once the target has caught up with them.

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	src, o, err := ends.parse("verify")
	if err != nil {
		return err
	}
	sel, rename, err := ends.tables()
	if err != nil {
		return err
	}
	tgt, err := prun.OpenVerifyTarget(ctx, ends.target, o)
	if err != nil {
		return err
	}
	defer tgt.Close()
	cfg := snapshot.VerifyConfig{Source: src, Target: tgt, ParseTable: postgres.ParseCreateTable, ChunkRows: *chunk,
		Max: *max, Databases: ends.databases(), Tables: sel, Rename: rename}
	var fixOut io.Writer
	if *fixSQL == "-" {
		fixOut = stdout
	} else if *fixSQL != "" {
		f, err := os.Create(*fixSQL)
		if err != nil {
			return fmt.Errorf("--fix-sql: %w", err)
		}
		defer f.Close()
		fixOut = f
	}
	if fixOut != nil {
		cfg.Fix = snapshot.NewFixWriter(fixOut)
	}
	if *online {
		srcDB, err := src.OpenDB()
		if err != nil {
			return err
		}
		defer srcDB.Close()
		adm, err := prun.OpenObserver(ctx, ends.target, *channel, &prun.Secrets{})
		if err != nil {
			return fmt.Errorf("--online: %w", err)
		}
		defer adm.Close()
		cfg.Settle = &prun.Online{Source: srcDB, Target: adm, Channel: *channel, Wait: *onlineWait}
	}
	diffs, err := snapshot.Verify(ctx, cfg)
	for _, d := range diffs {
		fmt.Fprintln(stderrIf(*fixSQL == "-", stdout, stderr), d)
	}
	if err != nil {
		return err
	}
	if cfg.Fix != nil {
		if err := cfg.Fix.Close(); err != nil {
			return fmt.Errorf("--fix-sql %s: %w", *fixSQL, err)
		}
		if *fixSQL != "-" {
			fmt.Fprintf(stdout, "wrote %d statement(s) to %s", cfg.Fix.Statements, *fixSQL)
			if cfg.Fix.Unfixable > 0 {
				fmt.Fprintf(stdout, "; %d difference(s) it cannot fix are comments in it", cfg.Fix.Unfixable)
			}
			fmt.Fprintln(stdout, ": apply it to the target with its own client, then run prepl verify again")
		}
	}
	if len(diffs) > 0 {
		atLeast := ""
		if len(diffs) >= *max {
			atLeast = "at least " // verify stopped counting at --max-differences
		}
		return fmt.Errorf("%s%d difference(s) between source and target", atLeast, len(diffs))
	}
	fmt.Fprintln(stdout, "equal")
	return nil
}
