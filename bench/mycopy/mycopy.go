// Package mycopy is issue 30's benchmark of a copy between MySQL/MariaDB
// servers: `prepl copy` beside mydumper + myloader (Debian's packages),
// on the same sysbench data, into equal fresh targets with
// innodb_flush_log_at_trx_commit=1, the same number of threads. prepl
// streams from source to target; mydumper writes files that myloader
// then loads, and both steps are timed together. Each repeat starts two
// fresh targets; the system that runs first alternates. After each run
// the target must equal the source (CHECKSUM TABLE of every table, and
// the same SHOW CREATE TABLE): a fast wrong answer is a failure, not a
// result. Seconds are wall time on a possibly loaded machine; the CPU
// seconds of each system's processes and of the target server are the
// robust figures.
package mycopy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prepl/prepl/bench"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/verify"
)

// The two systems measured.
const (
	Prepl    = "prepl copy"
	MyDumper = "mydumper + myloader"
)

// TargetRatio is the target: prepl copy at most half the time of
// mydumper + myloader.
const TargetRatio = 0.5

// DB is the database copied.
const DB = "sbtest"

// Config is a benchmark run.
type Config struct {
	Prepl        string // the prepl binary
	Tables, Rows int    // sysbench data: tables × rows each
	Threads      int    // prepl copy --workers; mydumper and myloader --threads
	Repeats      int
	PreplArgs    []string // more prepl copy flags
	DumperArgs   []string // more mydumper flags
	LoaderArgs   []string // more myloader flags
	StepTimeout  time.Duration
	OutDir       string // results.md and logs/
	Command      string // the command line, for the report
	Say          func(format string, args ...any)
}

// Result is one system's run in one repeat.
type Result struct {
	Repeat int
	System string
	First  bool
	// Seconds of wall time; CPU seconds of the system's own processes
	// (prepl; mydumper and myloader), of the target and of the source
	// server. 0 seconds when the run failed.
	Seconds, CPU, TargetCPU, SourceCPU float64
	Err                                string
}

// Run measures, writes results.md into cfg.OutDir and returns the report;
// its error says what failed (the report holds what was measured).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Repeats < 1 || cfg.Tables < 1 || cfg.Rows < 1 || cfg.Threads < 1 {
		return nil, errors.New("repeats, tables, rows and threads must be at least 1")
	}
	for _, tool := range []string{"mydumper", "myloader"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found: apt-get install mydumper (make bench-copy does)", tool)
		}
	}
	logs := filepath.Join(cfg.OutDir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	rep := &Report{Command: cfg.Command, Machine: bench.DetectMachine(ctx, cfg.Prepl), Threads: cfg.Threads}
	if out, err := exec.CommandContext(ctx, "mydumper", "--version").CombinedOutput(); err == nil {
		rep.Tools = strings.TrimSpace(string(out))
	}
	b := &bencher{cfg: cfg, rep: rep, logs: logs}
	runErr := b.run(ctx)
	f, err := os.Create(filepath.Join(cfg.OutDir, "results.md"))
	if err != nil {
		return rep, errors.Join(runErr, err)
	}
	rep.Markdown(f)
	if err := f.Close(); err != nil {
		return rep, errors.Join(runErr, err)
	}
	if runErr == nil {
		for _, r := range rep.Results {
			if r.Err != "" {
				return rep, fmt.Errorf("repeat %d, %s: %s", r.Repeat, r.System, r.Err)
			}
		}
	}
	return rep, runErr
}

type bencher struct {
	cfg  Config
	rep  *Report
	logs string
	src  *sandbox.Server
	sdb  *sql.DB
}

func (b *bencher) say(format string, args ...any) {
	if b.cfg.Say != nil {
		b.cfg.Say(format, args...)
	}
}

func (b *bencher) run(ctx context.Context) error {
	o := sandbox.Defaults()
	o.Binlog = true                            // prepl copy stores the snapshot's binlog position
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 2 // the source's durability is not measured
	src, err := sandbox.Start(ctx, o)
	if err != nil {
		return fmt.Errorf("start the source: %w", err)
	}
	defer src.Close()
	b.src = src
	if b.sdb, err = src.Open(""); err != nil {
		return err
	}
	defer b.sdb.Close()
	if err := b.sdb.QueryRowContext(ctx, "SELECT VERSION()").Scan(&b.rep.Machine.MariaDB); err != nil {
		return err
	}
	sb := bench.Sysbench{Server: src, Tables: b.cfg.Tables, TableSize: b.cfg.Rows}
	b.say("source %s: sysbench prepare, %d tables × %d rows", src.Dir, b.cfg.Tables, b.cfg.Rows)
	if err := sb.Prepare(ctx, "oltp_read_write"); err != nil {
		return err
	}
	var mib float64
	if err := b.sdb.QueryRowContext(ctx, "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) / 1048576 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", DB).Scan(&mib); err != nil {
		return err
	}
	b.rep.Data = fmt.Sprintf("%d sysbench tables × %d rows (%.0f MiB of InnoDB data and indexes on the source)", b.cfg.Tables, b.cfg.Rows, mib)
	for r := 1; r <= b.cfg.Repeats; r++ {
		systems := []string{Prepl, MyDumper}
		if r%2 == 0 {
			systems[0], systems[1] = systems[1], systems[0]
		}
		for i, s := range systems {
			res := b.once(ctx, r, s)
			res.First = i == 0
			b.rep.Results = append(b.rep.Results, res)
			b.rep.Machine.LoadMax = max(b.rep.Machine.LoadMax, bench.LoadAvg())
			if res.Err != "" {
				b.say("repeat %d: %s failed: %s", r, s, res.Err)
			} else {
				b.say("repeat %d: %s %.2f s (CPU: own %.2f s, target %.2f s, source %.2f s), target = source; load %.1f",
					r, s, res.Seconds, res.CPU, res.TargetCPU, res.SourceCPU, bench.LoadAvg())
			}
		}
	}
	return nil
}

// once runs system s into a fresh durable target and checks it.
func (b *bencher) once(ctx context.Context, repeat int, s string) Result {
	res := Result{Repeat: repeat, System: s}
	o := sandbox.Defaults()
	o.FlushLogAtTrxCommit = 1
	tgt, err := sandbox.Start(ctx, o)
	if err != nil {
		res.Err = "start the target: " + err.Error()
		return res
	}
	defer tgt.Close()
	sctx, cancel := context.WithTimeout(ctx, b.cfg.StepTimeout)
	defer cancel()
	t0, _ := bench.ServerCPU(tgt)
	s0, _ := bench.ServerCPU(b.src)
	start := time.Now()
	var cpu time.Duration
	log := filepath.Join(b.logs, fmt.Sprintf("%d-%s.log", repeat, strings.Fields(s)[0]))
	if s == Prepl {
		cpu, err = b.prepl(sctx, tgt, log)
	} else {
		cpu, err = b.mydumper(sctx, tgt, log, repeat)
	}
	elapsed := time.Since(start)
	t1, _ := bench.ServerCPU(tgt)
	s1, _ := bench.ServerCPU(b.src)
	if err == nil {
		err = b.check(ctx, tgt)
	}
	if err != nil {
		res.Err = err.Error()
		return res
	}
	res.Seconds, res.CPU = elapsed.Seconds(), cpu.Seconds()
	res.TargetCPU, res.SourceCPU = (t1 - t0).Seconds(), (s1 - s0).Seconds()
	return res
}

func (b *bencher) prepl(ctx context.Context, tgt *sandbox.Server, log string) (time.Duration, error) {
	args := append([]string{"copy", "--source", b.src.URL(), "--target", tgt.URL(), "--databases", DB,
		"--workers", strconv.Itoa(b.cfg.Threads), "--progress=false"}, b.cfg.PreplArgs...)
	_, cpu, err := bench.RunPrepl(ctx, b.cfg.Prepl, args, log)
	return cpu, err
}

// mydumper dumps the source into a fresh directory and loads it with
// myloader: the time and CPU of both.
func (b *bencher) mydumper(ctx context.Context, tgt *sandbox.Server, log string, repeat int) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "prepl-bench-mydumper-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	dump := filepath.Join(dir, "dump")
	threads := strconv.Itoa(b.cfg.Threads)
	f, err := os.Create(log)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var cpu time.Duration
	for _, c := range [][]string{
		append([]string{"mydumper", "--host", "127.0.0.1", "--port", strconv.Itoa(b.src.Port), "--user", "root",
			"--database", DB, "--threads", threads, "--outputdir", dump}, b.cfg.DumperArgs...),
		append([]string{"myloader", "--host", "127.0.0.1", "--port", strconv.Itoa(tgt.Port), "--user", "root",
			"--directory", dump, "--threads", threads}, b.cfg.LoaderArgs...),
	} {
		fmt.Fprintf(f, "$ %s\n", strings.Join(c, " "))
		cmd := exec.CommandContext(ctx, c[0], c[1:]...)
		cmd.Stdout, cmd.Stderr = f, f
		err := cmd.Run()
		if ps := cmd.ProcessState; ps != nil {
			cpu += ps.UserTime() + ps.SystemTime()
		}
		if err != nil {
			out, _ := os.ReadFile(log)
			return 0, fmt.Errorf("%s: %v; its output (%s) ends:\n%s", c[0], err, log, bench.Tail(string(out), 8))
		}
	}
	return cpu, nil
}

// check compares the target with the source: every table's CHECKSUM
// TABLE, and its definition.
func (b *bencher) check(ctx context.Context, tgt *sandbox.Server) error {
	tdb, err := tgt.Open("")
	if err != nil {
		return err
	}
	defer tdb.Close()
	if err := verify.Checksums(ctx, b.sdb, tdb); err != nil {
		return fmt.Errorf("target differs from source: %w", err)
	}
	names, err := verify.Tables(ctx, b.sdb)
	if err != nil {
		return err
	}
	for _, n := range names {
		q := "SHOW CREATE TABLE `" + strings.Replace(n, ".", "`.`", 1) + "`"
		var name, s, d string
		if err := b.sdb.QueryRowContext(ctx, q).Scan(&name, &s); err != nil {
			return err
		}
		if err := tdb.QueryRowContext(ctx, q).Scan(&name, &d); err != nil {
			return fmt.Errorf("target: %s: %w", n, err)
		}
		if s != d {
			return fmt.Errorf("%s is defined differently on the target:\n%s\nsource:\n%s", n, d, s)
		}
	}
	return nil
}
