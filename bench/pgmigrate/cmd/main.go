// Command pgmigrate runs the benchmark of package pgmigrate (make
// bench-pg): prepl beside pg_chameleon, copy and catch-up into
// PostgreSQL. It prints results.md and exits 1 when a run failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prepl/prepl/bench/pgmigrate"
)

func main() {
	cfg := pgmigrate.Config{Say: func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}}
	mirror := os.Getenv("PREPL_MIRROR")
	if mirror == "" {
		mirror = "/work/.mirror"
	}
	flag.StringVar(&cfg.Prepl, "prepl", "bin/prepl", "the prepl binary (make build)")
	flag.StringVar(&cfg.Python, "python", "/usr/bin/python3", "Python 3 with Debian's modules, for pg_chameleon")
	flag.StringVar(&cfg.Mirror, "mirror", mirror, "directory of git mirrors (owner+name/repo) of pg_chameleon, python-mysql-replication and parsy ($PREPL_MIRROR)")
	flag.IntVar(&cfg.Tables, "tables", 8, "sysbench tables")
	flag.IntVar(&cfg.Rows, "rows", 100000, "rows per table")
	flag.StringVar(&cfg.Script, "script", "oltp_write_only", "sysbench script that writes the binlog")
	flag.IntVar(&cfg.Events, "events", 20000, "sysbench transactions per repeat")
	flag.IntVar(&cfg.SourceThreads, "source-threads", 4, "sysbench threads")
	flag.IntVar(&cfg.Workers, "workers", 4, "prepl replicate --workers")
	flag.IntVar(&cfg.Repeats, "repeats", 3, "repeats")
	flag.BoolVar(&cfg.CopyOnly, "copy-only", false, "time the copies only (no workload, no catch-up)")
	flag.DurationVar(&cfg.StepTimeout, "step-timeout", 20*time.Minute, "longest a copy or a catch-up may take")
	flag.StringVar(&cfg.OutDir, "out", "bench-out/pg", "output directory: results.md and logs/")
	flag.Parse()
	cfg.Command = strings.Join(append([]string{"go run ./bench/pgmigrate/cmd"}, os.Args[1:]...), " ")
	if abs, err := filepath.Abs(cfg.Prepl); err == nil {
		cfg.Prepl = abs
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := pgmigrate.Run(ctx, cfg)
	if rep != nil {
		rep.Markdown(os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-pg: %v\n", err)
		os.Exit(1)
	}
}
