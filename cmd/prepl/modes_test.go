package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/sandbox"
)

// conflictWorkload runs concurrent sessions that fight over a few hot rows:
// counters, a DELETE then INSERT of the same unique value under another
// primary key (MySQL Bug #86078), swaps of unique values, foreign key
// parents and children with ON DELETE CASCADE, a table without a key with
// duplicate rows, two schemas in two GTID domains (schema a in domain 0,
// b in domain 1: independent, as domain-based replication requires), and a
// DDL in the middle.
func conflictWorkload(t *testing.T, db *sql.DB, seed int64, perSession, sessions int) {
	t.Helper()
	setup, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		domain int
		sql    string
	}{
		{0, "CREATE DATABASE a"},
		{0, "CREATE TABLE a.hot (id INT PRIMARY KEY, n INT NOT NULL, u INT NOT NULL, UNIQUE KEY uu (u))"},
		{0, "CREATE TABLE a.parent (id INT PRIMARY KEY, v INT)"},
		{0, "CREATE TABLE a.child (id INT PRIMARY KEY, pid INT, v INT, FOREIGN KEY (pid) REFERENCES a.parent (id) ON DELETE CASCADE)"},
		{0, "INSERT INTO a.hot VALUES (1,0,1),(2,0,2),(3,0,3),(4,0,4),(5,0,5)"},
		{0, "INSERT INTO a.parent VALUES (1,0),(2,0),(3,0)"},
		{1, "CREATE DATABASE b"},
		{1, "CREATE TABLE b.nokey (k INT, v INT)"},
		{1, "CREATE TABLE b.acct (id INT PRIMARY KEY, bal INT)"},
		{1, "INSERT INTO b.acct VALUES (1,100),(2,100),(3,100)"},
	} {
		if err := runTxn(setup, q.domain, []string{q.sql}); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	setup.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(s)))
			conn, err := db.Conn(context.Background())
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
				return
			}
			defer conn.Close()
			for i := 0; i < perSession; i++ {
				if s == 0 && i == perSession/2 {
					runTxn(conn, 1, []string{"ALTER TABLE b.acct ADD COLUMN note VARCHAR(20) DEFAULT 'x'"})
				}
				id := 1 + rng.Intn(5)
				var stmts []string
				switch rng.Intn(7) {
				case 0:
					stmts = []string{fmt.Sprintf("UPDATE a.hot SET n = n + 1 WHERE id = %d", id)}
				case 1: // delete then insert the same unique value under another primary key
					nid := 100 + s*1000 + i
					stmts = []string{fmt.Sprintf("DELETE FROM a.hot WHERE u = %d", id),
						fmt.Sprintf("INSERT INTO a.hot VALUES (%d, %d, %d)", nid, i, id)}
				case 2: // swap two unique values
					other := 1 + rng.Intn(5)
					if other == id {
						other = id%5 + 1
					}
					stmts = []string{
						fmt.Sprintf("UPDATE a.hot SET u = -u WHERE u IN (%d, %d)", id, other),
						fmt.Sprintf("UPDATE a.hot SET u = CASE u WHEN %d THEN %d ELSE %d END WHERE u IN (%d, %d)", -id, other, id, -id, -other)}
				case 3:
					cid := s*1000 + i
					stmts = []string{fmt.Sprintf("INSERT INTO a.child VALUES (%d, %d, %d)", cid, 1+rng.Intn(3), i)}
				case 4: // cascade: delete and recreate a parent
					p := 1 + rng.Intn(3)
					stmts = []string{fmt.Sprintf("DELETE FROM a.parent WHERE id = %d", p),
						fmt.Sprintf("INSERT INTO a.parent VALUES (%d, %d)", p, i)}
				case 5:
					stmts = []string{fmt.Sprintf("INSERT INTO b.nokey VALUES (%d, 1), (%d, 1)", id, id),
						fmt.Sprintf("DELETE FROM b.nokey WHERE k = %d LIMIT 1", id)}
				case 6:
					from, to := 1+rng.Intn(3), 1+rng.Intn(3)
					stmts = []string{fmt.Sprintf("UPDATE b.acct SET bal = bal - 1 WHERE id = %d", from),
						fmt.Sprintf("UPDATE b.acct SET bal = bal + 1 WHERE id = %d", to)}
				}
				domain := 0
				if strings.HasPrefix(stmts[0], "INSERT INTO b.") || strings.HasPrefix(stmts[0], "UPDATE b.") {
					domain = 1
				}
				if err := runTxn(conn, domain, stmts); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}(s)
	}
	wg.Wait()
	if firstErr != nil {
		t.Logf("some source transactions rolled back (deadlocks are expected): %v", firstErr)
	}
}

// runTxn runs stmts as one transaction in GTID domain domain.
func runTxn(conn *sql.Conn, domain int, stmts []string) error {
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, "SET SESSION gtid_domain_id = ?", domain); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, q := range stmts {
		if _, err := tx.Exec(q); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

func TestEveryModeConvergesOnConflictingWorkload(t *testing.T) {
	src := source(t, func(o *sandbox.Options) { o.CommitWaitCount, o.CommitWaitUsec = 4, 2000 })
	db := sandbox.MustOpen(t, src, "")
	conflictWorkload(t, db, 42, 60, 8)
	files := binlogFiles(t, src)
	// Commit units from one source transaction each (and every row change
	// its own statement) to the default. Each mode runs one of them, in
	// turn, so each shape meets two or three modes: the engine's runtime
	// under every mode, unit size and worker count is package apply's
	// (TestRunModes, against an in-memory target); what needs a real
	// server here is the key logic of every mode on real InnoDB.
	runs := []struct{ workers, unit, compact string }{{"2", "1", "false"}, {"8", "4", "true"}, {"32", "500", "true"}}
	for i, mode := range depend.Modes {
		run := runs[i%len(runs)]
		t.Run(fmt.Sprintf("%s/%s", mode, run.workers), func(t *testing.T) {
			tgt := targetServer(t)
			mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--mode", string(mode), "--workers", run.workers,
				"--commit-unit", run.unit, "--compact=" + run.compact, "--progress", "0"}, files...)...)
			sameRows(t, src, tgt)
		})
	}
}

// sharedRowsWorkload runs sessions that put each transaction in GTID domain
// 0 or 1 at random while all of them fight over the same rows: counters,
// swaps of unique values (integers, and strings that differ only in case
// and trailing spaces under a case-insensitive collation), a DELETE then
// INSERT of a unique value under another primary key, transfers between
// two schemas, and children in schema b of parents in schema a (deleted
// with ON DELETE CASCADE and recreated). Domains (and schemas) that share rows: the
// application does not keep them independent.
func sharedRowsWorkload(t *testing.T, db *sql.DB, seed int64, perSession, sessions int) {
	t.Helper()
	setup, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE DATABASE a",
		"CREATE DATABASE b",
		"CREATE TABLE a.hot (id INT PRIMARY KEY, n INT NOT NULL, u INT NOT NULL, s VARCHAR(20) COLLATE utf8mb4_general_ci NOT NULL, UNIQUE KEY uu (u), UNIQUE KEY us (s))",
		"INSERT INTO a.hot VALUES (1,0,1,'k1'),(2,0,2,'k2'),(3,0,3,'k3'),(4,0,4,'k4')",
		"CREATE TABLE b.acct (id INT PRIMARY KEY, bal INT NOT NULL)",
		"INSERT INTO b.acct VALUES (1,100),(2,100),(3,100)",
		"CREATE TABLE a.parent (id INT PRIMARY KEY, v INT)",
		"INSERT INTO a.parent VALUES (1,0),(2,0),(3,0)",
		"CREATE TABLE b.kid (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES a.parent (id) ON DELETE CASCADE)",
	} {
		if err := runTxn(setup, 0, []string{q}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	setup.Close()
	var wg sync.WaitGroup
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(s)))
			conn, err := db.Conn(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			for i := 0; i < perSession; i++ {
				id, other := 1+rng.Intn(4), 1+rng.Intn(4)
				if other == id {
					other = id%4 + 1
				}
				var stmts []string
				switch rng.Intn(8) {
				case 0:
					stmts = []string{fmt.Sprintf("UPDATE a.hot SET n = n + 1 WHERE id = %d", id)}
				case 1: // swap two unique integers
					stmts = []string{
						fmt.Sprintf("UPDATE a.hot SET u = -u WHERE u IN (%d, %d)", id, other),
						fmt.Sprintf("UPDATE a.hot SET u = CASE u WHEN %d THEN %d ELSE %d END WHERE u IN (%d, %d)", -id, other, id, -id, -other)}
				case 2: // swap two unique strings, spelled another way each time
					spell := []string{"UPPER(TRIM(%s))", "LOWER(TRIM(%s))", "CONCAT(TRIM(%s), '  ')"}
					stmts = []string{
						fmt.Sprintf("SELECT s INTO @x FROM a.hot WHERE id = %d FOR UPDATE", id),
						fmt.Sprintf("SELECT s INTO @y FROM a.hot WHERE id = %d FOR UPDATE", other),
						fmt.Sprintf("UPDATE a.hot SET s = CONCAT('tmp', id) WHERE id IN (%d, %d)", id, other),
						fmt.Sprintf("UPDATE a.hot SET s = "+spell[rng.Intn(3)]+" WHERE id = %d", "@y", id),
						fmt.Sprintf("UPDATE a.hot SET s = "+spell[rng.Intn(3)]+" WHERE id = %d", "@x", other)}
				case 3: // delete then insert the same unique value under another primary key
					nid := 100 + s*1000 + i
					stmts = []string{fmt.Sprintf("DELETE FROM a.hot WHERE u = %d", id),
						fmt.Sprintf("INSERT INTO a.hot VALUES (%d, %d, %d, 'n%d')", nid, i, id, nid)}
				case 4:
					stmts = []string{fmt.Sprintf("UPDATE b.acct SET bal = bal - 1 WHERE id = %d", 1+rng.Intn(3)),
						fmt.Sprintf("UPDATE b.acct SET bal = bal + 1 WHERE id = %d", 1+rng.Intn(3))}
				case 5: // both schemas in one transaction
					stmts = []string{fmt.Sprintf("UPDATE a.hot SET n = n - 1 WHERE u = %d", id),
						fmt.Sprintf("UPDATE b.acct SET bal = bal + 1 WHERE id = %d", 1+rng.Intn(3))}
				case 6: // a parent deleted (its children in schema b cascade) and recreated
					p := 1 + rng.Intn(3)
					stmts = []string{fmt.Sprintf("DELETE FROM a.parent WHERE id = %d", p),
						fmt.Sprintf("INSERT INTO a.parent VALUES (%d, %d)", p, i)}
				case 7: // a child in schema b of a parent in schema a
					stmts = []string{fmt.Sprintf("INSERT INTO b.kid VALUES (%d, %d)", s*1000+i, 1+rng.Intn(3))}
				}
				runTxn(conn, rng.Intn(2), stmts) // deadlocks and duplicates roll back: expected
			}
		}(s)
	}
	wg.Wait()
}

// TestModesDomainSchemaSharedRows: with domains and schemas that share
// rows, modes domain and schema still end in the source's state: row keys
// (collation-aware) order what the domain/schema does not.
func TestModesDomainSchemaSharedRows(t *testing.T) {
	src := source(t, func(o *sandbox.Options) { o.CommitWaitCount, o.CommitWaitUsec = 4, 2000 })
	db := sandbox.MustOpen(t, src, "")
	sharedRowsWorkload(t, db, 7, 80, 6)
	var pos string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pos, "0-1-") || !strings.Contains(pos, "1-1-") {
		t.Fatalf("the workload should have written GTID domains 0 and 1, binlog position is %q", pos)
	}
	files := binlogFiles(t, src)
	for _, mode := range []depend.Mode{depend.Domain, depend.Schema} {
		for _, run := range []struct{ workers, unit, compact string }{{"4", "1", "false"}, {"8", "4", "true"}} {
			t.Run(fmt.Sprintf("%s/%s/%s", mode, run.workers, run.unit), func(t *testing.T) {
				tgt := targetServer(t)
				mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--mode", string(mode), "--workers", run.workers,
					"--commit-unit", run.unit, "--compact=" + run.compact, "--progress", "0"}, files...)...)
				sameRows(t, src, tgt)
			})
		}
	}
}

// TestModesDomainSharedRowsKillAndResume: with domains that share rows, a
// later domain waits for an earlier one, so slots commit in an order that
// interleaves; killed at random points, each restart resumes every slot
// from its own row and the floor, and the end state is the source's.
func TestModesDomainSharedRowsKillAndResume(t *testing.T) {
	bin := preplBinary(t)
	src := source(t, func(o *sandbox.Options) { o.CommitWaitCount, o.CommitWaitUsec = 4, 2000 })
	db := sandbox.MustOpen(t, src, "")
	sharedRowsWorkload(t, db, 11, 200, 6)
	files := binlogFiles(t, src)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for _, mode := range []string{"domain", "schema"} {
		t.Run(mode, func(t *testing.T) {
			tgt := targetServer(t)
			args := append([]string{"replay", "--target", tgt.URL(), "--workers", "6", "--mode", mode, "--commit-unit", "3", "--progress", "0"}, files...)
			var threshold int64
			for kills := 0; kills < 5; kills++ {
				threshold += 1 + rng.Int63n(100)
				if killAt(t, bin, args, appliedOn(t, tgt, "replay"), threshold) {
					t.Fatalf("prepl finished after %d kills, want 5: the workload is too small to kill it at random points", kills)
				}
			}
			if code, out := runBin(bin, args); code != 0 {
				t.Fatalf("final run: exit %d\n%s", code, out)
			}
			sameRows(t, src, tgt)
		})
	}
}
