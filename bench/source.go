package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prepl/prepl/internal/srcpos"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
)

// Source is a sandbox source, the snapshot replicas are restored from and
// the binlog of one workload generated after it.
type Source struct {
	Server   *sandbox.Server
	DB       *sql.DB
	Snapshot string // data directory copied before the workload
	Stats    SourceStats
	// Files hold the workload's binlog events, complete (rotated) files
	// only; the transactions of the prepare are in earlier files.
	Files []string
	// MasterFile and MasterPos are SHOW MASTER STATUS once the workload is
	// binlogged: a replica's IO thread has fetched everything there.
	MasterFile string
	MasterPos  uint64
	// prepareFiles are the binlog files written before the snapshot.
	prepareFiles []string
}

// SourceStats describe a workload's binlog.
type SourceStats struct {
	Workload string
	Script   string
	Rows     int // per table; 0 for a script of the tree (ScriptArgs)
	Tables   int
	// ScriptArgs are the options given to a script of the tree.
	ScriptArgs []string
	// Prepare is the time sysbench prepare took.
	Prepare time.Duration
	// DataBytes is the sysbench tables' data and indexes on disk after
	// the prepare (information_schema data_length + index_length).
	DataBytes     int64
	SourceThreads int
	CommitWait    bool
	// StartGTID is the gtid_binlog_pos of the snapshot; EndGTID the one
	// after the workload.
	StartGTID, EndGTID string
	Txns               int
	// BinlogCommits / BinlogGroupCommits (status counters during the
	// workload) is the average group commit: what commit-order parallel
	// replication can run together.
	BinlogCommits, BinlogGroupCommits int64
	Generate                          time.Duration // sysbench run time on the source
	Version                           string        // the source's VERSION()
}

// GroupSize is the average number of transactions per group commit.
func (s SourceStats) GroupSize() float64 {
	if s.BinlogGroupCommits == 0 {
		return 0
	}
	return float64(s.BinlogCommits) / float64(s.BinlogGroupCommits)
}

// prepareSource starts a source for workload w, fills its table, snapshots
// it and generates the workload's binlog. The source is durable
// (sync_binlog=1, innodb_flush_log_at_trx_commit=1) like the seeds'
// masters: group commits then form as they do in production.
func prepareSource(ctx context.Context, cfg *Config, w Workload, workDir string, say func(string, ...any)) (*Source, error) {
	o := sandbox.Defaults()
	o.Binlog = true
	o.BinlogRowMetadata = "FULL"
	o.SyncBinlog, o.FlushLogAtTrxCommit = 1, 1
	srv, err := sandbox.Start(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("start source: %w", err)
	}
	src := &Source{Server: srv}
	ok := false
	defer func() {
		if !ok {
			src.Close(cfg.Keep)
		}
	}()
	st := &src.Stats
	*st = SourceStats{Workload: w.Name, Script: w.Script, Rows: cfg.Rows, Tables: cfg.Tables, SourceThreads: cfg.SourceThreads, CommitWait: w.CommitWait}
	if w.Serial {
		st.SourceThreads = 1
	}
	sb := Sysbench{Server: srv, DB: w.DB, TableSize: cfg.Rows, Tables: cfg.Tables, RandType: cfg.RandType}
	script := w.Script
	if w.Lua != nil {
		// A script of the tree sizes its data itself: --rows and
		// --tables do not apply, --script-args do.
		script = filepath.Join(workDir, w.Script+".lua")
		if err := os.WriteFile(script, w.Lua, 0o644); err != nil {
			return nil, fmt.Errorf("write the workload's sysbench script: %w", err)
		}
		sb.Options = append([]string{}, cfg.ScriptArgs...)
		st.Rows, st.Tables, st.ScriptArgs = 0, 0, sb.Options
		say("%s: source %s: sysbench %s prepare %s", w.Name, srv.Dir, script, strings.Join(sb.Options, " "))
	} else {
		say("%s: source %s: sysbench %s prepare, %d table(s) of %d rows", w.Name, srv.Dir, w.Script, cfg.Tables, cfg.Rows)
	}
	start := time.Now()
	if err := sb.Prepare(ctx, script); err != nil {
		return nil, err
	}
	st.Prepare = time.Since(start)
	if st.DataBytes, err = dataBytes(ctx, srv, sb.db()); err != nil {
		return nil, err
	}
	if err := src.snapshot(ctx, filepath.Join(workDir, "snapshot-"+w.Name)); err != nil {
		return nil, err
	}
	say("%s: snapshot at GTID %s; generating the binlog: %d events, %d source threads, commit wait %v",
		w.Name, st.StartGTID, cfg.Events, st.SourceThreads, w.CommitWait)
	if err := src.generate(ctx, sb, w, script, cfg.Events); err != nil {
		return nil, err
	}
	say("%s: %d transactions in %d group commits (%.1f per group), generated in %s (%.0f txn/s)",
		w.Name, st.Txns, st.BinlogGroupCommits, st.GroupSize(), st.Generate.Round(time.Millisecond),
		float64(st.Txns)/st.Generate.Seconds())
	say("%s: the workload's binlog: %s (from GTID %s)", w.Name, strings.Join(src.Files, " "), st.StartGTID)
	if cfg.SaveBinlog != "" {
		dir, err := src.saveBinlog(filepath.Join(cfg.SaveBinlog, w.Name))
		if err != nil {
			return nil, err
		}
		say("%s: binlog files copied to %s (start GTID in %s)", w.Name, dir, filepath.Join(dir, "start-gtid"))
	}
	ok = true
	return src, nil
}

// dataBytes is the size of schema's tables, data and indexes, after
// ANALYZE TABLE makes information_schema's figures current.
func dataBytes(ctx context.Context, srv *sandbox.Server, schema string) (int64, error) {
	db, err := srv.Open(schema)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = ?", schema)
	if err != nil {
		return 0, fmt.Errorf("source data size: %w", err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return 0, err
		}
		tables = append(tables, "`"+t+"`")
	}
	rows.Close()
	if len(tables) > 0 {
		if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+strings.Join(tables, ", ")); err != nil {
			return 0, fmt.Errorf("source data size: %w", err)
		}
	}
	var n sql.NullInt64
	err = db.QueryRowContext(ctx, "SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema = ?", schema).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("source data size: %w", err)
	}
	return n.Int64, nil
}

// snapshot stops the source cleanly, copies its data directory and
// starts it again: the copy is every replica's starting point, at GTID
// StartGTID. The restart opens a new binlog file, so the workload's
// transactions are in files of their own.
func (s *Source) snapshot(ctx context.Context, dir string) error {
	db, err := s.Server.Open("")
	if err != nil {
		return err
	}
	err = db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos, VERSION()").Scan(&s.Stats.StartGTID, &s.Stats.Version)
	db.Close()
	if err != nil {
		return fmt.Errorf("source gtid_binlog_pos: %w", err)
	}
	s.Server.Stop()
	if s.prepareFiles, err = s.Server.BinlogFiles(); err != nil {
		return err
	}
	if err := s.Server.CopyDataDir(dir); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	s.Snapshot = dir
	if err := s.Server.Restart(ctx); err != nil {
		return fmt.Errorf("restart source after snapshot: %w", err)
	}
	s.DB, err = s.Server.Open("")
	return err
}

// generate runs the workload and records what it binlogged.
func (s *Source) generate(ctx context.Context, sb Sysbench, w Workload, script string, events int) error {
	wait := [2]int{0, 0}
	if w.CommitWait {
		wait = [2]int{12, 10000}
	}
	if _, err := s.DB.ExecContext(ctx, fmt.Sprintf("SET GLOBAL binlog_commit_wait_count = %d, GLOBAL binlog_commit_wait_usec = %d", wait[0], wait[1])); err != nil {
		return fmt.Errorf("source commit wait: %w", err)
	}
	start := time.Now()
	if err := sb.Run(ctx, script, RunSpec{Threads: s.Stats.SourceThreads, Events: events}); err != nil {
		return err
	}
	s.Stats.Generate = time.Since(start)
	if _, err := s.DB.ExecContext(ctx, "SET GLOBAL binlog_commit_wait_count = 0, GLOBAL binlog_commit_wait_usec = 0"); err != nil {
		return err
	}
	st := &s.Stats
	for name, dst := range map[string]*int64{"Binlog_commits": &st.BinlogCommits, "Binlog_group_commits": &st.BinlogGroupCommits} {
		var n string
		if err := s.DB.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE ?", name).Scan(&n, dst); err != nil {
			return fmt.Errorf("source status %s: %w", name, err)
		}
	}
	if err := s.DB.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&st.EndGTID); err != nil {
		return err
	}
	var err error
	if st.Txns, err = position.Distance(st.StartGTID, st.EndGTID); err != nil {
		return fmt.Errorf("count the workload's transactions: %w", err)
	}
	if st.Txns == 0 {
		return fmt.Errorf("sysbench %s wrote nothing to the binlog", w.Script)
	}
	// Close the last workload file so every file handed to prepl replay
	// is complete; the new one holds no transaction.
	if _, err := s.DB.ExecContext(ctx, "FLUSH BINARY LOGS"); err != nil {
		return err
	}
	file, pos, err := srcpos.FilePos(ctx, s.DB)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	s.MasterFile, s.MasterPos = file, uint64(pos)
	after, err := s.Server.BinlogFiles()
	if err != nil {
		return err
	}
	for _, f := range after[:len(after)-1] {
		if !slices.Contains(s.prepareFiles, f) {
			s.Files = append(s.Files, f)
		}
	}
	if len(s.Files) == 0 {
		return fmt.Errorf("no binlog file holds the workload (files before the snapshot %v, after the workload %v)", s.prepareFiles, after)
	}
	return nil
}

// Close stops the source; keep leaves its directory and the snapshot.
func (s *Source) Close(keep bool) {
	if s.DB != nil {
		s.DB.Close()
	}
	if keep {
		s.Server.Stop()
		return
	}
	s.Server.Close()
	if s.Snapshot != "" {
		os.RemoveAll(s.Snapshot)
	}
}

// saveBinlog copies the workload's binlog files into dir, with the
// snapshot's GTID in dir/start-gtid: what `prepl replay --start-gtid` and
// `prepl analyze` take, kept when the benchmark's work directory is gone.
func (s *Source) saveBinlog(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("save the binlog: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for _, f := range s.Files {
		if err := copyFile(f, filepath.Join(abs, filepath.Base(f))); err != nil {
			return "", fmt.Errorf("save the binlog: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(abs, "start-gtid"), []byte(s.Stats.StartGTID+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("save the binlog: %w", err)
	}
	return abs, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
