package analyze_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prepl/prepl/analyze"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/sandbox"
)

// Tests on binlogs written by real servers, with a known structure; they
// check the numbers, not only that a report appears.

// onlyRows is a cost model where only rows cost: predicted speedups are
// then the dependency graph's, not the commit pipeline's.
var onlyRows = analyze.Costs{Row: time.Millisecond, Stmt: time.Millisecond, PerKiB: time.Nanosecond,
	Commit: time.Nanosecond, DDL: time.Millisecond}

func startSource(t *testing.T, mutate func(*sandbox.Options)) (*sandbox.Server, *sql.DB) {
	t.Helper()
	o := sandbox.Defaults()
	o.Binlog = true
	o.BinlogRowMetadata = "FULL"
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 2
	if mutate != nil {
		mutate(&o)
	}
	s := sandbox.MustStart(t, o)
	return s, sandbox.MustOpen(t, s, "")
}

// flush closes the current binlog file and returns the files written since
// the last call (or the start), so each phase of a workload is its own file.
type phases struct {
	s    *sandbox.Server
	db   *sql.DB
	seen int
}

func (p *phases) next(t *testing.T) []string {
	t.Helper()
	sandbox.MustExec(t, p.db, "FLUSH BINARY LOGS")
	files, err := p.s.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	closed := files[:len(files)-1]
	out := closed[p.seen:]
	p.seen = len(closed)
	return out
}

func analyzeFiles(t *testing.T, opt analyze.Options, files ...string) *analyze.Report {
	t.Helper()
	rd, err := fileset.Open(files, fileset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := analyze.New(opt)
	for {
		tx, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read %v: %v", files, err)
		}
		a.Add(tx)
	}
	return a.Finish()
}

func speedup(t *testing.T, r *analyze.Report, mode string, workers int) float64 {
	t.Helper()
	p, ok := r.Prediction(mode, workers)
	if !ok {
		t.Fatalf("no prediction for %s with %d workers", mode, workers)
	}
	return p.Speedup
}

// TestSerialSession: one session committing one transaction after another
// writes a binlog without group commits: AMIL 1 and no predicted speedup
// in commit-order mode. Its phases check the writeset analysis: independent
// rows run in parallel, a table without a primary key serializes and is
// named, a hot row is named, a big transaction is listed with its GTID.
func TestSerialSession(t *testing.T) {
	t.Parallel()
	s, db := startSource(t, nil)
	sandbox.MustExec(t, db,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
		"CREATE TABLE d.nopk (a INT, b INT) ENGINE=InnoDB",
		"CREATE TABLE d.hot (id INT PRIMARY KEY, n INT) ENGINE=InnoDB",
		"CREATE TABLE d.big (id INT PRIMARY KEY, pad VARCHAR(255)) ENGINE=InnoDB",
		"INSERT INTO d.hot VALUES (1, 0)")
	ph := &phases{s: s, db: db}
	setup := ph.next(t)

	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.ExecContext(context.Background(), q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i := range 300 {
		exec("INSERT INTO d.t VALUES (?, ?)", i, i)
	}
	independent := ph.next(t)
	for i := range 200 {
		exec("INSERT INTO d.nopk VALUES (?, ?)", i, i)
	}
	noKey := ph.next(t)
	for i := range 200 {
		if i%2 == 0 {
			exec("UPDATE d.hot SET n = n + 1 WHERE id = 1")
		} else {
			exec("INSERT INTO d.t VALUES (?, ?)", 1000+i, i)
		}
	}
	exec("BEGIN")
	for lo := 0; lo < 5000; lo += 500 {
		var b strings.Builder
		b.WriteString("INSERT INTO d.big VALUES ")
		for id := lo; id < lo+500; id++ {
			if id > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d, REPEAT('x', 250))", id)
		}
		exec(b.String())
	}
	exec("COMMIT")
	var bigGTID string
	if err := conn.QueryRowContext(context.Background(), "SELECT @@last_gtid").Scan(&bigGTID); err != nil {
		t.Fatal(err)
	}
	hotAndBig := ph.next(t)

	t.Run("serial: AMIL 1, commit-order speedup 1", func(t *testing.T) {
		all := append(append(append(append([]string{}, setup...), independent...), noKey...), hotAndBig...)
		r := analyzeFiles(t, analyze.Options{}, all...)
		if r.Summary.Transactions != 6+300+200+200+1 {
			t.Errorf("%d transactions, want 707", r.Summary.Transactions)
		}
		g := r.GroupCommit
		if g == nil || g.AvgSize > 1.01 || g.GroupCommits != g.Commits {
			t.Errorf("group commits %+v, want one transaction per group", g)
		}
		co, _ := r.Mode("commit-order")
		if co.Intervals.AMIL < 0.99 || co.Intervals.AMIL > 1.01 || co.Intervals.PseudoGroup > 1.01 {
			t.Errorf("commit-order AMIL %.3f pseudo group %.3f, want 1", co.Intervals.AMIL, co.Intervals.PseudoGroup)
		}
		if co.Chain != r.Summary.Transactions {
			t.Errorf("commit-order critical path %d, want every transaction (%d)", co.Chain, r.Summary.Transactions)
		}
		// No speedup: with workers idle, the engine seals units early, so
		// more workers are even slower than one.
		for _, w := range []int{2, 8, 64} {
			if sp := speedup(t, r, "commit-order", w); sp > 1.01 {
				t.Errorf("commit-order speedup with %d workers %.3f, want at most 1", w, sp)
			}
		}
		// With a transaction per unit, exactly 1.
		r1 := analyzeFiles(t, analyze.Options{UnitTxns: 1, FixedWorkers: true, Costs: onlyRows}, all...)
		for _, w := range []int{2, 16} {
			if sp := speedup(t, r1, "commit-order", w); sp < 0.99 || sp > 1.01 {
				t.Errorf("commit-order speedup with %d workers and commit units of 1: %.3f, want 1", w, sp)
			}
		}
	})

	t.Run("independent rows run in parallel in writeset mode", func(t *testing.T) {
		r := analyzeFiles(t, analyze.Options{UnitTxns: 1, FixedWorkers: true, Costs: onlyRows}, independent...)
		if sp := speedup(t, r, "writeset", 8); sp < 6 {
			t.Errorf("writeset speedup with 8 workers %.2f, want near 8", sp)
		}
		// Independent transactions depend on nothing within the history
		// (256): the critical path is 1 until the history is exceeded.
		ws, _ := r.Mode("writeset")
		if ws.Chain > 2 || ws.Intervals.AMIL < 100 {
			t.Errorf("writeset critical path %d, AMIL %.1f: want at most 2 and long intervals", ws.Chain, ws.Intervals.AMIL)
		}
	})

	t.Run("a table without a primary key serializes in writeset mode", func(t *testing.T) {
		r := analyzeFiles(t, analyze.Options{UnitTxns: 1, FixedWorkers: true, Costs: onlyRows}, noKey...)
		for _, w := range []int{2, 8, 64} {
			if sp := speedup(t, r, "writeset", w); sp < 0.99 || sp > 1.01 {
				t.Errorf("writeset speedup with %d workers %.3f, want 1", w, sp)
			}
		}
		o := r.Offenders.NoKeyTables
		if len(o) != 1 || o[0].Name != "d.nopk" || o[0].Transactions != 200 || o[0].Waits != 199 {
			t.Errorf("tables without a key %+v, want d.nopk: 200 transactions, 199 waits", o)
		}
		if !strings.Contains(strings.Join(r.Recommendations, "\n"), "Add a primary key to d.nopk") {
			t.Errorf("no primary key advice in %q", r.Recommendations)
		}
	})

	t.Run("hot row and big transaction are named", func(t *testing.T) {
		r := analyzeFiles(t, analyze.Options{}, hotAndBig...)
		h := r.Offenders.HotKeys
		if len(h) == 0 || h[0].Name != "d.hot (id=1)" || h[0].Transactions != 99 {
			t.Errorf("hot keys %+v, want d.hot (id=1) changed again 99 times", h)
		}
		b := r.Offenders.Largest
		if len(b) == 0 || b[0].GTID != bigGTID || !b[0].Big || b[0].Rows != 5000 || b[0].Bytes < 1<<20 {
			t.Fatalf("largest %+v, want GTID %s: 5000 rows, over 1 MiB, big", b, bigGTID)
		}
		recs := strings.Join(r.Recommendations, "\n")
		for _, want := range []string{"Split transaction GTID " + bigGTID, "Row d.hot (id=1)"} {
			if !strings.Contains(recs, want) {
				t.Errorf("recommendations lack %q:\n%s", want, recs)
			}
		}
	})
}

// TestGroupCommitSessions: N sessions committing together on a source with
// binlog_commit_wait_count=N make group commits of about N transactions,
// and commit-order mode predicts about N times serial with N workers.
func TestGroupCommitSessions(t *testing.T) {
	t.Parallel()
	const n, perSession = 8, 40
	s, db := startSource(t, func(o *sandbox.Options) { o.CommitWaitCount, o.CommitWaitUsec = n, 200000 })
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
	ph := &phases{s: s, db: db}
	ph.next(t)
	status := func() (commits, groups int64) {
		var name string
		if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Binlog_commits'").Scan(&name, &commits); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Binlog_group_commits'").Scan(&name, &groups); err != nil {
			t.Fatal(err)
		}
		return
	}
	c0, g0 := status()

	db.SetMaxOpenConns(n + 2)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perSession {
				if _, err := db.Exec("INSERT INTO d.t VALUES (?, ?)", i*1000+j, j); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c1, g1 := status()
	files := ph.next(t)

	r := analyzeFiles(t, analyze.Options{UnitTxns: 1, FixedWorkers: true, Costs: onlyRows}, files...)
	g := r.GroupCommit
	if g == nil || g.Commits != n*perSession {
		t.Fatalf("group commit %+v, want %d commits", g, n*perSession)
	}
	server := float64(c1-c0) / float64(g1-g0)
	t.Logf("group commits: %d commits in %d groups (%.2f); the server counted %d in %d (%.2f)",
		g.Commits, g.GroupCommits, g.AvgSize, c1-c0, g1-g0, server)
	if g.AvgSize < 0.75*n || g.AvgSize > n {
		t.Errorf("average group size %.2f, want near %d", g.AvgSize, n)
	}
	if g.AvgSize < 0.9*server || g.AvgSize > 1.1*server {
		t.Errorf("average group size %.2f, the server's Binlog_commits/Binlog_group_commits %.2f", g.AvgSize, server)
	}
	co, _ := r.Mode("commit-order")
	if co.Intervals.PseudoGroup < 0.75*n {
		t.Errorf("commit-order pseudo group size %.2f, want near %d", co.Intervals.PseudoGroup, n)
	}
	if sp := speedup(t, r, "commit-order", n); sp < 0.6*n {
		t.Errorf("commit-order speedup with %d workers %.2f, want near %d", n, sp, n)
	}
	if sp := speedup(t, r, "commit-order", 1); sp < 0.99 || sp > 1.01 {
		t.Errorf("commit-order speedup with 1 worker %.3f, want 1", sp)
	}
}
