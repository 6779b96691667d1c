package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/sandbox"
)

// The PostgreSQL target, tested as the MySQL target is: every mode on a
// conflicting workload, kill -9 at random points, the target killed
// mid-run, and every column type of docs/postgres.md. prepl verify is the
// comparison; a few values are read back with PostgreSQL's own client.

// pgDatabase creates database name on pg and returns its URL.
func pgDatabase(t *testing.T, pg *sandbox.PGServer, name string) string {
	t.Helper()
	sandbox.MustExec(t, sandbox.MustOpenPostgres(t, pg, "postgres"), "CREATE DATABASE "+name)
	return pg.URL(name)
}

// pgVerify runs prepl verify from src to the PostgreSQL database at url
// and fails the test unless it says equal.
func pgVerify(t *testing.T, src *sandbox.Server, url string, flags ...string) {
	t.Helper()
	code, out := prepl(t, append([]string{"verify", "--source", src.URL(), "--target", url, "--chunk-rows", "50"}, flags...)...)
	if code != 0 || !strings.Contains(out, "equal") {
		t.Fatalf("verify: exit %d, the PostgreSQL target differs from the source:\n%s", code, out)
	}
}

// appliedOnPG is appliedOn for a PostgreSQL target.
func appliedOnPG(t *testing.T, pg *sandbox.PGServer, db, channel string) func() int64 {
	pdb := sandbox.MustOpenPostgres(t, pg, db)
	return func() int64 {
		var n int64 = -1
		pdb.QueryRow("SELECT COALESCE(SUM(applied), -1) FROM prepl.position WHERE channel = $1", channel).Scan(&n)
		return n
	}
}

// keyShiftWorkload changes primary and unique keys: shifts of every key
// by one (each row event moves a key to the value the next one frees),
// swaps, composite keys, and a table without a key whose identical rows
// are updated and deleted one at a time.
var keyShiftWorkload = []string{
	"CREATE DATABASE p",
	"CREATE TABLE p.t (id INT PRIMARY KEY, v INT, u INT NOT NULL, UNIQUE KEY (u))",
	"INSERT INTO p.t SELECT seq, seq, seq FROM p.seq_1_to_20",
	"UPDATE p.t SET id = id + 1 ORDER BY id DESC",
	"UPDATE p.t SET u = u + 1 ORDER BY u DESC",
	"UPDATE p.t SET id = id - 1 ORDER BY id",
	"BEGIN", "DELETE FROM p.t WHERE id % 3 = 0", "INSERT INTO p.t VALUES (3, 0, 1000), (6, 0, 1001)",
	"UPDATE p.t SET id = 100 WHERE id = 4", "UPDATE p.t SET id = 4 WHERE id = 5", "COMMIT",
	"BEGIN", "UPDATE p.t SET id = 200 WHERE id = 1", "UPDATE p.t SET id = 1 WHERE id = 2", "UPDATE p.t SET id = 2 WHERE id = 200", "COMMIT",
	"CREATE TABLE p.uk (a INT NOT NULL, b VARCHAR(10), UNIQUE KEY (a))",
	"INSERT INTO p.uk VALUES (1,'x'),(2,'y'),(3,'z')",
	"BEGIN", "UPDATE p.uk SET a = a + 10", "DELETE FROM p.uk WHERE a = 12", "INSERT INTO p.uk VALUES (2, 'again')", "COMMIT",
	"CREATE TABLE p.nk (a INT, b TEXT)",
	"INSERT INTO p.nk VALUES (1,'d'),(1,'d'),(1,'d'),(2,NULL),(NULL,NULL),(NULL,NULL)",
	"UPDATE p.nk SET b = 'e' WHERE a = 1 LIMIT 1",
	"DELETE FROM p.nk WHERE a IS NULL LIMIT 1",
	"BEGIN", "UPDATE p.nk SET a = 3 WHERE b = 'd' LIMIT 1", "INSERT INTO p.nk VALUES (1,'d')", "DELETE FROM p.nk WHERE b = 'd' LIMIT 1", "COMMIT",
	"CREATE TABLE p.comp (a INT, b VARCHAR(5), c INT, PRIMARY KEY (a, b))",
	"INSERT INTO p.comp VALUES (1,'a',1),(1,'b',2),(2,'a',3)",
	"UPDATE p.comp SET b = 'c' WHERE a = 1 AND b = 'a'",
	"UPDATE p.comp SET a = a + 1 ORDER BY a DESC",
}

// TestPostgresTarget runs the differential and crash tests of the MySQL
// target (modes_test.go, crash_test.go) against PostgreSQL, on one source:
// keyShiftWorkload and conflictWorkload (hot rows, unique swaps, cascades,
// a table without a key, two GTID domains, an ALTER) for the modes, then
// counterWorkload after them for the kills.
func TestPostgresTarget(t *testing.T) {
	t.Parallel() // waits on servers, a replica and delays: overlaps with the other parallel tests
	bin := preplBinary(t)
	src := source(t, func(o *sandbox.Options) { o.CommitWaitCount, o.CommitWaitUsec = 4, 2000 })
	one := sandbox.MustOpen(t, src, "")
	one.SetMaxOpenConns(1) // BEGIN ... COMMIT
	sandbox.MustExec(t, one, keyShiftWorkload...)
	db := sandbox.MustOpen(t, src, "")
	conflictWorkload(t, db, 42, 40, 8)
	files := binlogFiles(t, src)
	conflictFiles := files[:len(files)-1] // the last one, just opened, gets counterWorkload
	const total = 1500
	counterWorkload(t, db, total, 8)
	allFiles := binlogFiles(t, src)
	pg := sandbox.MustStartPostgres(t)

	t.Run("modes", func(t *testing.T) {
		for _, mode := range depend.Modes {
			// Commit units of 4 source transactions compacted, and of one
			// each, every row change its own statement.
			for _, run := range []struct{ compact, unit string }{{"true", "4"}, {"false", "1"}} {
				t.Run(fmt.Sprintf("%s/compact=%s", mode, run.compact), func(t *testing.T) {
					url := pgDatabase(t, pg, strings.ReplaceAll(fmt.Sprintf("m_%s_%s", mode, run.compact), "-", "_"))
					mustPrepl(t, append([]string{"replay", "--target", url, "--mode", string(mode), "--workers", "4",
						"--compact=" + run.compact, "--commit-unit", run.unit, "--progress", "0"}, conflictFiles...)...)
					pgVerify(t, src, url, "--databases", "a,b,p")
				})
			}
		}
	})

	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	t.Run("kill-9", func(t *testing.T) {
		const kills = 10
		for _, c := range []struct {
			name, channel string
			args          func(url string) []string
		}{
			{"replay-writeset", "replay", func(url string) []string {
				return append([]string{"replay", "--target", url, "--workers", "4", "--commit-unit", "3", "--progress", "0"}, allFiles...)
			}},
			// A position row per schema (a, b, w), each resumed from its own.
			{"replay-schema", "replay", func(url string) []string {
				return append([]string{"replay", "--target", url, "--workers", "4", "--mode", "schema", "--commit-unit", "4", "--progress", "0"}, allFiles...)
			}},
			// Small units, as in the cases above: with the default (up to
			// 2000 transactions) what is left after a few kills commits as
			// one unit, and prepl could end between two polls of its
			// progress, before the next kill point.
			{"replicate-commit-order", "default", func(url string) []string {
				return []string{"replicate", "--source", src.URL(), "--target", url, "--mode", "commit-order", "--workers", "4",
					"--commit-unit", "5", "--stop-at-end", "--progress", "0"}
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				dbName := "k_" + strings.ReplaceAll(c.name, "-", "_")
				url := pgDatabase(t, pg, dbName)
				applied := appliedOnPG(t, pg, dbName, c.channel)
				var threshold int64
				for k := 0; k < kills; k++ {
					threshold += 1 + rng.Int63n(total/(2*kills))
					if killAt(t, bin, c.args(url), applied, threshold) {
						t.Fatalf("prepl finished after %d kills, want %d: the workload is too small to kill it at random points", k, kills)
					}
				}
				if code, out := runBin(bin, c.args(url)); code != 0 {
					t.Fatalf("final run: exit %d\n%s", code, out)
				}
				pgVerify(t, src, url)
			})
		}
	})

	// The target killed and started again while prepl applies to it:
	// prepl reconnects and finishes, or exits 1 naming the target; a run
	// after it ends with target = source.
	t.Run("target-killed", func(t *testing.T) {
		tpg := sandbox.MustStartPostgres(t)
		url := pgDatabase(t, tpg, "killed")
		args := append([]string{"replay", "--target", url, "--workers", "4", "--commit-unit", "5",
			"--progress", "0", "--reconnect-timeout", "2m"}, allFiles...)
		var r *preplProc
		if startUntil(t, bin, args, appliedOnPG(t, tpg, "killed", "replay"), total/5, func(x *preplProc) { r = x; tpg.Kill() }) {
			t.Fatal("prepl ended before the target could be killed: make the workload bigger")
		}
		if err := tpg.Restart(t.Context()); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-r.exited:
			code := r.cmd.ProcessState.ExitCode()
			if err != nil && (code != 1 || !strings.Contains(r.out.String(), "target")) {
				t.Fatalf("prepl failed with exit %d (want 1) or without naming the target: %v\n%s", code, err, r.out.String())
			}
			if err == nil && !strings.Contains(r.out.String(), "reconnected") {
				t.Fatalf("prepl finished but never said it reconnected:\n%s", r.out.String())
			}
			t.Logf("prepl after the target's restart: %v", err)
		case <-time.After(3 * time.Minute):
			r.cmd.Process.Kill()
			t.Fatalf("prepl hung after the target restarted:\n%s", r.out.String())
		}
		url = tpg.URL("killed") // the restart may have moved it to another port
		args[2] = url
		if code, out := runBin(bin, args); code != 0 {
			t.Fatalf("run after the restart: exit %d\n%s", code, out)
		}
		pgVerify(t, src, url)
	})
}

// typeCase is one value of testdata/pgtypes.txt.
type typeCase struct {
	col, my, pg string
	also        [][2]string // other columns of the row: name, PostgreSQL value
}

// readTypeCases reads testdata/pgtypes.txt: the cases, and the column
// definitions in the order of their first use.
func readTypeCases(t *testing.T) (cases []typeCase, defs []string) {
	t.Helper()
	f, err := os.Open("testdata/pgtypes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, " | ")
		if len(fields) < 3 {
			t.Fatalf("pgtypes.txt:%d: want column | MySQL value | PostgreSQL value", n)
		}
		c := typeCase{col: strings.Fields(fields[0])[0], my: fields[1], pg: fields[2]}
		if !seen[c.col] {
			seen[c.col] = true
			defs = append(defs, fields[0])
		} else if fields[0] != c.col {
			t.Fatalf("pgtypes.txt:%d: column %s is defined twice", n, c.col)
		}
		for _, a := range fields[3:] {
			name, val, ok := strings.Cut(a, "=")
			if !ok {
				t.Fatalf("pgtypes.txt:%d: %q is not column=value", n, a)
			}
			c.also = append(c.also, [2]string{name, val})
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases, defs
}

// checkTypeValues reads the row of each case (id base+i) on PostgreSQL
// and compares every checked column with the PostgreSQL value the case
// table gives.
func checkTypeValues(t *testing.T, pdb *sql.DB, cases []typeCase, base int) {
	t.Helper()
	for i, c := range cases {
		for _, chk := range append([][2]string{{c.col, c.pg}}, c.also...) {
			var got sql.NullString
			var same bool
			q := fmt.Sprintf("SELECT %s::text, %s IS NOT DISTINCT FROM (%s) FROM pt.t WHERE id = %d", chk[0], chk[0], chk[1], base+i)
			if err := pdb.QueryRow(q).Scan(&got, &same); err != nil {
				t.Errorf("row %d (%s = %s): %s: %v", base+i, c.col, c.my, q, err)
				continue
			}
			if !same {
				shown := "NULL"
				if got.Valid {
					shown = show(got.String)
				}
				t.Errorf("row %d (%s = %s): column %s is %s on PostgreSQL, want %s", base+i, c.col, c.my, chk[0], shown, chk[1])
			}
		}
	}
}

func show(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q... (%d bytes)", s[:80], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// TestPostgresColumnTypes carries every value of testdata/pgtypes.txt to
// PostgreSQL by both paths: prepl copy (rows id i), and, after the copy,
// prepl replicate (rows 1000+i updated to the value, rows 3000+i
// inserted, rows 2000+i deleted, and keysAndDDLWorkload), then prepl
// replay of the whole binlog into another database, twice. prepl verify is equal after each, and every row
// holds the value the case table says. Then the values the mapping
// refuses: each an error naming its column, by copy and by replay.
func TestPostgresColumnTypes(t *testing.T) {
	cases, defs := readTypeCases(t)
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1) // the session's sql_mode and time zone
	sandbox.MustExec(t, db, "SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'", "CREATE DATABASE pt",
		"CREATE TABLE pt.t (id INT PRIMARY KEY, "+strings.Join(defs, ", ")+") DEFAULT CHARSET=utf8mb4")
	for i, c := range cases {
		sandbox.MustExec(t, db,
			fmt.Sprintf("INSERT INTO pt.t (id, %s) VALUES (%d, %s)", c.col, i, c.my),
			fmt.Sprintf("INSERT INTO pt.t (id) VALUES (%d)", 1000+i),
			fmt.Sprintf("INSERT INTO pt.t (id, %s) VALUES (%d, %s)", c.col, 2000+i, c.my))
	}
	// Foreign keys the copy creates: the source's cascades after it are
	// not in its binlog, the target must run them.
	sandbox.MustExec(t, db, "CREATE DATABASE fk", "CREATE TABLE fk.parent (id INT PRIMARY KEY)",
		"CREATE TABLE fk.child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fk.parent (id) ON DELETE CASCADE ON UPDATE CASCADE)",
		"CREATE TABLE fk.nulled (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fk.parent (id) ON DELETE SET NULL)",
		"INSERT INTO fk.parent VALUES (1), (2), (3)", "INSERT INTO fk.child VALUES (1, 1), (2, 2), (3, 3)", "INSERT INTO fk.nulled VALUES (1, 1), (2, 2)")
	pg := sandbox.MustStartPostgres(t)
	zero := []string{"--zero-dates", "null"}
	copied := pgDatabase(t, pg, "copied")
	mustPrepl(t, append([]string{"copy", "--source", src.URL(), "--target", copied, "--chunk-rows", "7", "--progress=false"}, zero...)...)
	pgVerify(t, src, copied, zero...)
	cdb := sandbox.MustOpenPostgres(t, pg, "copied")
	checkTypeValues(t, cdb, cases, 0)

	// After the copy: the keys, transactions and DDL of the MySQL
	// target's test (e2e_test.go), then updates, inserts and deletes of every value.
	sandbox.MustExec(t, db, keysAndDDLWorkload...)
	sandbox.MustExec(t, db, "DELETE FROM fk.parent WHERE id = 1", "UPDATE fk.parent SET id = 30 WHERE id = 3")
	for i, c := range cases {
		sandbox.MustExec(t, db,
			fmt.Sprintf("UPDATE pt.t SET %s = %s WHERE id = %d", c.col, c.my, 1000+i),
			fmt.Sprintf("INSERT INTO pt.t (id, %s) VALUES (%d, %s)", c.col, 3000+i, c.my),
			fmt.Sprintf("DELETE FROM pt.t WHERE id = %d", 2000+i))
	}
	files := binlogFiles(t, src)
	files = files[:len(files)-1] // the last one, just opened, gets the errors below
	mustPrepl(t, append([]string{"replicate", "--source", src.URL(), "--target", copied, "--workers", "4", "--stop-at-end", "--progress", "0"}, zero...)...)
	pgVerify(t, src, copied, zero...)
	for _, base := range []int{0, 1000, 3000} {
		checkTypeValues(t, cdb, cases, base)
	}

	replayed := pgDatabase(t, pg, "replayed")
	mustPrepl(t, append(append([]string{"replay", "--target", replayed, "--workers", "4", "--progress", "0"}, zero...), files...)...)
	pgVerify(t, src, replayed, zero...)
	// A second replay of the same files applies nothing: the position says they are done.
	out := mustPrepl(t, append(append([]string{"replay", "--target", replayed, "--workers", "4", "--progress", "0"}, zero...), files...)...)
	if !strings.Contains(out, "applied 0 transactions") {
		t.Errorf("second replay applied something:\n%s", out)
	}
	rdb := sandbox.MustOpenPostgres(t, pg, "replayed")
	for _, base := range []int{0, 1000, 3000} {
		checkTypeValues(t, rdb, cases, base)
	}
	var left int
	rdb.QueryRow("SELECT count(*) FROM pt.t WHERE id BETWEEN 2000 AND 2999").Scan(&left)
	if left != 0 {
		t.Errorf("%d deleted rows are still on the replayed target", left)
	}

	// Values PostgreSQL cannot hold: an error naming the column, exit 2,
	// and nothing of the transaction applied. Each database's statements
	// come after the previous one's, so a replay from its start stops
	// at it.
	refused := []struct {
		db, col, zeroDates string
		stmts              []string
	}{
		{"enul", "v", "null", []string{"CREATE TABLE enul.t (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO enul.t VALUES (1, X'610062')"}},
		{"ezero", "d", "error", []string{"CREATE TABLE ezero.t (id INT PRIMARY KEY, d DATE)", "INSERT INTO ezero.t VALUES (1, '0000-00-00')"}},
		{"esp", "g", "null", []string{"CREATE TABLE esp.t (id INT PRIMARY KEY, g POINT)", "INSERT INTO esp.t VALUES (1, POINT(1, 2))"}},
	}
	before := map[string]string{}
	for _, r := range refused {
		var pos string
		if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
			t.Fatal(err)
		}
		before[r.db] = pos
		sandbox.MustExec(t, db, append([]string{"CREATE DATABASE " + r.db}, r.stmts...)...)
	}
	files = binlogFiles(t, src)
	for _, r := range refused {
		t.Run("refused-"+r.db, func(t *testing.T) {
			url := pgDatabase(t, pg, "c_"+r.db)
			code, out := prepl(t, "copy", "--source", src.URL(), "--target", url, "--databases", r.db, "--zero-dates", r.zeroDates, "--progress=false")
			if code != 2 || !strings.Contains(out, "column "+r.col) {
				t.Errorf("copy: exit %d, want 2 (a restart cannot help) and an error naming column %s:\n%s", code, r.col, out)
			}
			url = pgDatabase(t, pg, "r_"+r.db)
			code, out = prepl(t, append([]string{"replay", "--target", url, "--start-gtid", before[r.db], "--zero-dates", r.zeroDates, "--progress", "0"}, files...)...)
			if code != 2 || !strings.Contains(out, "column "+r.col) {
				t.Errorf("replay: exit %d, want 2 and an error naming column %s:\n%s", code, r.col, out)
			}
			var rows int
			if err := sandbox.MustOpenPostgres(t, pg, "r_"+r.db).QueryRow("SELECT count(*) FROM " + r.db + ".t").Scan(&rows); err == nil && rows != 0 {
				t.Errorf("replay applied %d rows of the refused transaction", rows)
			}
		})
	}
}

// TestVerifyPostgresKeyOrder: verify reads the source and PostgreSQL in
// chunks of primary key, and a key the two order differently (a _ci
// collation, where 'a' and 'A' are one key and 'a' < 'B', against
// PostgreSQL's C order where 'B' < 'a'; a PAD SPACE collation, where
// 'a\t' < 'a'; ENUM by member number; binary keys with bytes over 0x7F;
// integers past 2^53)
// must still compare equal rows as equal, chunk after chunk, and find a
// planted row.
func TestVerifyPostgresKeyOrder(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE kci",
		"CREATE TABLE kci.ci (k VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT)",
		"INSERT INTO kci.ci VALUES ('a',1),('B',2),('c',3),('D',4),('e',5),('F',6),('€',7),('Z',8),('_',9),('0',10),('ж',11),('Y',12)",
		"CREATE TABLE kci.pad (k VARCHAR(10) COLLATE utf8mb4_bin PRIMARY KEY, v INT)",
		"INSERT INTO kci.pad VALUES ('a',1),('a\t',2),('a\t\t',3),('b',4),(' ',5)",
		"CREATE TABLE kci.l1 (k VARCHAR(10) CHARACTER SET latin1 PRIMARY KEY, v INT)",
		"INSERT INTO kci.l1 VALUES ('café',1),('Cafz',2),('zz',3),('Äb',4),('ab',5),('€x',6)",
		"CREATE TABLE kci.en (e ENUM('z','y','x','a') PRIMARY KEY, v INT)",
		"INSERT INTO kci.en VALUES ('a',1),('x',2),('y',3),('z',4)",
		"CREATE TABLE kci.bn (k BINARY(16) PRIMARY KEY, v INT)",
		"INSERT INTO kci.bn SELECT UNHEX(MD5(seq)), seq FROM kci.seq_1_to_20",
		"CREATE TABLE kci.big (k BIGINT UNSIGNED PRIMARY KEY, v INT)",
		"INSERT INTO kci.big VALUES (9007199254740992,1),(9007199254740993,2),(9007199254740994,3),(9007199254740995,4),"+
			"(18446744073709551613,5),(18446744073709551614,6),(18446744073709551615,7)",
		"CREATE TABLE kci.comp (a INT, s VARCHAR(5) COLLATE utf8mb4_general_ci, v INT, PRIMARY KEY (a, s))",
		"INSERT INTO kci.comp VALUES (1,'b',1),(1,'A',2),(1,'C',3),(2,'a',4),(2,'B',5),(2,'c',6)")
	if _, err := db.Exec("INSERT INTO kci.ci VALUES ('A', 99)"); err == nil {
		t.Fatal("'A' was inserted next to 'a': the collation should make them one key")
	}
	pg := sandbox.MustStartPostgres(t)
	url := pgDatabase(t, pg, "keys")
	mustPrepl(t, "copy", "--source", src.URL(), "--target", url, "--chunk-rows", "2", "--progress=false")
	for _, chunk := range []string{"1", "2", "3", "5000"} {
		if code, out := prepl(t, "verify", "--source", src.URL(), "--target", url, "--chunk-rows", chunk); code != 0 {
			t.Fatalf("verify --chunk-rows %s: exit %d on equal tables:\n%s", chunk, code, out)
		}
	}
	// On PostgreSQL 'A' is another key than 'a': a row the source cannot have.
	sandbox.MustExec(t, sandbox.MustOpenPostgres(t, pg, "keys"), "INSERT INTO kci.ci VALUES ('A', 99)")
	code, out := prepl(t, "verify", "--source", src.URL(), "--target", url, "--chunk-rows", "2")
	if code != 1 || !strings.Contains(out, "kci.ci k=A: extra on target") || strings.Count(out, "kci.") != 1 {
		t.Fatalf("verify after planting 'A': exit %d, want 1 and the one extra row:\n%s", code, out)
	}
}

// TestPostgresTruncateAndIdentity: a TRUNCATE of a table other tables'
// foreign keys reference (the source binlogs it only when its session
// had foreign_key_checks=0) empties the parent, keeps the children and
// restarts the AUTO_INCREMENT, as `mariadb-binlog | mariadb` into
// another MariaDB does (the reference); PostgreSQL refuses TRUNCATE of
// such a table. And after replicated inserts with ids (explicit or the
// source's AUTO_INCREMENT), an INSERT without an id on the target takes
// a new one instead of colliding: the identity follows the replicated
// rows, by both the compacted and the row-by-row path.
func TestPostgresTruncateAndIdentity(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1) // the session's foreign_key_checks
	sandbox.MustExec(t, db, "CREATE DATABASE tr",
		"CREATE TABLE tr.parent (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))",
		"CREATE TABLE tr.child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES tr.parent (id) ON DELETE CASCADE)",
		"CREATE TABLE tr.plain (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"CREATE TABLE tr.ids (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO tr.parent (v) VALUES ('a'), ('b'), ('c')",
		"INSERT INTO tr.child VALUES (1, 1), (2, 2), (3, 3)",
		"INSERT INTO tr.plain (v) VALUES (1), (2), (3)")
	if _, err := db.Exec("TRUNCATE TABLE tr.parent"); err == nil {
		t.Fatal("the source truncated a referenced table with foreign_key_checks=1: the test's premise is wrong")
	}
	sandbox.MustExec(t, db, "SET SESSION foreign_key_checks = 0", "TRUNCATE TABLE tr.parent", "SET SESSION foreign_key_checks = 1",
		"TRUNCATE TABLE tr.plain",
		"INSERT INTO tr.parent (v) VALUES ('d'), ('e')", // ids 1 and 2 again: TRUNCATE reset the AUTO_INCREMENT
		"INSERT INTO tr.plain (v) VALUES (4)",
		// The cascade still acts after the TRUNCATE: children 1 (orphaned
		// by it) and 4 go with parent 1.
		"INSERT INTO tr.child VALUES (4, 1)", "DELETE FROM tr.parent WHERE id = 1",
		"INSERT INTO tr.ids VALUES (1000, 1), (5, 2), (70, 3)", "INSERT INTO tr.ids (v) VALUES (4)",
		"BEGIN", "INSERT INTO tr.ids VALUES (20, 5)", "UPDATE tr.ids SET id = 3000 WHERE id = 70", "COMMIT",
		// The rows of a CREATE TABLE ... SELECT go in the DDL's transaction.
		"CREATE TABLE tr.cts (id INT AUTO_INCREMENT PRIMARY KEY, v INT) SELECT 7 AS id, 1 AS v")
	files := binlogFiles(t, src)

	ref := targetServer(t)
	if _, err := mariadbBinlogInto(t, ref, nil, files...); err != nil {
		t.Fatal(err)
	}
	sameRows(t, src, ref)
	var children int
	sandbox.MustOpen(t, ref, "").QueryRow("SELECT count(*) FROM tr.child").Scan(&children)
	if children != 2 {
		t.Fatalf("the reference has %d children, want 2 (2 and 3: the TRUNCATE keeps them, the DELETE cascades to 1 and 4)", children)
	}

	pg := sandbox.MustStartPostgres(t)
	for _, run := range []struct{ name, compact, unit string }{{"compacted", "true", "8"}, {"rows", "false", "1"}} {
		t.Run(run.name, func(t *testing.T) {
			url := pgDatabase(t, pg, "tr_"+run.name)
			mustPrepl(t, append([]string{"replay", "--target", url, "--workers", "4", "--compact=" + run.compact,
				"--commit-unit", run.unit, "--progress", "0"}, files...)...)
			pgVerify(t, src, url)
			pdb := sandbox.MustOpenPostgres(t, pg, "tr_"+run.name)
			for _, c := range []struct {
				table string
				max   int64
			}{{"parent", 2}, {"plain", 1}, {"ids", 3000}, {"cts", 7}} {
				var id int64
				if err := pdb.QueryRow("INSERT INTO tr." + c.table + " (v) VALUES (DEFAULT) RETURNING id").Scan(&id); err != nil {
					t.Fatalf("insert without an id into tr.%s after the replicated rows: %v", c.table, err)
				}
				if id <= c.max {
					t.Errorf("tr.%s: a new row got id %d, want past the replicated %d", c.table, id, c.max)
				}
			}
		})
	}
}

// BenchmarkPostgresIdentityAdvance times the catch-up of single-row
// inserts into an AUTO_INCREMENT table (a commit unit per source
// transaction with --commit-unit 1, each moving the identity: the worst
// case of the setval prepl adds to a commit) by this build and by the
// prepl binary PREPL_PEER names (one without the identity advance: `make
// bench-pg-identity` builds it), alternately into fresh databases of one
// PostgreSQL, b.N rounds (-benchtime Nx), each round starting with the
// other. It reports the median seconds of
// each and the ratio of the medians; the spread is in the log.
func BenchmarkPostgresIdentityAdvance(b *testing.B) {
	peer := os.Getenv("PREPL_PEER")
	if peer == "" {
		b.Fatal("PREPL_PEER must name the prepl binary to compare with (make bench-pg-identity builds it)")
	}
	const n = 20000
	o := sandbox.Defaults()
	o.Binlog = true
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 2
	src := sandbox.MustStart(b, o)
	db := sandbox.MustOpen(b, src, "")
	sandbox.MustExec(b, db, "CREATE DATABASE ib", "CREATE TABLE ib.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT, note VARCHAR(40))")
	for i := 0; i < n; i++ {
		sandbox.MustExec(b, db, fmt.Sprintf("INSERT INTO ib.t (v, note) VALUES (%d, 'x')", i))
	}
	sandbox.MustExec(b, db, "FLUSH BINARY LOGS")
	files, err := src.BinlogFiles()
	if err != nil {
		b.Fatal(err)
	}
	pg := sandbox.MustStartPostgres(b)
	pdb := sandbox.MustOpenPostgres(b, pg, "postgres")
	bins := map[string]string{"this": preplBinary(b), "peer": peer}
	times := map[string][]float64{}
	for i := 0; i < b.N; i++ {
		order := []string{"this", "peer"}
		if i%2 == 1 {
			order = []string{"peer", "this"}
		}
		for _, name := range order {
			dbName := fmt.Sprintf("ib_%s_%d", name, i)
			sandbox.MustExec(b, pdb, "CREATE DATABASE "+dbName)
			args := append([]string{"replay", "--target", pg.URL(dbName), "--workers", "4", "--commit-unit", "1", "--progress", "0"}, files...)
			start := time.Now()
			if code, out := runBin(bins[name], args); code != 0 {
				b.Fatalf("%s: exit %d\n%s", bins[name], code, out)
			}
			times[name] = append(times[name], time.Since(start).Seconds())
		}
	}
	med := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	b.Logf("seconds, this build: %v; peer: %v", times["this"], times["peer"])
	b.ReportMetric(med(times["this"]), "this-s")
	b.ReportMetric(med(times["peer"]), "peer-s")
	b.ReportMetric(med(times["this"])/med(times["peer"]), "this/peer")
}

// TestPostgresXA applies XA transactions (xaWorkload: two prepared at
// once, committed in the other order, ordinary transactions between, a
// rollback every fourth round) to PostgreSQL as prepared transactions:
// refused with an error naming max_prepared_transactions when it is 0;
// with it, replay and replicate end with target = source (prepl verify)
// and no prepared transaction left; and kill -9 at random points, each
// followed by a check that PostgreSQL shows a state the source had (no
// XA row before its commit, nothing of a rolled-back one), ends equal too.
func TestPostgresXA(t *testing.T) {
	t.Parallel() // waits on servers, a replica and delays: overlaps with the other parallel tests
	bin := preplBinary(t)
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	xaWorkload(t, db, 120)
	var total int64
	db.QueryRow("SELECT SUBSTRING_INDEX(@@gtid_binlog_pos, '-', -1)").Scan(&total)
	files := binlogFiles(t, src)

	t.Run("no-prepared-transactions", func(t *testing.T) {
		pg := sandbox.MustStartPostgres(t) // max_prepared_transactions = 0, PostgreSQL's default
		url := pgDatabase(t, pg, "xa0")
		code, out := prepl(t, append([]string{"replay", "--target", url, "--progress", "0"}, files...)...)
		if code != exitFatal || !strings.Contains(out, "max_prepared_transactions") || !strings.Contains(out, "XA PREPARE") {
			t.Fatalf("exit %d, want %d and an error naming max_prepared_transactions:\n%s", code, exitFatal, out)
		}
		var rows int
		sandbox.MustOpenPostgres(t, pg, "xa0").QueryRow("SELECT count(*) FROM x.t").Scan(&rows)
		if rows != 0 {
			t.Fatalf("%d rows of x.t applied, want none: the run stops before the first XA PREPARE", rows)
		}
	})

	pg := sandbox.MustStartPostgres(t, "-c", "max_prepared_transactions=20")
	left := func(t *testing.T, dbName string) (prepared, recorded int) {
		t.Helper()
		pdb := sandbox.MustOpenPostgres(t, pg, dbName)
		if err := pdb.QueryRow("SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()").Scan(&prepared); err != nil {
			t.Fatal(err)
		}
		pdb.QueryRow("SELECT count(*) FROM prepl.xa").Scan(&recorded)
		return prepared, recorded
	}
	runs := []struct {
		name, channel string
		args          func(url string) []string
	}{
		{"replay-writeset", "replay", func(url string) []string {
			return append([]string{"replay", "--target", url, "--workers", "4", "--commit-unit", "3", "--progress", "0"}, files...)
		}},
		{"replicate-optimistic", "default", func(url string) []string {
			return []string{"replicate", "--source", src.URL(), "--target", url, "--workers", "4", "--mode", "optimistic",
				"--stop-at-end", "--progress", "0"}
		}},
	}
	for _, c := range runs {
		t.Run(c.name, func(t *testing.T) {
			dbName := "xa_" + strings.ReplaceAll(c.name, "-", "_")
			url := pgDatabase(t, pg, dbName)
			if code, out := runBin(bin, c.args(url)); code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			pgVerify(t, src, url)
			if p, r := left(t, dbName); p != 0 || r != 0 {
				t.Fatalf("%d prepared transactions and %d prepl.xa rows left after every XA transaction ended", p, r)
			}
		})
	}

	// The two moments a crash can split: after PREPARE TRANSACTION and
	// before the position, after COMMIT PREPARED and before the position.
	// A trigger on prepl.xa makes the position's transaction fail there;
	// the next run must neither prepare again nor refuse the commit.
	t.Run("between-phase-and-position", func(t *testing.T) {
		url := pgDatabase(t, pg, "xa_split")
		pdb := sandbox.MustOpenPostgres(t, pg, "xa_split")
		sandbox.MustExec(t, pdb, postgres.SetupSQL...)
		sandbox.MustExec(t, pdb, "CREATE FUNCTION planted() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted failure'; END$$")
		args := runs[0].args(url)
		for _, op := range []string{"INSERT", "DELETE"} {
			sandbox.MustExec(t, pdb, "CREATE TRIGGER planted BEFORE "+op+" ON prepl.xa FOR EACH ROW EXECUTE FUNCTION planted()",
				"ALTER TABLE prepl.xa ENABLE ALWAYS TRIGGER planted")
			if code, out := runBin(bin, args); code == 0 || !strings.Contains(out, "planted failure") {
				t.Fatalf("%s on prepl.xa refused: exit %d, want the planted failure:\n%s", op, code, out)
			}
			p, r := left(t, "xa_split")
			t.Logf("after the failed %s: %d prepared, %d recorded", op, p, r)
			if op == "INSERT" && (p == 0 || r != 0) {
				t.Fatalf("after the failed INSERT: %d prepared transactions (want some) and %d prepl.xa rows (want 0)", p, r)
			}
			if op == "DELETE" && r == 0 {
				t.Fatal("after the failed DELETE: no prepl.xa row, want the committed one's")
			}
			sandbox.MustExec(t, pdb, "DROP TRIGGER planted ON prepl.xa")
		}
		if code, out := runBin(bin, args); code != 0 {
			t.Fatalf("run after the failures: exit %d\n%s", code, out)
		}
		pgVerify(t, src, url)
		if p, r := left(t, "xa_split"); p != 0 || r != 0 {
			t.Fatalf("%d prepared transactions and %d prepl.xa rows left after every XA transaction ended", p, r)
		}
	})

	t.Run("kill-9", func(t *testing.T) {
		const kills = 8
		c := runs[0]
		url := pgDatabase(t, pg, "xa_kill")
		pdb := sandbox.MustOpenPostgres(t, pg, "xa_kill")
		rng := rand.New(rand.NewSource(time.Now().UnixNano()))
		var threshold int64
		withPrepared := 0
		for k := 0; k < kills; k++ {
			threshold += 1 + rng.Int63n(total/(2*kills))
			if killAt(t, bin, c.args(url), appliedOnPG(t, pg, "xa_kill", c.channel), threshold) {
				t.Fatalf("prepl finished after %d kills, want %d: make the workload bigger", k, kills)
			}
			var early, rolled int
			pdb.QueryRow("SELECT count(*) FROM x.t LEFT JOIN x.m ON x.m.id = x.t.id / 2 WHERE x.m.id IS NULL").Scan(&early)
			pdb.QueryRow("SELECT count(*) FROM x.t WHERE id % 2 = 1 AND (id / 2) % 4 = 3").Scan(&rolled)
			if early != 0 || rolled != 0 {
				t.Fatalf("after kill %d PostgreSQL shows a state the source never had: %d XA rows visible before their XA COMMIT, "+
					"%d rows of rolled-back XA transactions", k+1, early, rolled)
			}
			if p, _ := left(t, "xa_kill"); p > 0 {
				withPrepared++
			}
		}
		t.Logf("%d kills, %d of them with a prepared transaction on the target", kills, withPrepared)
		if code, out := runBin(bin, c.args(url)); code != 0 {
			t.Fatalf("final run: exit %d\n%s", code, out)
		}
		pgVerify(t, src, url)
		if p, r := left(t, "xa_kill"); p != 0 || r != 0 {
			t.Fatalf("%d prepared transactions and %d prepl.xa rows left after every XA transaction ended", p, r)
		}
	})
}
