package main

import (
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// nonTransWorkload writes MyISAM tables in ways a second run would get
// wrong: rows inserted (a duplicate key), incremented (doubled), deleted,
// inserted and deleted again, and one row into a table with no key. It
// returns the GTIDs of the keyed table's transactions and the key-less
// one's.
func nonTransWorkload(t *testing.T, src *sandbox.Server) (keyed []string, keyless string) {
	t.Helper()
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db,
		"CREATE DATABASE n",
		"CREATE TABLE n.m (id INT PRIMARY KEY, v INT) ENGINE=MyISAM",
		"CREATE TABLE n.k (a INT, b INT) ENGINE=MyISAM",
		"CREATE TABLE n.i (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
		"INSERT INTO n.i VALUES (1, 0)")
	gtid := func() string {
		var pos string
		if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
			t.Fatal(err)
		}
		return pos
	}
	for _, q := range []string{
		"INSERT INTO n.m VALUES (1, 1), (2, 2), (3, 3)",
		"UPDATE n.m SET v = v + 10",
		"DELETE FROM n.m WHERE id = 1",
		"INSERT INTO n.m VALUES (1, 100)",
		"UPDATE n.m SET id = 7 WHERE id = 3",
	} {
		sandbox.MustExec(t, db, q)
		keyed = append(keyed, gtid())
		sandbox.MustExec(t, db, "UPDATE n.i SET v = v + 1") // InnoDB between them
	}
	sandbox.MustExec(t, db, "INSERT INTO n.k VALUES (1, 1), (1, 1)")
	keyless = gtid()
	sandbox.MustExec(t, db, "UPDATE n.i SET v = v + 1")
	return keyed, keyless
}

// TestNonTransactionalExactlyOnceAcrossCrashes kills prepl after the rows
// of each transaction that writes a MyISAM table and before its position
// commits: the rows are on the target, the position is not. Each restart
// must apply them again without doubling them (idempotently, by key):
// target = source. A key-less table cannot be applied again that way:
// prepl stops with exit 2, names the transaction and the flag, applies
// nothing after it, and goes on once told.
func TestNonTransactionalExactlyOnceAcrossCrashes(t *testing.T) {
	bin := preplBinary(t)
	src := source(t, nil)
	keyed, keyless := nonTransWorkload(t, src)
	files := binlogFiles(t, src)
	for _, flags := range [][]string{{"--workers", "0"}, {"--workers", "4", "--mode", "writeset", "--compact=false"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			tgt := targetServer(t)
			args := append(append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, flags...), files...)
			for _, g := range keyed {
				code, out := runBinEnv(bin, []string{"PREPL_TEST_CRASH=after-nontrans:" + g}, args)
				if code != -1 {
					t.Fatalf("prepl was to kill itself after the rows of %s, exited %d:\n%s", g, code, out)
				}
			}
			code, out := runBinEnv(bin, []string{"PREPL_TEST_CRASH=after-nontrans:" + keyless}, args)
			if code != -1 {
				t.Fatalf("prepl was to kill itself after the rows of %s, exited %d:\n%s", keyless, code, out)
			}
			if !strings.Contains(out, "applying again, idempotently") {
				t.Errorf("the run after a crash in %s did not say it applied it again idempotently:\n%s", keyed[len(keyed)-1], out)
			}
			code, out = runBin(bin, args)
			if code != 2 || !strings.Contains(out, keyless) || !strings.Contains(out, "--pending-ddl '"+keyless+"=applied'") {
				t.Fatalf("want exit 2 naming %s and --pending-ddl, got %d:\n%s", keyless, code, out)
			}
			tdb := sandbox.MustOpen(t, tgt, "")
			var v int
			if err := tdb.QueryRow("SELECT v FROM n.i").Scan(&v); err != nil || v != len(keyed) {
				t.Fatalf("n.i.v = %d (%v), want %d: something after the undecided transaction was applied, or before it was lost", v, err, len(keyed))
			}
			if _, out := runBin(bin, []string{"status", "--target", tgt.URL(), "--channel", "replay"}); !strings.Contains(out, "transaction "+keyless+" wrote non-transactional table(s) n.k") {
				t.Errorf("prepl status does not name the interrupted transaction %s:\n%s", keyless, out)
			}
			// The crash left both rows on the target: they took effect.
			args = append([]string{"replay", "--pending-ddl", keyless + "=applied"}, args[1:]...)
			if code, out := runBin(bin, args); code != 0 {
				t.Fatalf("with --pending-ddl: exit %d:\n%s", code, out)
			}
			sameRows(t, src, tgt)
			var markers int
			tdb.QueryRow("SELECT COUNT(*) FROM prepl.maybe_applied").Scan(&markers)
			if markers != 0 {
				t.Errorf("%d maybe-applied markers left after a clean run", markers)
			}
		})
	}
}

// TestNonTransactionalKeepGTIDAcrossCrashes: with --keep-gtid each
// MyISAM transaction goes as one BINLOG statement, so the target's binlog
// says whether it ran: kills after the rows of each (the key-less one
// too) leave target = source and the target's binlog with exactly the
// source's GTIDs, none twice and none of its own.
func TestNonTransactionalKeepGTIDAcrossCrashes(t *testing.T) {
	bin := preplBinary(t)
	src := source(t, nil)
	keyed, keyless := nonTransWorkload(t, src)
	files := binlogFiles(t, src)
	o := sandbox.Defaults()
	o.ServerID, o.Binlog = 2, true
	tgt := sandbox.MustStart(t, o)
	args := append([]string{"replay", "--target", tgt.URL(), "--progress", "0", "--keep-gtid"}, files...)
	for _, g := range append(keyed, keyless) {
		if code, out := runBinEnv(bin, []string{"PREPL_TEST_CRASH=after-nontrans:" + g}, args); code != -1 {
			t.Fatalf("prepl was to kill itself after the rows of %s, exited %d:\n%s", g, code, out)
		}
	}
	if code, out := runBin(bin, args); code != 0 || !strings.Contains(out, "the target's binlog already holds") {
		t.Fatalf("the run after the last crash: exit %d, or it did not decide by the target's binlog:\n%s", code, out)
	}
	sameRows(t, src, tgt)
	var srcPos, tgtPos, tgtState string
	sandbox.MustOpen(t, src, "").QueryRow("SELECT @@gtid_binlog_pos").Scan(&srcPos)
	sandbox.MustOpen(t, tgt, "").QueryRow("SELECT @@gtid_binlog_pos, @@gtid_binlog_state").Scan(&tgtPos, &tgtState)
	if srcPos != tgtPos || strings.Contains(tgtState, "-2-") {
		t.Fatalf("target gtid_binlog_pos %q (state %q), source %q", tgtPos, tgtState, srcPos)
	}
}

// TestNonTransactionalRefusedStops: a MyISAM transaction the target
// refuses half-way (it has diverged: a row in the way) keeps the rows
// before the refusal. prepl says so, and the next run stops and asks
// instead of writing over the divergence, as MariaDB's replica stops
// there; once the rows are repaired and prepl is told, it goes on.
func TestNonTransactionalRefusedStops(t *testing.T) {
	bin := preplBinary(t)
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db,
		"CREATE DATABASE d",
		"CREATE TABLE d.m (id INT PRIMARY KEY, v INT) ENGINE=MyISAM",
		"INSERT INTO d.m VALUES (1, 1)")
	var gtid string
	sandbox.MustExec(t, db, "INSERT INTO d.m VALUES (2, 2), (3, 3)")
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&gtid); err != nil {
		t.Fatal(err)
	}
	sandbox.MustExec(t, db, "INSERT INTO d.m VALUES (4, 4)")
	files := binlogFiles(t, src)
	tgt := targetServer(t)
	tdb := sandbox.MustOpen(t, tgt, "")
	sandbox.MustExec(t, tdb, "CREATE DATABASE d", "CREATE TABLE d.m (id INT PRIMARY KEY, v INT) ENGINE=MyISAM",
		"INSERT INTO d.m VALUES (3, 99)") // the divergence
	args := append([]string{"replay", "--target", tgt.URL(), "--progress", "0", "--start-gtid", "0-1-2"}, files...)
	code, out := runBin(bin, args)
	if code != 2 || !strings.Contains(out, "Duplicate entry '3'") || !strings.Contains(out, "the target refused them") {
		t.Fatalf("want a refusal of %s that says rows before it stay, got exit %d:\n%s", gtid, code, out)
	}
	code, out = runBin(bin, args)
	if code != 2 || !strings.Contains(out, "--pending-ddl '"+gtid+"=applied'") || !strings.Contains(out, "diverged") {
		t.Fatalf("the run after the refusal: want exit 2 asking about %s, got %d:\n%s", gtid, code, out)
	}
	var v int
	if err := tdb.QueryRow("SELECT v FROM d.m WHERE id = 3").Scan(&v); err != nil || v != 99 {
		t.Fatalf("the diverged row was written over: v = %d (%v)", v, err)
	}
	sandbox.MustExec(t, tdb, "UPDATE d.m SET v = 3 WHERE id = 3") // repaired: the transaction's rows are all there
	if code, out := runBin(bin, append([]string{"replay", "--pending-ddl", gtid + "=applied"}, args[1:]...)); code != 0 {
		t.Fatalf("with --pending-ddl: exit %d:\n%s", code, out)
	}
	sameRows(t, src, tgt)
}
