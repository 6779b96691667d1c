package main

import (
	"database/sql"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// ddlWorkload is a stream of DDL that a second run would get wrong, each
// followed by DML that shows the result: a table swap, an EXCHANGE
// PARTITION, a column added, CREATE OR REPLACE, DROP IF EXISTS then
// CREATE, and a CREATE TABLE ... SELECT (a DDL and rows in one
// transaction). It returns the GTIDs of the DDL statements.
func ddlWorkload(t *testing.T, src *sandbox.Server) []string {
	t.Helper()
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db,
		"CREATE DATABASE d",
		"CREATE TABLE d.a (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB",
		"CREATE TABLE d.b (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB",
		"INSERT INTO d.a VALUES (1, 'was a')",
		"INSERT INTO d.b VALUES (2, 'was b')",
		"CREATE TABLE d.p (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (100), PARTITION p1 VALUES LESS THAN MAXVALUE)",
		"CREATE TABLE d.x (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB",
		"INSERT INTO d.p VALUES (5, 'in p0'), (500, 'in p1')",
		"INSERT INTO d.x VALUES (7, 'in x')",
		"CREATE TABLE d.c (id INT PRIMARY KEY) ENGINE=InnoDB",
		"INSERT INTO d.c VALUES (1)")
	return runDDLSteps(t, db, [][]string{
		{"RENAME TABLE d.a TO d.tmp, d.b TO d.a, d.tmp TO d.b", "INSERT INTO d.a VALUES (3, 'after swap')"},
		{"ALTER TABLE d.p EXCHANGE PARTITION p0 WITH TABLE d.x", "INSERT INTO d.x VALUES (8, 'x after')"},
		{"ALTER TABLE d.b ADD COLUMN n INT NOT NULL DEFAULT 0", "UPDATE d.b SET n = 1"},
		{"CREATE OR REPLACE TABLE d.c (id INT PRIMARY KEY, w INT) ENGINE=InnoDB", "INSERT INTO d.c VALUES (2, 2)"},
		{"DROP TABLE IF EXISTS d.x", "CREATE TABLE d.x (k INT PRIMARY KEY) ENGINE=InnoDB"},
		{"CREATE TABLE d.s ENGINE=InnoDB SELECT id, v FROM d.a", "INSERT INTO d.s VALUES (9, 'after ctas')"},
	})
}

// runDDLSteps runs each step's DDL (its first statement), then the
// statements that show its result, and returns the DDLs' GTIDs.
func runDDLSteps(t *testing.T, db *sql.DB, steps [][]string) []string {
	t.Helper()
	var gtids []string
	for _, q := range steps {
		sandbox.MustExec(t, db, q[0])
		var pos string
		if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
			t.Fatal(err)
		}
		gtids = append(gtids, pos)
		sandbox.MustExec(t, db, q[1:]...)
	}
	return gtids
}

// crashAtEachDDL runs prepl with args once per DDL, killing itself at
// point (before-ddl, after-ddl) of that DDL, then once to the end, and
// returns that last run's output.
func crashAtEachDDL(t *testing.T, bin string, args []string, point string, gtids []string) string {
	t.Helper()
	for _, g := range gtids {
		code, out := runBinEnv(bin, []string{"PREPL_TEST_CRASH=" + point + ":" + g}, args)
		if code != -1 {
			t.Fatalf("prepl was to kill itself %s %s, exited %d:\n%s", point, g, code, out)
		}
	}
	code, out := runBin(bin, args)
	if code != 0 {
		t.Fatalf("run after the crashes: exit %d:\n%s", code, out)
	}
	return out
}

// TestDDLExactlyOnceAcrossCrashes kills prepl in each window of each DDL
// of ddlWorkload: after the pending mark is stored but before the DDL ran,
// and after the DDL ran but before the position moved past it (for a
// CREATE TABLE ... SELECT, before its rows). Every restart must run each
// DDL exactly once: target = source.
func TestDDLExactlyOnceAcrossCrashes(t *testing.T) {
	bin := preplBinary(t)
	src := source(t, nil)
	gtids := ddlWorkload(t, src)
	files := binlogFiles(t, src)
	for _, c := range []struct {
		point string
		flags []string
	}{
		{"before-ddl", []string{"--workers", "0"}},
		{"after-ddl", []string{"--workers", "4", "--mode", "writeset"}},
		{"after-ddl", []string{"--workers", "4", "--mode", "domain", "--compact=false"}},
	} {
		t.Run(c.point+"/"+strings.Join(c.flags, " "), func(t *testing.T) {
			tgt := targetServer(t)
			args := append(append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, c.flags...), files...)
			if out := crashAtEachDDL(t, bin, args, c.point, gtids); c.point == "after-ddl" && strings.Count(out, "DDL not run again") != 1 {
				// Only the last crash's DDL is pending for this run; the
				// others were decided by the runs in between.
				t.Errorf("want one DDL not run again in the last run:\n%s", out)
			}
			sameRows(t, src, tgt)
		})
	}
}

// TestPendingDDLUnknownAsks: when prepl cannot tell whether an
// interrupted DDL took effect (here: a position stored without the
// catalog's state, as an older prepl left it), it stops with exit 2,
// names the DDL and the flag, applies nothing after it, and goes on once
// told.
func TestPendingDDLUnknownAsks(t *testing.T) {
	bin := preplBinary(t)
	src := source(t, nil)
	swap := ddlWorkload(t, src)[0]
	files := binlogFiles(t, src)
	tgt := targetServer(t)
	args := append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, files...)
	if code, out := runBinEnv(bin, []string{"PREPL_TEST_CRASH=after-ddl:" + swap}, args); code != -1 {
		t.Fatalf("prepl was to kill itself after %s, exited %d:\n%s", swap, code, out)
	}
	tdb := sandbox.MustOpen(t, tgt, "")
	sandbox.MustExec(t, tdb, "UPDATE prepl.position SET pending_state = ''")
	code, out := runBin(bin, args)
	if code != 2 || !strings.Contains(out, swap) || !strings.Contains(out, "--pending-ddl '"+swap+"=applied'") {
		t.Fatalf("want exit 2 naming %s and --pending-ddl, got %d:\n%s", swap, code, out)
	}
	var n int
	tdb.QueryRow("SELECT COUNT(*) FROM d.a WHERE id = 3").Scan(&n)
	if n != 0 {
		t.Fatalf("a row after the undecided DDL was applied")
	}
	if code, out := runBin(bin, append([]string{"replay", "--pending-ddl", swap + "=applied"}, args[1:]...)); code != 0 {
		t.Fatalf("with --pending-ddl: exit %d:\n%s", code, out)
	}
	sameRows(t, src, tgt)
}

// TestServerErrorNamesTransaction: a target that refuses a row (here a
// duplicate key: the target diverged) stops prepl with an error naming
// the source transaction by GTID and file:offset, even when it is one of
// many in a commit unit.
func TestServerErrorNamesTransaction(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE e", "CREATE TABLE e.t (id INT PRIMARY KEY, v INT)")
	var bad string
	for i := 1; i <= 20; i++ {
		sandbox.MustExec(t, db, "INSERT INTO e.t VALUES ("+strconv.Itoa(i)+", 0)")
		if i == 13 {
			db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&bad)
		}
	}
	files := binlogFiles(t, src)
	for _, flags := range [][]string{{"--workers", "0"}, {"--workers", "0", "--compact=false"}, {"--workers", "4"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			tgt := targetServer(t)
			tdb := sandbox.MustOpen(t, tgt, "")
			sandbox.MustExec(t, tdb, "CREATE DATABASE e", "CREATE TABLE e.t (id INT PRIMARY KEY, v INT)", "INSERT INTO e.t VALUES (13, 1)")
			args := append(append([]string{"replay", "--target", tgt.URL(), "--progress", "0", "--start-gtid", "0-1-2"}, flags...), files...)
			code, out := prepl(t, args...)
			if code != 2 || !regexp.MustCompile(`GTID `+bad+` \(binlog\.000001:\d+\).*Duplicate entry`).MatchString(out) {
				t.Fatalf("want exit 2 (a restart cannot help) and an error naming GTID %s and its file:offset, got exit %d:\n%s", bad, code, out)
			}
			// Like MariaDB's replica, prepl stops exactly before the failing
			// transaction: the 12 before it are applied, whatever the units.
			var n int
			tdb.QueryRow("SELECT COUNT(*) FROM e.t WHERE id < 13").Scan(&n)
			if n != 12 {
				t.Errorf("%d of the 12 transactions before the failing one are applied", n)
			}
			sandbox.MustExec(t, tdb, "DELETE FROM e.t WHERE id = 13") // the DBA repairs the target
			mustPrepl(t, args...)
			sameRows(t, src, tgt)
		})
	}
}
