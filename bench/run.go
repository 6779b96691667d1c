package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/verify"
)

// Output files in Config.OutDir.
const (
	ResultsMD  = "results.md"
	ResultsCSV = "results.csv"
)

// ErrFailedRuns is returned (wrapped) when a run failed or its target
// differed from the source; the outputs are written all the same.
var ErrFailedRuns = errors.New("benchmark runs failed")

// Run measures the matrix of cfg, writes results.md, results.csv and the
// charts into cfg.OutDir, and returns the report. It returns an error
// wrapping ErrFailedRuns, with the report, when any run failed or left a
// target that differs from its source.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cfg.OutDir, "logs"), 0o755); err != nil {
		return nil, err
	}
	workDir, err := os.MkdirTemp("", "prepl-bench-")
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(workDir)
	}
	csvFile, err := os.Create(filepath.Join(cfg.OutDir, ResultsCSV))
	if err != nil {
		return nil, err
	}
	defer csvFile.Close()
	cw, err := newCSVWriter(csvFile)
	if err != nil {
		return nil, err
	}

	plan := cfg.plan()
	total := 0
	for _, runs := range plan {
		total += len(runs)
	}
	b := &bencher{cfg: &cfg, csv: cw, prog: newProgress(cfg.Progress, total)}
	b.report = &Report{Command: cfg.Command, Machine: DetectMachine(ctx, cfg.Prepl),
		Settings:  Settings{Rows: cfg.Rows, Tables: cfg.Tables, RandType: cfg.RandType, Events: cfg.Events, SourceThreads: cfg.SourceThreads, Repeats: cfg.Repeats, PreplArgs: cfg.PreplArgs, LimitArgs: cfg.LimitArgs},
		Workloads: cfg.Workloads, Configs: cfg.Configs, Systems: cfg.Systems, Threads: cfg.Threads,
		Modes: map[System][]string{MariaDB: cfg.MariaDBModes, PreplReplicate: cfg.PreplModes, PreplReplay: cfg.PreplModes, PreplKeepGTID: cfg.PreplModes, PreplPrefetch: cfg.PreplModes}}
	limit := ""
	if cfg.LimitArgs != nil {
		limit = " + the physical limit"
	}
	b.prog.say("%d timed runs: %d workload(s) × %d config(s) × %d cells × %d repeat(s)%s; output in %s",
		total, len(cfg.Workloads), len(cfg.Configs), len(cfg.cells(cfg.Workloads[0], cfg.Configs[0])), cfg.Repeats, limit, cfg.OutDir)

	var runErr error
	for i, w := range cfg.Workloads {
		if runErr = b.workload(ctx, w, workDir, plan[i]); runErr != nil {
			break
		}
	}
	if err := b.write(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return b.report, runErr
	}
	if n := len(b.report.Failures()); n > 0 {
		return b.report, fmt.Errorf("%w: %d of %d (see %s)", ErrFailedRuns, n, len(b.report.Results), filepath.Join(cfg.OutDir, ResultsMD))
	}
	return b.report, nil
}

// bencher carries one benchmark's state through its runs.
type bencher struct {
	cfg    *Config
	csv    *csvWriter
	prog   *progress
	report *Report
}

// workload prepares the source of w and makes its runs.
func (b *bencher) workload(ctx context.Context, w Workload, workDir string, runs []plannedRun) error {
	src, err := prepareSource(ctx, b.cfg, w, workDir, b.prog.say)
	if err != nil {
		return fmt.Errorf("workload %s: %w", w.Name, err)
	}
	defer src.Close(b.cfg.Keep)
	if b.cfg.Keep {
		b.prog.say("keeping source %s and snapshot %s", src.Server.Dir, src.Snapshot)
	}
	b.report.Sources = append(b.report.Sources, src.Stats)
	b.report.Machine.MariaDB = src.Stats.Version
	for _, r := range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.prog.begin(r, b.cfg.Repeats)
		start := time.Now()
		res := b.run(ctx, src, r)
		b.prog.end(res, time.Since(start))
		b.report.Machine.LoadMax = max(b.report.Machine.LoadMax, LoadAvg())
		b.report.Results = append(b.report.Results, res)
		if err := b.csv.write(res); err != nil {
			return fmt.Errorf("write %s: %w", ResultsCSV, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// run restores the snapshot into a fresh replica, times the cell's catch
// up and checks the replica against the source.
func (b *bencher) run(ctx context.Context, src *Source, r plannedRun) Result {
	res := Result{Cell: r.Cell, Repeat: r.Repeat, Txns: src.Stats.Txns}
	rc, err := ParseConfig(r.Config)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	replica, err := sandbox.Start(ctx, rc.options(src.Snapshot))
	if err != nil {
		res.Err = "restore the snapshot: " + err.Error()
		return res
	}
	defer func() { b.release(replica, res) }()

	rctx, cancel := context.WithTimeout(ctx, b.cfg.RunTimeout)
	defer cancel()
	// The copy of the snapshot is still in the page cache, dirty, with what
	// the source and the run before wrote: write it out now, or the timed
	// run's first fsyncs would wait for it (the first repeat after a
	// source's sysbench ran 1.5-2.5 times the others without this), and
	// config D's first O_DIRECT reads too.
	syscall.Sync()
	var d, serverCPU, preplCPU time.Duration
	var ctr Counters
	if r.System == MariaDB {
		d, serverCPU, ctr, err = mariaDBCatchUp(rctx, src, replica, r.Mode, r.Threads)
	} else {
		d, serverCPU, preplCPU, ctr, err = b.runPrepl(rctx, src, replica, r)
	}
	if err != nil {
		if rctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("no catch-up within --run-timeout %s: %w", b.cfg.RunTimeout, err)
		}
		res.Err = err.Error()
		return res
	}
	if rc.IOBound {
		if ctr.PurgeReads, ctr.PurgeMillis, err = b.purge(ctx, replica); err != nil {
			res.Err = err.Error()
			return res
		}
	}
	res.Seconds, res.ServerCPU, res.PreplCPU, res.Counters = d.Seconds(), serverCPU.Seconds(), preplCPU.Seconds(), ctr
	if err := b.verify(ctx, src, replica); err != nil {
		res.Err = "target differs from source: " + err.Error()
		return res
	}
	res.Verified = true
	return res
}

// runPrepl times the prepl run of cell r against replica, with the
// replica's CPU time and status counters over the run.
func (b *bencher) runPrepl(ctx context.Context, src *Source, replica *sandbox.Server, r plannedRun) (d, serverCPU, preplCPU time.Duration, ctr Counters, err error) {
	extra := b.cfg.PreplArgs
	if r.System == Limit {
		extra = b.cfg.LimitArgs
	}
	args := preplArgs(r.Cell, src.Server.URL(), replica.URL(), src.Stats.StartGTID, src.Files, extra)
	db, err := replica.Open("")
	if err != nil {
		return 0, 0, 0, ctr, err
	}
	defer db.Close()
	before, err := readCounters(ctx, db)
	if err != nil {
		return 0, 0, 0, ctr, err
	}
	meter := startCPU(replica)
	if d, preplCPU, err = RunPrepl(ctx, b.cfg.Prepl, args, b.logPath(r)); err != nil {
		return 0, 0, 0, ctr, err
	}
	serverCPU = meter.elapsed()
	after, err := readCounters(ctx, db)
	return d, serverCPU, preplCPU, after.sub(before), err
}

// purge waits for the purge the run left (drainPurge).
func (b *bencher) purge(ctx context.Context, replica *sandbox.Server) (reads, millis int64, err error) {
	db, err := replica.Open("")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	return drainPurge(ctx, db)
}

// verify compares every table of the replica with the source's by checksum.
func (b *bencher) verify(ctx context.Context, src *Source, replica *sandbox.Server) error {
	db, err := replica.Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	return verify.Checksums(ctx, src.DB, db)
}

// release removes the replica, or keeps it for inspection when the run
// failed and Keep is set.
func (b *bencher) release(replica *sandbox.Server, res Result) {
	if b.cfg.Keep && !res.OK() {
		replica.Stop()
		b.prog.say("kept the target of the failed run: %s (start mariadbd --datadir=%s to inspect)", replica.Dir, replica.DataDir())
		return
	}
	replica.Close()
}

func (b *bencher) logPath(r plannedRun) string {
	name := fmt.Sprintf("%s-%s-%s-%s-%d-r%d.log", r.Workload, r.Config, r.System, strings.ReplaceAll(r.Mode, " ", "_"), r.Threads, r.Repeat)
	return filepath.Join(b.cfg.OutDir, "logs", name)
}

// write renders results.md and the charts from what was measured so far.
func (b *bencher) write() error {
	f, err := os.Create(filepath.Join(b.cfg.OutDir, ResultsMD))
	if err != nil {
		return err
	}
	b.report.Markdown(f)
	if err := f.Close(); err != nil {
		return err
	}
	if _, err := b.report.Charts(b.cfg.OutDir); err != nil {
		return err
	}
	return nil
}
