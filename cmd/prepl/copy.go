package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/snapshot"
	"github.com/prepl/prepl/mysql"
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

func runCopy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	source := fs.String("source", "", "source server URL (mysql://user@host:port)")
	target := fs.String("target", "", "target URL: mysql://... or postgres://user@host:5432/db")
	channel := fs.String("channel", "default", "position channel `replicate` will continue")
	dbs := fs.String("databases", "", "comma-separated databases to copy (default: all but the system ones)")
	workers := fs.Int("workers", 4, "tables copied at once, each on its own connection to the snapshot")
	chunk := fs.Int("chunk-rows", 5000, "rows per chunk (each chunk commits with its progress)")
	prog := fs.Bool("progress", true, "show a progress bar on stderr")
	var pf pgFlags
	pf.register(fs)
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
	if *source == "" || *target == "" {
		return fmt.Errorf("%w: copy needs --source and --target", errUsage)
	}
	o, err := pf.options()
	if err != nil {
		return err
	}
	src, err := mysql.ParseURL(*source)
	if err == nil {
		src, err = src.WithDefaults()
	}
	if err != nil {
		return fmt.Errorf("%w: --source: %v", errUsage, err)
	}
	tgt, err := snapshot.Open(ctx, *target, o)
	if err != nil {
		return err
	}
	defer tgt.Close()
	cfg := snapshot.Config{Source: src, Target: tgt, Channel: *channel, Workers: *workers, ChunkRows: *chunk}
	if *dbs != "" {
		cfg.Databases = strings.Split(*dbs, ",")
	}
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

func runVerifyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	source := fs.String("source", "", "source server URL (mysql://user@host:port)")
	target := fs.String("target", "", "target URL: mysql://... or postgres://user@host:5432/db")
	dbs := fs.String("databases", "", "comma-separated databases to compare (default: all but the system ones)")
	chunk := fs.Int("chunk-rows", 5000, "rows per checksummed chunk")
	max := fs.Int("max-differences", 100, "stop after this many differences")
	var pf pgFlags
	pf.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl verify --source URL --target URL [flags]

Compares every source table with the target, row by row (chunked checksums,
then the differing chunks row by row), values normalized by the PostgreSQL
type mapping. Prints the differences; exit status 1 when there are any.

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *source == "" || *target == "" {
		return fmt.Errorf("%w: verify needs --source and --target", errUsage)
	}
	o, err := pf.options()
	if err != nil {
		return err
	}
	src, err := mysql.ParseURL(*source)
	if err == nil {
		src, err = src.WithDefaults()
	}
	if err != nil {
		return fmt.Errorf("%w: --source: %v", errUsage, err)
	}
	cfg := snapshot.VerifyConfig{Source: src, Target: *target, ChunkRows: *chunk, Opts: o, Max: *max}
	if *dbs != "" {
		cfg.Databases = strings.Split(*dbs, ",")
	}
	diffs, err := snapshot.Verify(ctx, cfg)
	for _, d := range diffs {
		fmt.Fprintln(stdout, d)
	}
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%d difference(s) between source and target", len(diffs))
	}
	fmt.Fprintln(stdout, "equal")
	return nil
}
