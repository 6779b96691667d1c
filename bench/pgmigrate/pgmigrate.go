// Package pgmigrate is issue 14's benchmark of a migration into
// PostgreSQL: prepl beside pg_chameleon and pgloader (each where it
// installs), on the same source data and the same binlog, on the same
// machine, in one run. It times the copy (prepl copy; pg_chameleon's
// init_replica; pgloader's LOAD DATABASE), then, with the replicas stopped, has
// sysbench write a binlog on the source and times the catch-up (prepl
// replicate --stop-at-end; pg_chameleon's start_replica until its replay
// has applied the workload's last row). After each phase every target is
// compared with the source: a fast wrong answer is a failure, not a
// result. Each repeat starts with two fresh PostgreSQL instances; the
// system that runs first alternates between repeats.
package pgmigrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" for the targets

	"github.com/prepl/prepl/bench"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
)

// Config is a benchmark run.
type Config struct {
	Prepl         string // the prepl binary
	Python        string // Python 3 for pg_chameleon, with Debian's modules
	Mirror        string // directory of the repository mirrors (owner+name/repo)
	Tables, Rows  int    // sysbench data: tables × rows each
	Script        string // sysbench script writing the binlog
	Events        int    // its transactions per repeat
	SourceThreads int
	Workers       int // prepl replicate --workers
	Repeats       int
	CopyOnly      bool          // time the copies only: no workload, no catch-up
	StepTimeout   time.Duration // one copy or catch-up
	OutDir        string        // results.md and logs/
	Command       string        // the command line, for the report
	Say           func(format string, args ...any)
}

// DB is the source database the benchmark migrates.
const DB = "sbtest"

// endTable holds one row per repeat, written after its workload: the
// catch-up of pg_chameleon is over when that row is on its target.
const endTable = DB + ".bench_end"

// Run measures cfg.Repeats repeats, writes results.md into cfg.OutDir
// and returns the report. Its error says what failed; the report holds
// what was measured all the same.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Repeats < 1 || cfg.Tables < 1 || cfg.Rows < 1 || (cfg.Events < 1 && !cfg.CopyOnly) {
		return nil, fmt.Errorf("repeats, tables, rows and events must be at least 1")
	}
	logs := filepath.Join(cfg.OutDir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "prepl-bench-pg-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	rep := &Report{Command: cfg.Command, Machine: bench.DetectMachine(ctx, cfg.Prepl), CopyOnly: cfg.CopyOnly}
	b := &bencher{cfg: cfg, rep: rep, logs: logs}
	// Each peer is measured where it installs: pgloader from Debian,
	// pg_chameleon from git mirrors (on no registry this machine reaches).
	if b.cham, err = installChameleon(ctx, cfg.Python, cfg.Mirror, work); err != nil {
		b.cham = nil
		var lines []string
		for _, l := range strings.Split(err.Error(), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		rep.Notes = append(rep.Notes, "pg_chameleon not measured: "+strings.ReplaceAll(strings.Join(lines, "; "), ":; ", ": "))
	} else {
		rep.Versions = append(rep.Versions, b.cham.Version)
	}
	if b.pgl, err = findPgloader(ctx); err != nil {
		b.pgl = nil
		rep.Notes = append(rep.Notes, "pgloader not measured: "+err.Error())
	} else {
		rep.Versions = append(rep.Versions, b.pgl.Version)
	}
	if b.cham == nil && b.pgl == nil {
		return rep, fmt.Errorf("no peer to measure prepl beside: %s", strings.Join(rep.Notes, "; "))
	}
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
				runErr = fmt.Errorf("repeat %d, %s: %s", r.Repeat, r.System, r.Err)
				break
			}
		}
	}
	return rep, runErr
}

type bencher struct {
	cfg  Config
	cham *chameleon // nil: not installed
	pgl  *pgloader  // nil: not installed
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
	o.Binlog = true
	o.BinlogRowMetadata = "FULL"
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
	if err := sb.Prepare(ctx, b.cfg.Script); err != nil {
		return err
	}
	if _, err := b.sdb.ExecContext(ctx, "CREATE TABLE "+endTable+" (id INT PRIMARY KEY)"); err != nil {
		return err
	}
	var mib float64
	if err := b.sdb.QueryRowContext(ctx, "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) / 1048576 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", DB).Scan(&mib); err != nil {
		return err
	}
	b.rep.Data = fmt.Sprintf("%d sysbench tables × %s rows (%.0f MiB of InnoDB data and indexes on the source)", b.cfg.Tables, thousands(b.cfg.Rows), mib)
	for r := 1; r <= b.cfg.Repeats; r++ {
		if err := b.repeat(ctx, sb, r); err != nil {
			return fmt.Errorf("repeat %d: %w", r, err)
		}
	}
	return nil
}

// side is one system's target and steps in a repeat.
type side struct {
	res     *Result
	pg      *sandbox.PGServer
	db      *sql.DB
	copy    func(context.Context) (time.Duration, error)
	catchUp func(context.Context) (time.Duration, error)
	check   func(context.Context) error
}

// step runs one timed step of s unless an earlier one failed, then checks
// its target; it returns the seconds, 0 on a failure (in s.res.Err).
func (b *bencher) step(ctx context.Context, s *side, what string, f func(context.Context) (time.Duration, error)) float64 {
	if s.res.Err != "" {
		return 0
	}
	sctx, cancel := context.WithTimeout(ctx, b.cfg.StepTimeout)
	defer cancel()
	d, err := f(sctx)
	if err == nil {
		err = s.check(ctx)
	}
	b.rep.Machine.LoadMax = max(b.rep.Machine.LoadMax, bench.LoadAvg())
	if err != nil {
		s.res.Err = what + ": " + err.Error()
		b.say("repeat %d: %s %s failed: %v", s.res.Repeat, s.res.System, what, err)
		return 0
	}
	b.say("repeat %d: %s %s %.2f s, target = source", s.res.Repeat, s.res.System, what, d.Seconds())
	return d.Seconds()
}

func (b *bencher) repeat(ctx context.Context, sb bench.Sysbench, r int) error {
	systems := []string{Prepl}
	if b.cham != nil {
		systems = append(systems, Chameleon)
	}
	if b.pgl != nil {
		systems = append(systems, Pgloader)
	}
	sides := make([]*side, len(systems))
	for i, system := range systems {
		pg, err := sandbox.StartPostgres(ctx)
		if err != nil {
			return fmt.Errorf("start PostgreSQL: %w", err)
		}
		defer pg.Close()
		db, err := pg.Open("postgres")
		if err != nil {
			return err
		}
		defer db.Close()
		sides[i] = &side{res: &Result{Repeat: r, System: system}, pg: pg, db: db}
	}
	if r == 1 {
		var v string
		if err := sides[0].db.QueryRowContext(ctx, "SHOW server_version").Scan(&v); err != nil {
			return err
		}
		b.rep.Versions = append([]string{"PostgreSQL " + v}, b.rep.Versions...)
	}
	for _, s := range sides {
		switch s.res.System {
		case Prepl:
			b.preplSteps(s, r)
		case Chameleon:
			if err := b.chameleonSteps(ctx, s, r); err != nil {
				return err
			}
		case Pgloader:
			b.pgloaderSteps(s, r)
		}
	}
	// The system that runs first turns with the repeats.
	k := (r - 1) % len(sides)
	sides = append(append([]*side(nil), sides[k:]...), sides[:k]...)
	sides[0].res.First = true

	for _, s := range sides {
		s.res.Copy = b.step(ctx, s, "copy", s.copy)
	}
	if b.cfg.CopyOnly {
		for _, s := range sides {
			b.rep.Results = append(b.rep.Results, *s.res)
		}
		return nil
	}
	start, err := b.gtidPos(ctx)
	if err != nil {
		return err
	}
	b.say("repeat %d: sysbench %s, %d transactions from %d threads, the replicas stopped", r, b.cfg.Script, b.cfg.Events, b.cfg.SourceThreads)
	t0 := time.Now()
	if err := sb.Run(ctx, b.cfg.Script, bench.RunSpec{Threads: b.cfg.SourceThreads, Events: b.cfg.Events}); err != nil {
		return err
	}
	gen := time.Since(t0)
	if _, err := b.sdb.ExecContext(ctx, "INSERT INTO "+endTable+" VALUES (?)", r); err != nil {
		return err
	}
	end, err := b.gtidPos(ctx)
	if err != nil {
		return err
	}
	txns, err := position.Distance(start, end)
	if err != nil {
		return err
	}
	b.rep.Binlog = append(b.rep.Binlog, fmt.Sprintf("%s transactions of sysbench %s from %d threads, written in %.1f s, and the end row (GTID %s to %s)",
		thousands(txns), b.cfg.Script, b.cfg.SourceThreads, gen.Seconds(), start, end))
	for _, s := range sides {
		if s.catchUp != nil { // pgloader only copies
			s.res.CatchUp = b.step(ctx, s, "catch-up", s.catchUp)
		}
	}
	for _, s := range sides {
		b.rep.Results = append(b.rep.Results, *s.res)
	}
	return nil
}

// preplSteps: prepl copy, then prepl replicate from the position the copy
// stored (no --start-gtid) until the source's end; checked by prepl
// verify and by the row comparison pg_chameleon's target gets.
func (b *bencher) preplSteps(s *side, r int) {
	url := s.pg.URL("postgres")
	log := func(what string) string { return filepath.Join(b.logs, fmt.Sprintf("r%d-prepl-%s.log", r, what)) }
	s.copy = func(ctx context.Context) (time.Duration, error) {
		d, _, err := bench.RunPrepl(ctx, b.cfg.Prepl, []string{"copy", "--source", b.src.URL(), "--target", url,
			"--databases", DB, "--progress=false"}, log("copy"))
		return d, err
	}
	s.catchUp = func(ctx context.Context) (time.Duration, error) {
		d, _, err := bench.RunPrepl(ctx, b.cfg.Prepl, []string{"replicate", "--source", b.src.URL(), "--target", url,
			"--stop-at-end", "--workers", fmt.Sprint(b.cfg.Workers), "--progress", "0"}, log("replicate"))
		return d, err
	}
	checks := 0
	s.check = func(ctx context.Context) error {
		checks++
		out, err := exec.CommandContext(ctx, b.cfg.Prepl, "verify", "--source", b.src.URL(), "--target", url, "--databases", DB).CombinedOutput()
		os.WriteFile(log(fmt.Sprintf("verify-%d", checks)), out, 0o644)
		if err != nil {
			return fmt.Errorf("prepl verify: %v: %s", err, bench.Tail(string(out), 6))
		}
		return sameRows(ctx, b.sdb, s.db)
	}
}

// chameleonSteps: pg_chameleon's catalog and source are set up untimed,
// then init_replica is the copy and start_replica the catch-up.
func (b *bencher) chameleonSteps(ctx context.Context, s *side, r int) error {
	log := func(what string) string {
		return filepath.Join(b.logs, fmt.Sprintf("r%d-pg_chameleon-%s.log", r, what))
	}
	if err := b.cham.configure(b.src, s.pg, DB); err != nil {
		return err
	}
	for _, verb := range []string{"create_replica_schema", "add_source"} {
		if _, err := b.cham.run(ctx, verb, log(verb)); err != nil {
			return err
		}
	}
	var sources int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sch_chameleon.t_sources").Scan(&sources); err != nil || sources != 1 {
		return fmt.Errorf("pg_chameleon's catalog is not on its sandbox %s (%d sources, %v): see %s", s.pg.Addr(), sources, err, log("add_source"))
	}
	s.copy = func(ctx context.Context) (time.Duration, error) {
		return b.cham.run(ctx, "init_replica", log("init_replica"))
	}
	s.catchUp = func(ctx context.Context) (time.Duration, error) {
		return b.cham.catchUp(ctx, log("start_replica"), func() (bool, error) { return endMarked(ctx, s.db, endTable, r) })
	}
	s.check = func(ctx context.Context) error { return sameRows(ctx, b.sdb, s.db) }
	return nil
}

// pgloaderSteps: pgloader's copy of the database, checked as
// pg_chameleon's target is; it has no catch-up.
func (b *bencher) pgloaderSteps(s *side, r int) {
	s.copy = func(ctx context.Context) (time.Duration, error) {
		return b.pgl.copy(ctx, b.src, s.pg, b.cfg.Workers, filepath.Join(b.logs, fmt.Sprintf("r%d-pgloader.log", r)))
	}
	s.check = func(ctx context.Context) error { return sameRows(ctx, b.sdb, s.db) }
}

func (b *bencher) gtidPos(ctx context.Context) (string, error) {
	var p string
	err := b.sdb.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&p)
	return p, err
}

// thousands writes n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	var out strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out.WriteByte(',')
		}
		out.WriteRune(c)
	}
	return out.String()
}
