// Command mycopy runs the benchmark of package mycopy (make bench-copy):
// prepl copy beside mydumper + myloader, MariaDB to MariaDB. It prints
// results.md and exits 1 when a run failed.
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

	"github.com/prepl/prepl/bench/mycopy"
)

func main() {
	cfg := mycopy.Config{Say: func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}}
	var preplArgs, dumperArgs, loaderArgs string
	flag.StringVar(&cfg.Prepl, "prepl", "bin/prepl", "the prepl binary (make build)")
	flag.IntVar(&cfg.Tables, "tables", 8, "sysbench tables")
	flag.IntVar(&cfg.Rows, "rows", 100000, "rows per table")
	flag.IntVar(&cfg.Threads, "threads", 4, "prepl copy --workers, mydumper and myloader --threads")
	flag.IntVar(&cfg.Repeats, "repeats", 5, "repeats (the system that runs first alternates)")
	flag.StringVar(&preplArgs, "prepl-args", "", "more prepl copy flags, e.g. \"--chunk-rows 10000\"")
	flag.StringVar(&dumperArgs, "mydumper-args", "", "more mydumper flags, e.g. \"--rows 100000\"")
	flag.StringVar(&loaderArgs, "myloader-args", "", "more myloader flags")
	flag.DurationVar(&cfg.StepTimeout, "step-timeout", 20*time.Minute, "longest one copy may take")
	flag.StringVar(&cfg.OutDir, "out", "bench-out/copy", "output directory: results.md and logs/")
	flag.Parse()
	cfg.PreplArgs, cfg.DumperArgs, cfg.LoaderArgs = strings.Fields(preplArgs), strings.Fields(dumperArgs), strings.Fields(loaderArgs)
	cfg.Command = strings.Join(append([]string{"go run ./bench/mycopy/cmd"}, os.Args[1:]...), " ")
	if abs, err := filepath.Abs(cfg.Prepl); err == nil {
		cfg.Prepl = abs
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := mycopy.Run(ctx, cfg)
	if rep != nil {
		rep.Markdown(os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-copy: %v\n", err)
		os.Exit(1)
	}
}
