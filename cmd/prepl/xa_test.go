package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// xaWorkload runs n rounds of two XA transactions prepared on sessions
// A and B and committed in the opposite order, with ordinary transactions
// of session C between the prepares and the commits and after them, on
// the same rows. Every fourth round B rolls back. Each round is 8 or 9
// source transactions.
//
// Row x.m i is written after both prepares and before both commits, so
// on any target state that the source had, x.t rows 2i and 2i+1 are
// visible only with x.m row i (see xaInvariant).
func xaWorkload(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	sandbox.MustExec(t, db, "CREATE DATABASE x",
		"CREATE TABLE x.t (id INT PRIMARY KEY, v VARCHAR(40), k INT, UNIQUE KEY (k))",
		"CREATE TABLE x.m (id INT PRIMARY KEY)",
		"CREATE TABLE x.hot (id INT PRIMARY KEY, n INT NOT NULL)",
		"INSERT INTO x.hot VALUES (1, 0), (2, 0)")
	ctx := context.Background()
	conns := make([]*sql.Conn, 3)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	a, b, c := conns[0], conns[1], conns[2]
	exec := func(conn *sql.Conn, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	for i := 0; i < n; i++ {
		xa, xb := fmt.Sprintf("'a%d'", i), fmt.Sprintf("'b%d', 'q', %d", i, i)
		exec(a, "XA START "+xa,
			fmt.Sprintf("INSERT INTO x.t VALUES (%d, 'a', %d)", 2*i, 2*i),
			"UPDATE x.hot SET n = n + 1 WHERE id = 1",
			"XA END "+xa, "XA PREPARE "+xa)
		exec(b, "XA START "+xb,
			fmt.Sprintf("INSERT INTO x.t VALUES (%d, 'b', %d)", 2*i+1, 2*i+1),
			"UPDATE x.hot SET n = n + 1 WHERE id = 2",
			"XA END "+xb, "XA PREPARE "+xb)
		exec(c, fmt.Sprintf("INSERT INTO x.m VALUES (%d)", i))
		if i%4 == 3 {
			exec(b, "XA ROLLBACK "+xb)
		} else {
			exec(b, "XA COMMIT "+xb)
			exec(c, fmt.Sprintf("UPDATE x.t SET v = 'after b', k = -k WHERE id = %d", 2*i+1))
		}
		exec(a, "XA COMMIT "+xa)
		exec(c, fmt.Sprintf("UPDATE x.t SET v = CONCAT(v, '!') WHERE id = %d", 2*i),
			"UPDATE x.hot SET n = n - 1 WHERE id = 1")
	}
}

// xaInvariant checks that the target shows a state the source had: no
// row of an XA transaction before the rows written between its XA
// PREPARE and its XA COMMIT, and nothing of a rolled-back one.
func xaInvariant(t *testing.T, tgt *sandbox.Server) {
	t.Helper()
	db := sandbox.MustOpen(t, tgt, "")
	defer db.Close()
	var early, rolled, tables int
	db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'x' AND table_name IN ('t', 'm')").Scan(&tables)
	if tables < 2 {
		return // killed before the workload's tables were created
	}
	if err := db.QueryRow("SELECT COUNT(*) FROM x.t LEFT JOIN x.m ON x.m.id = x.t.id DIV 2 WHERE x.m.id IS NULL").Scan(&early); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT COUNT(*) FROM x.t WHERE id % 2 = 1 AND (id DIV 2) % 4 = 3").Scan(&rolled); err != nil {
		t.Fatal(err)
	}
	if early != 0 || rolled != 0 {
		t.Fatalf("the target shows a state the source never had: %d XA rows visible before their XA COMMIT, %d rows of rolled-back XA transactions", early, rolled)
	}
}

// TestXAKillNine kills prepl with SIGKILL at random moments while it
// applies a binlog full of XA transactions (stored prepared parts, commits
// reading them back), restarts it each time, and checks after each kill
// that the target shows a source state, and at the end target = source.
func TestXAKillNine(t *testing.T) {
	t.Parallel() // waits on servers, a replica and delays: overlaps with the other parallel tests
	bin := preplBinary(t)
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	const rounds = 250
	xaWorkload(t, db, rounds)
	var total int64
	db.QueryRow("SELECT SUBSTRING_INDEX(@@gtid_binlog_pos, '-', -1)").Scan(&total)
	files := binlogFiles(t, src)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))

	cases := []struct {
		name    string
		channel string
		args    func(tgt *sandbox.Server) []string
	}{
		{"replay-writeset", "replay", func(tgt *sandbox.Server) []string {
			return append([]string{"replay", "--target", tgt.URL(), "--workers", "4", "--commit-unit", "3", "--progress", "0"}, files...)
		}},
		{"replicate-optimistic", "default", func(tgt *sandbox.Server) []string {
			return []string{"replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4", "--mode", "optimistic",
				"--stop-at-end", "--progress", "0"}
		}},
	}
	const kills = 10
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seed := rng.Int63()
			r := rand.New(rand.NewSource(seed))
			t.Logf("random kill moments, seed %d; source has %d transactions", seed, total)
			tgt := targetServer(t)
			var threshold int64
			n, withPrepared := 0, 0
			for n < kills {
				threshold += 1 + r.Int63n(total/(2*kills))
				if killAt(t, bin, c.args(tgt), appliedOn(t, tgt, c.channel), threshold) {
					break
				}
				n++
				xaInvariant(t, tgt)
				if xaStored(t, tgt) > 0 {
					withPrepared++
				}
			}
			if n < kills {
				t.Fatalf("prepl finished after %d kills, want %d: make the workload bigger", n, kills)
			}
			t.Logf("%d kills, %d of them with a prepared XA transaction stored on the target", n, withPrepared)
			if code, out := runBin(bin, c.args(tgt)); code != 0 {
				t.Fatalf("final run: exit %d\n%s", code, out)
			}
			sameRows(t, src, tgt)
			if n := xaStored(t, tgt); n != 0 {
				t.Fatalf("%d prepared XA rows left on the target after every XA transaction ended", n)
			}
		})
	}
}

func xaStored(t *testing.T, tgt *sandbox.Server) int {
	t.Helper()
	db := sandbox.MustOpen(t, tgt, "")
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM prepl.xa_prepared").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// lastGTID returns the source's binlog GTID position.
func lastGTID(t *testing.T, db *sql.DB) string {
	t.Helper()
	var g string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestXACommitWithoutPrepare: a replay that starts after an XA PREPARE
// cannot apply its XA COMMIT (the rows are in the prepare). prepl stops
// before the commit, naming its xid and GTID and saying where to start,
// with everything before it applied.
func TestXACommitWithoutPrepare(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	xa, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer xa.Close()
	xaExec := func(qs ...string) {
		for _, q := range qs {
			if _, err := xa.ExecContext(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	sandbox.MustExec(t, db, "CREATE DATABASE x", "CREATE TABLE x.t (id INT PRIMARY KEY)")
	xaExec("XA START 'lost'", "INSERT INTO x.t VALUES (1)", "XA END 'lost'", "XA PREPARE 'lost'")
	afterPrepare := lastGTID(t, db)
	sandbox.MustExec(t, db, "INSERT INTO x.t VALUES (2)")
	before := lastGTID(t, db)
	xaExec("XA COMMIT 'lost'")
	commit := lastGTID(t, db)
	sandbox.MustExec(t, db, "INSERT INTO x.t VALUES (3)")
	files := binlogFiles(t, src)

	tgt := targetServer(t)
	tdb := sandbox.MustOpen(t, tgt, "")
	sandbox.MustExec(t, tdb, "CREATE DATABASE x", "CREATE TABLE x.t (id INT PRIMARY KEY)")
	code, out := prepl(t, append([]string{"replay", "--target", tgt.URL(), "--start-gtid", afterPrepare, "--progress", "0"}, files...)...)
	if code != exitFatal {
		t.Fatalf("exit %d, want %d\n%s", code, exitFatal, out)
	}
	for _, want := range []string{"X'6c6f7374',X'',1", commit, "before its XA PREPARE"} {
		if !strings.Contains(out, want) {
			t.Errorf("the error does not say %q:\n%s", want, out)
		}
	}
	var ids []int
	rows, err := tdb.Query("SELECT id FROM x.t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	if fmt.Sprint(ids) != "[2]" {
		t.Errorf("target rows %v, want [2]: everything before the XA COMMIT and nothing of or after it", ids)
	}
	var pos string
	tdb.QueryRow("SELECT gtid_pos FROM prepl.position WHERE channel = 'replay'").Scan(&pos)
	if pos != before {
		t.Errorf("stored position %q, want %q (just before the XA COMMIT)", pos, before)
	}
}

// TestXAKeepGTIDRefused: with --keep-gtid the target's binlog must hold
// the source's transactions one for one, which a prepared XA transaction
// applied at its commit cannot give: prepl stops before it and says so.
func TestXAKeepGTIDRefused(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, "CREATE DATABASE x", "CREATE TABLE x.t (id INT PRIMARY KEY)", "INSERT INTO x.t VALUES (1)")
	before := lastGTID(t, db)
	sandbox.MustExec(t, db, "XA START 'k'", "INSERT INTO x.t VALUES (2)", "XA END 'k'", "XA PREPARE 'k'", "XA COMMIT 'k'")
	files := binlogFiles(t, src)

	tgt := func() *sandbox.Server {
		o := sandbox.Defaults()
		o.Binlog, o.ServerID = true, 2
		return sandbox.MustStart(t, o)
	}()
	code, out := prepl(t, append([]string{"replay", "--target", tgt.URL(), "--keep-gtid", "--progress", "0"}, files...)...)
	if code != exitFatal {
		t.Fatalf("exit %d, want %d\n%s", code, exitFatal, out)
	}
	if !strings.Contains(out, "--keep-gtid") || !strings.Contains(out, "X'6b',X'',1") {
		t.Errorf("the error does not name the XA transaction and --keep-gtid:\n%s", out)
	}
	tdb := sandbox.MustOpen(t, tgt, "")
	var n int
	tdb.QueryRow("SELECT COUNT(*) FROM x.t").Scan(&n)
	var pos string
	tdb.QueryRow("SELECT gtid_pos FROM prepl.position WHERE channel = 'replay'").Scan(&pos)
	if n != 1 || pos != before {
		t.Errorf("target has %d rows at position %q, want 1 at %q: everything before the XA transaction, nothing of it", n, pos, before)
	}
}

// TestXAFilteredOut: an XA transaction whose rows the table filter drops
// still has its XA COMMIT applied (nothing to apply): the run ends, with
// the tables kept equal to the source's and nothing left stored.
func TestXAFilteredOut(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, "CREATE DATABASE x", "CREATE TABLE x.t (id INT PRIMARY KEY)", "CREATE TABLE x.skip (id INT PRIMARY KEY)",
		"XA START 'f'", "INSERT INTO x.skip VALUES (1)", "XA END 'f'", "XA PREPARE 'f'", "XA COMMIT 'f'",
		"XA START 'g'", "INSERT INTO x.skip VALUES (2)", "INSERT INTO x.t VALUES (2)", "XA END 'g'", "XA PREPARE 'g'", "XA COMMIT 'g'",
		"INSERT INTO x.t VALUES (3)")
	files := binlogFiles(t, src)
	tgt := targetServer(t)
	mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--exclude", "x.skip", "--progress", "0"}, files...)...)
	tdb := sandbox.MustOpen(t, tgt, "")
	var ids string
	tdb.QueryRow("SELECT GROUP_CONCAT(id ORDER BY id) FROM x.t").Scan(&ids)
	var skipped int
	tdb.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'x' AND table_name = 'skip'").Scan(&skipped)
	if ids != "2,3" || skipped != 0 || xaStored(t, tgt) != 0 {
		t.Errorf("x.t = %q (want 2,3), x.skip exists: %v, stored XA rows %d (want none)", ids, skipped != 0, xaStored(t, tgt))
	}
}
