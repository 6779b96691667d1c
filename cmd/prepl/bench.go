package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prepl/prepl/bench"
	"github.com/prepl/prepl/depend"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "scale" {
		return runBenchScale(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workloads := fs.String("workloads", "oltp,update-index,update-index-serial", "sysbench workloads that generate the source binlog:\n"+
		"oltp (oltp_read_write, many threads, commit wait 12/10ms), update-index (oltp_update_index, many threads),\n"+
		"update-index-serial (oltp_update_index, 1 thread: no parallelism at all);\n"+
		"not in the default: write-only (oltp_write_only), insert (oltp_insert),\n"+
		"tpcc (TPC-C-like, bench/lua/tpcc.lua: foreign keys, hot district and warehouse rows, wide rows, a key-less table; 2 warehouses)")
	rows := fs.Int("rows", 100000, "rows in each sysbench table")
	tables := fs.Int("tables", 1, "sysbench tables (config D needs data at least 8× its 32 MiB buffer pool: e.g. --tables 4 --rows 300000)")
	randType := fs.String("rand-type", "", "sysbench --rand-type: special (its default: most accesses on 1% of the rows) or uniform\n(every row alike: the reads an I/O-bound replica waits on)")
	scriptArgs := fs.String("script-args", "", "options for tpcc's script instead of --rows and --tables: --warehouses=N (default 2),\n"+
		"--items=N and --customers=N (per district) to shrink it")
	events := fs.Int("events", 50000, "sysbench --events: transactions in each workload's binlog")
	sourceThreads := fs.Int("source-threads", 48, "sysbench threads on the source for oltp and update-index")
	threads := fs.String("threads", "0,2,4,8,16,32,64", "replica worker counts (slave_parallel_threads, --workers); 0 is single-threaded")
	configs := fs.String("configs", "A,B,C", "replica durability configs: A (binlog, log_slave_updates, sync_binlog=1, flush=1),\n"+
		"B (no binlog, flush=1), C (no binlog, flush=2),\n"+
		"D (I/O-bound: A's durability, 32 MiB buffer pool, O_DIRECT, restored with an empty pool)")
	systems := fs.String("systems", "mariadb,prepl-replicate,prepl-replay", "what applies the binlog: mariadb (its own replica), prepl-replicate, prepl-replay,\n"+
		"prepl-keep-gtid (prepl replicate --keep-gtid: one target transaction per source transaction, with its GTID),\n"+
		"prepl-prefetch (prepl replicate --prefetch 4: index pages read ahead, for I/O-bound targets)")
	mariaModes := fs.String("mariadb-modes", "conservative,optimistic,aggressive", "MariaDB slave_parallel_mode values")
	preplModes := fs.String("prepl-modes", "writeset,commit-order,optimistic,aggressive", "prepl --mode values: "+strings.Join(modeNames(), ", "))
	preplArgs := fs.String("prepl-args", "", "extra flags for every timed prepl run, e.g. \"--commit-unit 1\"")
	limitArgs := fs.String("limit-args", strings.Join(bench.DefaultLimitArgs, " "), "prepl replay flags of the physical-limit run on config C (\"\" skips it)")
	repeats := fs.Int("repeats", 3, "runs of each cell; the tables show the median and the spread")
	out := fs.String("out", "bench-out", "output directory: results.md, results.csv, charts, logs/")
	keep := fs.Bool("keep", false, "keep the sources, snapshots and the targets of failed runs on disk (paths are printed)")
	saveBinlog := fs.String("save-binlog", "", "copy each workload's binlog files to this directory (DIR/<workload>/, with its start GTID)")
	runTimeout := fs.Duration("run-timeout", 30*time.Minute, "longest one timed run may take before it counts as failed")
	preplBin := fs.String("prepl", "", "prepl binary to time (default: this executable)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl bench [flags]

Runs the seeds' catch-up benchmark on throwaway mariadbd sandboxes (needs
mariadbd and sysbench: `+"`make deps`"+`). For each workload, a source runs
sysbench prepare, is snapshotted, then generates the workload's binlog. For
each replica config, thread count, system and mode, the snapshot is restored
into a fresh server that catches up with the binlog, timed: MariaDB's own
replica (relay log fetched first, then START SLAVE SQL_THREAD until
MASTER_GTID_WAIT returns) and prepl (the whole prepl process). After every
run, every table of the target is checksummed against the source; a run that
differs is a failure and makes the command exit 1.

Writes results.md (seeds-shaped tables: median seconds and spread per thread
count), results.csv (one line per run), one PNG chart per workload and config
(txn/s against workers), and each prepl run's output under logs/. The
defaults are the full matrix, which takes hours; `+"`make bench`"+` is a quick run.

`+"`prepl bench scale`"+` is the scale benchmark (make bench-scale): a 10 GiB binlog, a
1 GiB transaction and 256 workers; `+"`prepl bench scale --help`"+`.

Example (a quick run of one workload):
  prepl bench --workloads update-index --rows 20000 --events 5000 --threads 0,4,16 \
      --configs A,C --mariadb-modes conservative,optimistic --prepl-modes writeset \
      --repeats 3 --out bench-out

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	cfg := bench.Config{Rows: *rows, Tables: *tables, RandType: *randType, Events: *events, SourceThreads: *sourceThreads, Repeats: *repeats,
		ScriptArgs: strings.Fields(*scriptArgs), OutDir: *out, Keep: *keep, SaveBinlog: *saveBinlog, RunTimeout: *runTimeout, Progress: stderr,
		PreplArgs: strings.Fields(*preplArgs), Command: "prepl bench " + strings.Join(args, " ")}
	if err := parseBenchLists(&cfg, *workloads, *threads, *configs, *systems, *mariaModes, *preplModes); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if strings.TrimSpace(*limitArgs) != "" {
		cfg.LimitArgs = strings.Fields(*limitArgs)
	}
	var err error
	if cfg.Prepl, err = benchBinary(*preplBin); err != nil {
		return err
	}
	report, err := bench.Run(ctx, cfg)
	if report != nil {
		printBenchSummary(stdout, report, *out)
	}
	return err
}

// parseBenchLists fills the matrix of cfg from the comma-separated flags.
func parseBenchLists(cfg *bench.Config, workloads, threads, configs, systems, mariaModes, preplModes string) error {
	for _, n := range splitList(workloads) {
		w, err := bench.ParseWorkload(n)
		if err != nil {
			return fmt.Errorf("--workloads: %v", err)
		}
		cfg.Workloads = append(cfg.Workloads, w)
	}
	for _, n := range splitList(threads) {
		t, err := strconv.Atoi(n)
		if err != nil || t < 0 {
			return fmt.Errorf("--threads: %q is not a thread count (want e.g. 0,2,4)", n)
		}
		cfg.Threads = append(cfg.Threads, t)
	}
	for _, n := range splitList(configs) {
		c, err := bench.ParseConfig(n)
		if err != nil {
			return fmt.Errorf("--configs: %v", err)
		}
		cfg.Configs = append(cfg.Configs, c)
	}
	for _, n := range splitList(systems) {
		s, err := bench.ParseSystem(n)
		if err != nil {
			return fmt.Errorf("--systems: %v", err)
		}
		cfg.Systems = append(cfg.Systems, s)
	}
	for _, m := range splitList(mariaModes) {
		if !slices.Contains(bench.MariaDBModes, m) {
			return fmt.Errorf("--mariadb-modes: unknown slave_parallel_mode %q (want one of %s)", m, strings.Join(bench.MariaDBModes, ", "))
		}
		cfg.MariaDBModes = append(cfg.MariaDBModes, m)
	}
	for _, m := range splitList(preplModes) {
		if _, err := depend.ParseMode(m); err != nil {
			return fmt.Errorf("--prepl-modes: %v", err)
		}
		cfg.PreplModes = append(cfg.PreplModes, m)
	}
	if len(cfg.Workloads) == 0 || len(cfg.Threads) == 0 || len(cfg.Configs) == 0 || len(cfg.Systems) == 0 {
		return errors.New("--workloads, --threads, --configs and --systems each need at least one value")
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// printBenchSummary prints the targets and where the outputs are.
func printBenchSummary(w io.Writer, r *bench.Report, out string) {
	for _, t := range r.Targets() {
		fmt.Fprintf(w, "%-20s %s  prepl/MariaDB = %5.2f  (target %s): %s\n", t.Workload, t.Config, t.Ratio(), t.Goal(), t.Verdict())
	}
	if checks := r.Workers(); len(checks) > 0 {
		fmt.Fprintf(w, "workers never hurt (N workers ≤ %.2f × the best with fewer): %s\n", bench.WorkersLimit, bench.WorkersTally(checks))
	}
	if n := len(r.Failures()); n > 0 {
		fmt.Fprintf(w, "%d run(s) FAILED: see %s\n", n, filepath.Join(out, bench.ResultsMD))
	}
	fmt.Fprintf(w, "results: %s, %s and the charts in %s\n", filepath.Join(out, bench.ResultsMD), filepath.Join(out, bench.ResultsCSV), out)
}

func runBenchScale(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	volume := fs.String("volume", "10GiB", "size of the big binlog replayed, RSS and throughput sampled (0 skips it)")
	bigTxn := fs.String("big-txn", "1GiB", "binlog size of the one big transaction, a single UPDATE of millions of rows (0 skips it)")
	workers := fs.String("workers", "0,4,16,64,256", "worker counts of the workers part (\"\" skips it)")
	preplArgs := fs.String("prepl-args", "", "extra flags for every prepl run, e.g. \"--max-txn-size 512MiB\"")
	out := fs.String("out", "bench-out/scale", "output directory: results.md, the charts, prepl's output")
	keep := fs.Bool("keep", false, "keep the sources, snapshots and targets on disk")
	preplBin := fs.String("prepl", "", "prepl binary to time (default: this executable)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl bench scale [flags]

prepl at scale, on throwaway mariadbd sandboxes, each part checked against
its source by checksums:
  - a binlog of --volume bytes (UPDATEs of 50 rows of 1 KiB) replayed, with
    prepl's RSS and the target's stored position sampled every 250 ms;
  - one transaction of --big-txn bytes (an UPDATE of every row of a table),
    replayed; if prepl refuses it (--max-txn-size), the way on its error
    names is followed: mariadb-binlog | mariadb, then --skip-gtid;
  - the update-index binlog of prepl bench with --workers up to 256.
Writes results.md (targets met or not), scale-rss.png and
scale-throughput.png. The binlog needs --volume of free disk, plus the
big transaction's table (about 3x --big-txn).

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	cfg := bench.ScaleConfig{OutDir: *out, Keep: *keep, Progress: stderr, PreplArgs: strings.Fields(*preplArgs),
		Command: "prepl bench scale " + strings.Join(args, " ")}
	for _, x := range []struct {
		flag, v string
		dst     *int64
	}{{"--volume", *volume, &cfg.VolumeBytes}, {"--big-txn", *bigTxn, &cfg.BigTxnBytes}} {
		if strings.TrimSpace(x.v) == "0" {
			continue
		}
		n, err := parseBytes(x.v)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", errUsage, x.flag, err)
		}
		*x.dst = int64(n)
	}
	for _, n := range splitList(*workers) {
		t, err := strconv.Atoi(n)
		if err != nil || t < 0 {
			return fmt.Errorf("%w: --workers: %q is not a worker count", errUsage, n)
		}
		cfg.Workers = append(cfg.Workers, t)
	}
	var err error
	if cfg.Prepl, err = benchBinary(*preplBin); err != nil {
		return err
	}
	rep, err := bench.Scale(ctx, cfg)
	if rep != nil {
		fmt.Fprintf(stdout, "results: %s\n", filepath.Join(*out, bench.ResultsMD))
	}
	return err
}

// benchBinary is the prepl binary a benchmark times: --prepl, else this
// executable.
func benchBinary(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the prepl binary to time: %w (give --prepl PATH)", err)
	}
	return exe, nil
}
