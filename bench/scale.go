package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/verify"
)

// ScaleConfig is `prepl bench scale`: prepl at sizes the catch-up
// benchmark never reaches, each part checked against its source.
//   - Volume: a binlog of VolumeBytes (10 GiB by default) replayed, RSS
//     and throughput sampled over time (the issue: RSS under 200 MB the
//     whole time, throughput within 10% from the first tenth to the last);
//   - BigTxn: one transaction of BigTxnBytes (1 GiB), a single UPDATE of
//     millions of rows: applied without holding it whole, or refused
//     before anything of it is applied with an error that says how to go
//     on, and then the way on it names is followed to the end;
//   - Workers: the update-index binlog of the catch-up benchmark with
//     --workers up to 256, on a target with max_connections enough.
type ScaleConfig struct {
	Prepl       string
	VolumeBytes int64 // 0 skips the part
	BigTxnBytes int64 // 0 skips the part
	Workers     []int // nil skips the part
	// PreplArgs are extra flags of every prepl run (e.g. --max-txn-size).
	PreplArgs []string
	OutDir    string
	Keep      bool
	Command   string
	Progress  io.Writer
}

// ScaleReport is what `prepl bench scale` measured.
type ScaleReport struct {
	Command string
	Machine Machine
	Volume  *ScaleRun // nil when not run
	BigTxn  *ScaleRun
	// Workers is the catch-up benchmark of the workers part.
	Workers *Report
}

// ScaleRun is one prepl run of the scale benchmark, sampled over time.
type ScaleRun struct {
	Name        string
	Args        []string // prepl's command line
	BinlogBytes int64    // bytes of the binlog files replayed
	Txns        int      // source transactions in them
	Rows        int64    // rows the source changed (volume: rows updated; big: rows of the UPDATE)
	Generate    time.Duration
	Seconds     float64
	Samples     []ScaleSample
	ExitCode    int    // prepl's exit status
	Output      string // the end of prepl's output
	Verified    bool   // target = source after the part
	Err         string // why the part failed
	// Notes are what the part checked, in order, for the report.
	Notes []string
	// Version is the source's VERSION().
	Version string
}

// ScaleSample is prepl's state at one moment of a run.
type ScaleSample struct {
	At       time.Duration // since prepl started
	RSS      int64         // bytes, VmRSS of the prepl process
	Position int64         // binlog bytes applied (the target's stored position)
}

// MaxRSS is the highest RSS sampled.
func (r *ScaleRun) MaxRSS() int64 {
	var m int64
	for _, s := range r.Samples {
		m = max(m, s.RSS)
	}
	return m
}

// Tenths is the throughput (binlog bytes per second) of each tenth of the
// binlog applied: the time the stored position took to cross it, the
// crossing times interpolated between samples. The binlog applied ends at
// the last position stored (the files end with a rotate event after the
// last transaction). Fewer than ten values when the position stopped
// short of the end of the files.
func (r *ScaleRun) Tenths() []float64 {
	end := int64(0)
	for _, s := range r.Samples {
		end = max(end, s.Position)
	}
	if end <= 0 || (r.ExitCode != 0 || r.Err != "") && end < r.BinlogBytes {
		end = r.BinlogBytes
	}
	if end <= 0 {
		return nil
	}
	var out []float64
	step := float64(end) / 10
	prev := ScaleSample{}
	crossed := 0.0 // seconds at which the last boundary was crossed
	k := 1
	for _, s := range r.Samples {
		for k <= 10 && float64(s.Position) >= step*float64(k) && s.Position > prev.Position {
			frac := (step*float64(k) - float64(prev.Position)) / float64(s.Position-prev.Position)
			at := prev.At.Seconds() + frac*(s.At-prev.At).Seconds()
			out = append(out, step/(at-crossed))
			crossed, k = at, k+1
		}
		prev = s
	}
	return out
}

// ScaleDefaults are `make bench-scale`'s sizes.
const (
	DefaultVolumeBytes = 10 << 30
	DefaultBigTxnBytes = 1 << 30
)

// DefaultScaleWorkers are the worker counts of the workers part.
var DefaultScaleWorkers = []int{0, 4, 16, 64, 256}

// Scale runs the scale benchmark and writes scale.md and its charts in
// cfg.OutDir.
func Scale(ctx context.Context, cfg ScaleConfig) (*ScaleReport, error) {
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if _, err := os.Stat(cfg.Prepl); err != nil {
		return nil, fmt.Errorf("prepl binary: %w (build it with `make build`)", err)
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, err
	}
	prog := newProgress(cfg.Progress, 0)
	rep := &ScaleReport{Command: cfg.Command, Machine: DetectMachine(ctx, cfg.Prepl)}
	var errs []error
	if cfg.VolumeBytes > 0 {
		rep.Volume = scaleVolume(ctx, cfg, prog)
		rep.Machine.LoadMax, rep.Machine.MariaDB = max(rep.Machine.LoadMax, LoadAvg()), rep.Volume.Version
		if rep.Volume.Err != "" {
			errs = append(errs, fmt.Errorf("volume: %s", rep.Volume.Err))
		}
		if err := rep.write(cfg.OutDir); err != nil {
			return rep, err
		}
	}
	if cfg.BigTxnBytes > 0 && ctx.Err() == nil {
		rep.BigTxn = scaleBigTxn(ctx, cfg, prog)
		rep.Machine.LoadMax, rep.Machine.MariaDB = max(rep.Machine.LoadMax, LoadAvg()), rep.BigTxn.Version
		if rep.BigTxn.Err != "" {
			errs = append(errs, fmt.Errorf("big transaction: %s", rep.BigTxn.Err))
		}
		if err := rep.write(cfg.OutDir); err != nil {
			return rep, err
		}
	}
	if len(cfg.Workers) > 0 && ctx.Err() == nil {
		prog.say("workers: the update-index binlog with --workers %v", cfg.Workers)
		b, _ := ParseConfig("B")
		wl, _ := ParseWorkload("update-index")
		wr, err := Run(ctx, Config{Prepl: cfg.Prepl, Workloads: []Workload{wl}, Rows: 100000, Events: 20000,
			Threads: cfg.Workers, Configs: []ReplicaConfig{b}, Systems: []System{PreplReplay}, PreplModes: []string{"writeset"},
			PreplArgs: cfg.PreplArgs, Repeats: 3, OutDir: filepath.Join(cfg.OutDir, "workers"), Keep: cfg.Keep,
			Command: cfg.Command + " (workers part)", Progress: cfg.Progress})
		rep.Workers = wr
		if err != nil {
			errs = append(errs, fmt.Errorf("workers: %w", err))
		}
		if err := rep.write(cfg.OutDir); err != nil {
			return rep, err
		}
	}
	return rep, errors.Join(errs...)
}

// scaleSource starts a fast (not durable) source with a row-based binlog:
// how fast the source writes is not what is measured.
func scaleSource(ctx context.Context, run *ScaleRun) (*sandbox.Server, *sql.DB, error) {
	o := sandbox.Defaults()
	o.Binlog, o.BinlogRowMetadata = true, "FULL"
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 2
	o.Flags = []string{"--max-binlog-size=1G"}
	srv, err := sandbox.Start(ctx, o)
	if err != nil {
		return nil, nil, fmt.Errorf("start source: %w", err)
	}
	db, err := srv.Open("")
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	db.SetMaxOpenConns(8)
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&run.Version); err != nil {
		srv.Close()
		return nil, nil, err
	}
	return srv, db, nil
}

// scalePart is what the two generated parts share: a source, its
// snapshot, the workload's binlog files, and a replica restored from the
// snapshot (config C: the target's durability is not what is measured).
type scalePart struct {
	work      string // holds the snapshot
	src       *sandbox.Server
	db        *sql.DB
	snapshot  string
	startGTID string
	files     []string
	before    []string // binlog files before the workload
	replica   *sandbox.Server
}

// startPart starts a part's source in a new work directory.
func startPart(ctx context.Context, run *ScaleRun) (*scalePart, error) {
	work, err := os.MkdirTemp("", "prepl-scale-")
	if err != nil {
		return nil, err
	}
	p := &scalePart{work: work}
	if p.src, p.db, err = scaleSource(ctx, run); err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	return p, nil
}

func (p *scalePart) close(keep bool) {
	if p.db != nil {
		p.db.Close()
	}
	for _, s := range []*sandbox.Server{p.replica, p.src} {
		switch {
		case s == nil:
		case keep:
			s.Stop()
		default:
			s.Close()
		}
	}
	if !keep {
		os.RemoveAll(p.work)
	}
}

// snap stops the source, copies its data directory and restarts it: the
// replica's starting point.
func (p *scalePart) snap(ctx context.Context) error {
	dir := filepath.Join(p.work, "snapshot")
	if err := p.db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&p.startGTID); err != nil {
		return err
	}
	p.db.Close()
	p.src.Stop()
	var err error
	if p.before, err = p.src.BinlogFiles(); err != nil {
		return err
	}
	p.snapshot = dir
	if err := p.src.CopyDataDir(dir); err != nil {
		return err
	}
	if err := p.src.Restart(ctx); err != nil {
		return err
	}
	if p.db, err = p.src.Open(""); err != nil {
		return err
	}
	p.db.SetMaxOpenConns(8)
	return nil
}

// binlogged closes the workload's last binlog file and lists the
// workload's files and their size.
func (p *scalePart) binlogged(ctx context.Context) (int64, error) {
	if _, err := p.db.ExecContext(ctx, "FLUSH BINARY LOGS"); err != nil {
		return 0, err
	}
	after, err := p.src.BinlogFiles()
	if err != nil {
		return 0, err
	}
	var n int64
	p.files = nil
	for _, f := range after[:len(after)-1] {
		if !slices.Contains(p.before, f) {
			st, err := os.Stat(f)
			if err != nil {
				return 0, err
			}
			p.files, n = append(p.files, f), n+st.Size()
		}
	}
	if len(p.files) == 0 {
		return 0, errors.New("the workload wrote no binlog file")
	}
	return n, nil
}

func (p *scalePart) restore(ctx context.Context) error {
	c, _ := ParseConfig("C")
	var err error
	p.replica, err = sandbox.Start(ctx, c.options(p.snapshot))
	return err
}

// verify compares every table of the replica with the source.
func (p *scalePart) verify(ctx context.Context) error {
	rdb, err := p.replica.Open("")
	if err != nil {
		return err
	}
	defer rdb.Close()
	return verify.Checksums(ctx, p.db, rdb)
}

// scaleVolume: a table of 100,000 rows of about 1 KiB, updated 50 rows a
// transaction until the binlog holds cfg.VolumeBytes; then prepl replay
// of all of it, sampled.
func scaleVolume(ctx context.Context, cfg ScaleConfig, prog *progress) *ScaleRun {
	run := &ScaleRun{Name: "volume"}
	fail := func(err error) *ScaleRun { run.Err = err.Error(); return run }
	p, err := startPart(ctx, run)
	if err != nil {
		return fail(err)
	}
	defer p.close(cfg.Keep)
	const rows, perTxn = 100000, 50
	prog.say("volume: source %s: a table of %d rows of 1 KiB", p.src.Dir, rows)
	if err := execAll(ctx, p.db,
		"CREATE DATABASE scale",
		"CREATE TABLE scale.t (id INT PRIMARY KEY, k INT NOT NULL, pad VARCHAR(1024) NOT NULL) ENGINE=InnoDB",
		"INSERT INTO scale.t SELECT seq, 0, REPEAT('a', 1000) FROM scale.seq_1_to_"+strconv.Itoa(rows),
	); err != nil {
		return fail(err)
	}
	if err := p.snap(ctx); err != nil {
		return fail(err)
	}
	prog.say("volume: generating %.1f GiB of binlog: UPDATEs of %d rows of 1 KiB a transaction", float64(cfg.VolumeBytes)/(1<<30), perTxn)
	start := time.Now()
	n, err := generateVolume(ctx, p.src, p.db, cfg.VolumeBytes, rows, perTxn)
	if err != nil {
		return fail(err)
	}
	run.Generate, run.Txns, run.Rows = time.Since(start), n, int64(n)*perTxn
	if run.BinlogBytes, err = p.binlogged(ctx); err != nil {
		return fail(err)
	}
	prog.say("volume: %d transactions, %.2f GiB in %d binlog files, generated in %s", n, float64(run.BinlogBytes)/(1<<30),
		len(p.files), run.Generate.Round(time.Second))
	if err := p.restore(ctx); err != nil {
		return fail(err)
	}
	prog.say("volume: prepl replay of %d binlog files", len(p.files))
	if err := p.replay(ctx, cfg, run, "volume.log"); err != nil {
		return fail(err)
	}
	if run.ExitCode != 0 {
		return fail(fmt.Errorf("prepl replay exited %d: %s", run.ExitCode, run.Output))
	}
	if err := p.verify(ctx); err != nil {
		return fail(fmt.Errorf("target differs from source: %w", err))
	}
	run.Verified = true
	prog.say("volume: applied in %.1f s, RSS at most %.0f MiB, target = source", run.Seconds, float64(run.MaxRSS())/(1<<20))
	return run
}

// generateVolume runs UPDATE transactions on two connections until the
// binlog files written since the snapshot reach bytes; it returns the
// transactions committed.
func generateVolume(ctx context.Context, src *sandbox.Server, db *sql.DB, bytes int64, rows, perTxn int) (int, error) {
	base, err := src.BinlogFiles()
	if err != nil {
		return 0, err
	}
	size := func() int64 {
		files, _ := src.BinlogFiles()
		var n int64
		for _, f := range files {
			if slices.Contains(base[:len(base)-1], f) {
				continue
			}
			if st, err := os.Stat(f); err == nil {
				n += st.Size()
			}
		}
		return n
	}
	// The sessions stop between statements, never inside one: a
	// statement cancelled on the client may still commit on the server,
	// after the binlog was closed, and leave the source ahead of what was
	// replayed.
	var stop atomic.Bool
	var mu sync.Mutex
	txns := 0
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; !stop.Load(); i += 2 {
				lo := (i * 7919 % (rows / perTxn)) * perTxn
				pad := strings.Repeat(string(rune('a'+i%26)), 1000)
				_, err := db.ExecContext(ctx, "UPDATE scale.t SET k = k + 1, pad = ? WHERE id BETWEEN ? AND ?", pad, lo+1, lo+perTxn)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					stop.Store(true)
				}
				if err == nil {
					txns++
				}
				mu.Unlock()
			}
		}(w)
	}
	for !stop.Load() && ctx.Err() == nil && size() < bytes {
		sleep(ctx, 500*time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if firstErr != nil {
		return 0, fmt.Errorf("volume workload: %w", firstErr)
	}
	return txns, ctx.Err()
}

// scaleBigTxn: one UPDATE of every row of a table large enough that its
// transaction holds cfg.BigTxnBytes of binlog, between two small
// transactions; then prepl replay of it, sampled. If prepl refuses it,
// the way on that its error names is followed: the transaction applied
// with mariadb-binlog | mariadb, then prepl again with --skip-gtid.
func scaleBigTxn(ctx context.Context, cfg ScaleConfig, prog *progress) *ScaleRun {
	run := &ScaleRun{Name: "one big transaction"}
	fail := func(err error) *ScaleRun { run.Err = err.Error(); return run }
	p, err := startPart(ctx, run)
	if err != nil {
		return fail(err)
	}
	defer p.close(cfg.Keep)
	// An UPDATE of a row logs its before and after images: about 2 × 135
	// bytes for this table.
	rows := cfg.BigTxnBytes/270 + 1
	run.Rows = rows
	prog.say("big transaction: source %s: a table of %d rows", p.src.Dir, rows)
	if err := execAll(ctx, p.db,
		"CREATE DATABASE scale",
		"CREATE TABLE scale.big (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL) ENGINE=InnoDB",
		"CREATE TABLE scale.small (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB",
		// The fill is in the snapshot: it need not be in the binlog.
		"SET SESSION sql_log_bin = 0",
		"INSERT INTO scale.big SELECT seq, 0, REPEAT('c', 120) FROM scale.seq_1_to_"+strconv.FormatInt(rows, 10),
	); err != nil {
		return fail(err)
	}
	if err := p.snap(ctx); err != nil {
		return fail(err)
	}
	start := time.Now()
	var bigGTID string
	if err := execAll(ctx, p.db, "INSERT INTO scale.small VALUES (1, 1)", bigUpdate); err != nil {
		return fail(err)
	}
	if err := p.db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&bigGTID); err != nil {
		return fail(err)
	}
	if err := execAll(ctx, p.db, "INSERT INTO scale.small VALUES (2, 2)"); err != nil {
		return fail(err)
	}
	run.Generate, run.Txns = time.Since(start), 3
	if run.BinlogBytes, err = p.binlogged(ctx); err != nil {
		return fail(err)
	}
	prog.say("big transaction: %s, an UPDATE of %d rows, %.2f GiB of binlog with the two small ones", bigGTID, rows,
		float64(run.BinlogBytes)/(1<<30))
	if err := p.restore(ctx); err != nil {
		return fail(err)
	}
	prog.say("big transaction: prepl replay of %d binlog file(s)", len(p.files))
	if err := p.replay(ctx, cfg, run, "bigtxn.log"); err != nil {
		return fail(err)
	}
	if run.ExitCode != 0 {
		if err := p.goOn(ctx, cfg, run, bigGTID, prog); err != nil {
			return fail(err)
		}
	} else {
		run.Notes = append(run.Notes, fmt.Sprintf("prepl applied it: exit 0 in %.1f s", run.Seconds))
	}
	if err := p.verify(ctx); err != nil {
		return fail(fmt.Errorf("target differs from source: %w", err))
	}
	run.Verified = true
	prog.say("big transaction: done, RSS at most %.0f MiB, target = source", float64(run.MaxRSS())/(1<<20))
	return run
}

// bigUpdate is the one big transaction's statement.
const bigUpdate = "UPDATE scale.big SET k = k + 1, c = REPEAT('d', 120)"

// goOn checks a refusal of the big transaction and follows the way on it
// names: nothing of it applied, the small transaction before it applied;
// then mariadb-binlog | mariadb (or, for a statement too big for it, the
// statement run again) applies it, and prepl replay --skip-gtid finishes
// the binlog.
func (p *scalePart) goOn(ctx context.Context, cfg ScaleConfig, run *ScaleRun, gtid string, prog *progress) error {
	out := run.Output
	for _, want := range []string{gtid, "--max-txn-size", "--skip-gtid " + gtid, "mariadb-binlog --start-position="} {
		if !strings.Contains(out, want) {
			return fmt.Errorf("prepl exited %d, but its error does not name %q:\n%s", run.ExitCode, want, out)
		}
	}
	rdb, err := p.replica.Open("")
	if err != nil {
		return err
	}
	defer rdb.Close()
	var small, changed int
	if err := rdb.QueryRowContext(ctx, "SELECT (SELECT COUNT(*) FROM scale.small), (SELECT COUNT(*) FROM scale.big WHERE k <> 0)").Scan(&small, &changed); err != nil {
		return err
	}
	if small != 1 || changed != 0 {
		return fmt.Errorf("after the refusal the target has %d of the small rows (want 1: the one before) and %d rows of the big UPDATE (want 0)", small, changed)
	}
	run.Notes = append(run.Notes, fmt.Sprintf("prepl refused it (exit %d after %.1f s), naming the GTID, the size, the cap and the way on; "+
		"the transaction before it was applied, nothing of it", run.ExitCode, run.Seconds))
	// The way on: the positions are in the error (--start-position=S --stop-position=E FILE).
	i := strings.Index(out, "--start-position=")
	var s, e int
	var file string
	if _, err := fmt.Sscanf(out[i:], "--start-position=%d --stop-position=%d %s", &s, &e, &file); err != nil {
		return fmt.Errorf("read the positions from the error: %w", err)
	}
	path := ""
	for _, f := range p.files {
		if filepath.Base(f) == file {
			path = f
		}
	}
	if path == "" {
		return fmt.Errorf("the error names %s, not one of the files replayed %v", file, p.files)
	}
	// mariadb-binlog prints the rows events of one statement as one
	// BINLOG statement of base64 text (4/3 of their bytes), which must fit
	// in the target's max_allowed_packet, at most 1 GiB. A bigger
	// statement takes the error's last way on: run again on the target.
	start := time.Now()
	how := ""
	if int64(e-s)*4/3 < 1<<30-(1<<20) {
		how = fmt.Sprintf("mariadb-binlog --start-position=%d --stop-position=%d %s | mariadb --max-allowed-packet=1G", s, e, file)
		prog.say("big transaction: refused as expected; applying it with %s", how)
		pipe := fmt.Sprintf("mariadb-binlog --start-position=%d --stop-position=%d %s | mariadb --max-allowed-packet=1G --host=127.0.0.1 --port=%d --user=root",
			s, e, path, p.replica.Port)
		if _, err := rdb.ExecContext(ctx, "SET GLOBAL max_allowed_packet = 1073741824"); err != nil {
			return err
		}
		if b, err := exec.CommandContext(ctx, "sh", "-c", pipe).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", pipe, err, Tail(string(b), 3))
		}
	} else {
		how = fmt.Sprintf("its statement run again on the target (its %d bytes of rows events, as BINLOG text, are more than "+
			"max_allowed_packet's 1 GiB maximum, so mariadb-binlog | mariadb cannot carry it)", e-s)
		prog.say("big transaction: refused as expected; %s", how)
		if _, err := rdb.ExecContext(ctx, bigUpdate); err != nil {
			return err
		}
	}
	outside := time.Since(start)
	again := &ScaleRun{Name: "after the skip"}
	if err := p.replay(ctx, cfg, again, "bigtxn-skip.log", "--skip-gtid", gtid); err != nil {
		return err
	}
	if again.ExitCode != 0 {
		return fmt.Errorf("prepl replay --skip-gtid %s exited %d: %s", gtid, again.ExitCode, again.Output)
	}
	run.Notes = append(run.Notes, fmt.Sprintf("the way on: %s, %.1f s; prepl replay --skip-gtid %s then "+
		"finished the binlog in %.1f s, RSS at most %.0f MiB", how, outside.Seconds(), gtid, again.Seconds, float64(again.MaxRSS())/(1<<20)))
	return nil
}

// execAll runs statements in order on one connection of db.
func execAll(ctx context.Context, db *sql.DB, stmts ...string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("source: %s: %w", q, err)
		}
	}
	return nil
}

// replay runs prepl replay of the part's files onto its replica (with
// cfg.PreplArgs, then extra), sampled into run; its output goes to
// logName in cfg.OutDir.
func (p *scalePart) replay(ctx context.Context, cfg ScaleConfig, run *ScaleRun, logName string, extra ...string) error {
	run.Args = append([]string{"replay", "--target", p.replica.URL(), "--start-gtid", p.startGTID, "--progress", "0"}, cfg.PreplArgs...)
	run.Args = append(append(run.Args, extra...), p.files...)
	return sampledPrepl(ctx, cfg.Prepl, run, p.replica, p.files, filepath.Join(cfg.OutDir, logName))
}

// sampledPrepl runs prepl with run.Args, sampling its RSS and the
// target's stored position every 250 ms, and fills run's time, samples,
// exit code and the end of its output (also written to logPath).
func sampledPrepl(ctx context.Context, bin string, run *ScaleRun, replica *sandbox.Server, files []string, logPath string) error {
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	fmt.Fprintf(log, "$ %s %s\n", bin, strings.Join(run.Args, " "))
	offsets, err := fileOffsets(files)
	if err != nil {
		return err
	}
	db, err := replica.Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	var out strings.Builder
	cmd := exec.CommandContext(ctx, bin, run.Args...)
	cmd.Stdout, cmd.Stderr = io.MultiWriter(log, &out), io.MultiWriter(log, &out)
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case <-tick.C:
			s := ScaleSample{At: time.Since(start), RSS: processRSS(cmd.Process.Pid)}
			s.Position = appliedBytes(ctx, db, offsets)
			run.Samples = append(run.Samples, s)
		}
	}
	run.Seconds = time.Since(start).Seconds()
	if pos := appliedBytes(ctx, db, offsets); pos > 0 {
		run.Samples = append(run.Samples, ScaleSample{At: time.Since(start), Position: pos})
	}
	run.Output = Tail(out.String(), 6)
	if waitErr != nil {
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			return fmt.Errorf("prepl: %w", waitErr)
		}
		run.ExitCode = ee.ExitCode()
	}
	return nil
}

// fileOffsets maps each binlog file's base name to the bytes of the files
// before it.
func fileOffsets(files []string) (map[string]int64, error) {
	out := map[string]int64{}
	var n int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		out[filepath.Base(f)] = n
		n += st.Size()
	}
	return out, nil
}

// appliedBytes is how far into the binlog files the target's stored
// position is (the furthest slot); 0 before prepl stored one.
func appliedBytes(ctx context.Context, db *sql.DB, offsets map[string]int64) int64 {
	rows, err := db.QueryContext(ctx, "SELECT file, pos FROM prepl.position")
	if err != nil {
		return 0
	}
	defer rows.Close()
	var best int64
	for rows.Next() {
		var file string
		var pos int64
		if rows.Scan(&file, &pos) != nil {
			return best
		}
		if off, ok := offsets[file]; ok {
			best = max(best, off+pos)
		}
	}
	return best
}

// processRSS is VmRSS of a process in bytes, 0 when it is gone.
func processRSS(pid int) int64 {
	kb, _ := strconv.ParseInt(strings.TrimSuffix(procField(fmt.Sprintf("/proc/%d/status", pid), "VmRSS"), " kB"), 10, 64)
	return kb << 10
}
