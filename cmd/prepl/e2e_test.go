package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/verify"
)

// source starts a sandbox source with a ROW binlog.
func source(t *testing.T, mutate func(*sandbox.Options)) *sandbox.Server {
	t.Helper()
	o := sandbox.Defaults()
	o.Binlog = true
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 2
	if mutate != nil {
		mutate(&o)
	}
	return sandbox.MustStart(t, o)
}

func targetServer(t *testing.T) *sandbox.Server {
	t.Helper()
	o := sandbox.Defaults()
	o.FlushLogAtTrxCommit = 2
	o.ServerID = 2
	return sandbox.MustStart(t, o)
}

// prepl runs the CLI in-process and returns its exit code and output.
func prepl(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String() + errb.String()
}

func mustPrepl(t *testing.T, args ...string) string {
	t.Helper()
	code, out := prepl(t, args...)
	if code != 0 {
		t.Fatalf("prepl %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

func sameRows(t *testing.T, src, dst *sandbox.Server) {
	t.Helper()
	a, b := sandbox.MustOpen(t, src, ""), sandbox.MustOpen(t, dst, "")
	if err := verify.Rows(context.Background(), a, b); err != nil {
		t.Fatalf("target differs from source: %v", err)
	}
}

func binlogFiles(t *testing.T, s *sandbox.Server) []string {
	t.Helper()
	db := sandbox.MustOpen(t, s, "")
	sandbox.MustExec(t, db, "FLUSH BINARY LOGS")
	files, err := s.BinlogFiles()
	if err != nil || len(files) == 0 {
		t.Fatalf("binlog files: %v %v", files, err)
	}
	return files
}

// typesWorkload covers every MariaDB column type with its edge values.
var typesWorkload = []string{
	"SET SESSION sql_mode=''",
	"CREATE DATABASE ty",
	`CREATE TABLE ty.t (
		id INT PRIMARY KEY,
		ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED, mi MEDIUMINT, mu MEDIUMINT UNSIGNED,
		i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED,
		de DECIMAL(65,30), d2 DECIMAL(10,2) UNSIGNED, f FLOAT, dbl DOUBLE,
		b1 BIT(1), b64 BIT(64), e ENUM('a','b','c'), s SET('x','y','z'),
		da DATE, dt DATETIME(6), ts TIMESTAMP(6) NULL DEFAULT NULL, tm TIME(6), y YEAR,
		c CHAR(10), vc VARCHAR(100), tx TEXT, l1 VARCHAR(50) CHARACTER SET latin1,
		bn BINARY(4), vb VARBINARY(300), bl BLOB, j JSON,
		g INT AS (i * 2) VIRTUAL, gs VARCHAR(120) AS (CONCAT(vc, '!')) STORED
	) ENGINE=InnoDB`,
	`INSERT INTO ty.t (id, ti, tu, si, su, mi, mu, i, iu, bi, bu, de, d2, f, dbl, b1, b64, e, s, da, dt, ts, tm, y, c, vc, tx, l1, bn, vb, bl, j)
	 VALUES (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
	 '-99999999999999999999999999999999999.999999999999999999999999999999', 99999999.99, -3.4028235e38, 1.7976931348623157e308,
	 1, 18446744073709551615, 'c', 'x,z', '1000-01-01', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999999',
	 '-838:59:59.000000', 2155, 'abc', 'héllo 😀 wörld', REPEAT('long text ', 100), CONCAT('caf', CHAR(233)),
	 X'00FF7F80', X'000102', X'FF', '{"a": [1, 2.5, "x"], "b": null}')`,
	`INSERT INTO ty.t (id, ti, tu, f, dbl, b1, b64, e, s, da, dt, tm, y, c, vc, j, de)
	 VALUES (2, 127, 0, 1.17549435e-38, -0.0, 0, 0, '', '', '0000-00-00', '0000-00-00 00:00:00', '838:59:59.999999', 0, '', '', '[]', 0.000000000000000000000000000001)`,
	`INSERT INTO ty.t (id) VALUES (3)`,
	`INSERT INTO ty.t (id, f, dbl, tm, dt, ts) VALUES (4, 0.1, 0.1, '-00:00:00.000001', '2024-02-29 12:00:00.5', '1970-01-01 00:00:01')`,
	`UPDATE ty.t SET vc = 'changed ✓', bu = 0, tm = '00:00:00', f = 2.5 WHERE id = 1`,
	`UPDATE ty.t SET ti = NULL, j = NULL WHERE id = 2`,
	`DELETE FROM ty.t WHERE id = 3`,
}

func allBytesWorkload() []string {
	var hexAll strings.Builder
	for i := 0; i < 256; i++ {
		fmt.Fprintf(&hexAll, "%02X", i)
	}
	return []string{
		"INSERT INTO ty.t (id, vb, bl, bn) VALUES (5, X'" + hexAll.String() + "', X'" + hexAll.String() + "', X'00000000')",
		"UPDATE ty.t SET bl = REVERSE(bl) WHERE id = 5",
	}
}

func TestColumnTypesRoundTrip(t *testing.T) {
	for _, meta := range []string{"FULL", "NO_LOG"} {
		t.Run("row_metadata="+meta, func(t *testing.T) {
			t.Parallel()
			src := source(t, func(o *sandbox.Options) { o.BinlogRowMetadata = meta })
			db := sandbox.MustOpen(t, src, "")
			db.SetMaxOpenConns(1)
			sandbox.MustExec(t, db, typesWorkload...)
			sandbox.MustExec(t, db, allBytesWorkload()...)
			files := binlogFiles(t, src)

			replayed := targetServer(t)
			mustPrepl(t, append([]string{"replay", "--target", replayed.URL(), "--workers", "0", "--progress", "0"}, files...)...)
			sameRows(t, src, replayed)

			streamed := targetServer(t)
			mustPrepl(t, "replicate", "--source", src.URL(), "--target", streamed.URL(), "--workers", "4", "--stop-at-end", "--progress", "0")
			sameRows(t, src, streamed)
		})
	}
}

var keysAndDDLWorkload = []string{
	"CREATE DATABASE k",
	"CREATE TABLE k.nokey (a INT, b VARCHAR(10))",
	"CREATE TABLE k.uniq (a INT NOT NULL, b VARCHAR(10), UNIQUE KEY ua (a))",
	"CREATE TABLE k.uniqnull (a INT NULL, b INT, UNIQUE KEY ua (a))",
	"CREATE TABLE k.pk (id INT PRIMARY KEY, v INT, u VARCHAR(20), UNIQUE KEY uu (u))",
	"INSERT INTO k.nokey VALUES (1,'x'),(1,'x'),(1,'x'),(2,NULL)",
	"DELETE FROM k.nokey WHERE a = 1 LIMIT 1",
	"UPDATE k.nokey SET b = 'y' WHERE a = 1 LIMIT 1",
	"INSERT INTO k.uniq VALUES (1,'a'),(2,'b')",
	"UPDATE k.uniq SET a = 3 WHERE a = 1",
	"INSERT INTO k.uniqnull VALUES (NULL, 1), (NULL, 1), (5, 2)",
	"UPDATE k.uniqnull SET b = 9 WHERE a IS NULL LIMIT 1",
	"BEGIN", "INSERT INTO k.pk VALUES (1, 1, 'one'), (2, 2, 'two')", "UPDATE k.uniq SET b = 'multi' WHERE a = 2", "INSERT INTO k.nokey VALUES (7, 'mt')", "COMMIT",
	"BEGIN", "INSERT INTO k.pk VALUES (3, 3, 'rolled back')", "ROLLBACK",
	"BEGIN", "DELETE FROM k.pk WHERE id = 1", "INSERT INTO k.pk VALUES (4, 4, 'one')", "COMMIT",
	"UPDATE k.pk SET u = CASE id WHEN 2 THEN 'one-tmp' ELSE u END WHERE id = 2",
	"ALTER TABLE k.pk ADD COLUMN extra VARCHAR(20) DEFAULT 'dflt'",
	"INSERT INTO k.pk (id, v, u, extra) VALUES (5, 5, 'five', 'e5')",
	"UPDATE k.pk SET extra = 'changed' WHERE id = 2",
	"ALTER TABLE k.pk DROP COLUMN v",
	"UPDATE k.pk SET extra = 'after drop' WHERE id = 4",
	"CREATE TABLE k.tmp (id INT PRIMARY KEY)",
	"INSERT INTO k.tmp VALUES (1), (2)",
	"RENAME TABLE k.tmp TO k.renamed",
	"INSERT INTO k.renamed VALUES (3)",
	"TRUNCATE TABLE k.renamed",
	"INSERT INTO k.renamed VALUES (10)",
	"CREATE TABLE k.gone (id INT PRIMARY KEY)",
	"INSERT INTO k.gone VALUES (1)",
	"DROP TABLE k.gone",
	"USE k",
	"CREATE TABLE relative (id INT PRIMARY KEY, s VARCHAR(10))",
	"INSERT INTO relative VALUES (1, 'rel')",
}

func TestKeysTransactionsAndDDL(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, keysAndDDLWorkload...)
	files := binlogFiles(t, src)
	for _, args := range [][]string{{"--workers", "0"}, {"--workers", "8", "--mode", "writeset"}} {
		tgt := targetServer(t)
		mustPrepl(t, append(append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, args...), files...)...)
		sameRows(t, src, tgt)
		// A second replay of the same files applies nothing: the position says they are done.
		out := mustPrepl(t, append(append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, args...), files...)...)
		if !strings.Contains(out, "applied 0 transactions") {
			t.Errorf("second replay applied something:\n%s", out)
		}
		sameRows(t, src, tgt)
	}
}

// counterWorkload writes n transactions from sessions concurrent writers:
// each inserts a log row (a replay would fail on its key) and moves hot rows.
// counterWorkload runs n transactions from concurrent sessions, each
// inserting a row and bumping one of four hot counters. It returns the
// GTID that ends its setup (schema and hot rows, in domain 0): the
// sessions' transactions of domain 1 depend on it, so a domain-mode run
// must have applied it before.
func counterWorkload(t *testing.T, db *sql.DB, n, sessions int) (setupEnd string) {
	t.Helper()
	sandbox.MustExec(t, db, "CREATE DATABASE IF NOT EXISTS w",
		"CREATE TABLE IF NOT EXISTS w.log (id INT PRIMARY KEY, session INT, note VARCHAR(40))",
		"CREATE TABLE IF NOT EXISTS w.hot (id INT PRIMARY KEY, n BIGINT, u INT, UNIQUE KEY (u))",
		"INSERT IGNORE INTO w.hot VALUES (1,0,1),(2,0,2),(3,0,3),(4,0,4)")
	if err := db.QueryRow("SELECT @@last_gtid").Scan(&setupEnd); err != nil || setupEnd == "" {
		db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&setupEnd)
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			// Sessions alternate between GTID domains 0 and 1, each with
			// hot rows of its own, as domain-based replication requires.
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err == nil {
				defer conn.Close()
				_, err = conn.ExecContext(ctx, "SET SESSION gtid_domain_id = ?", s%2)
			}
			if err != nil {
				errs <- err
				return
			}
			for i := s; i < n; i += sessions {
				tx, err := conn.BeginTx(ctx, nil)
				if err != nil {
					errs <- err
					return
				}
				_, err = tx.Exec("INSERT INTO w.log VALUES (?, ?, REPEAT('x', ?))", i, s, i%40)
				if err == nil {
					_, err = tx.Exec("UPDATE w.hot SET n = n + 1 WHERE id = ?", 1+i%2+2*(s%2))
				}
				if err != nil {
					tx.Rollback()
					errs <- err
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- err
					return
				}
			}
		}(s)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return setupEnd
}

func TestStatementFormatSourceRefused(t *testing.T) {
	src := source(t, func(o *sandbox.Options) { o.BinlogFormat = "STATEMENT" })
	tgt := targetServer(t)
	code, out := prepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--stop-at-end", "--progress", "0")
	if code != 1 || !strings.Contains(out, "binlog_format") || !strings.Contains(out, "ROW") {
		t.Fatalf("exit %d, want 1 with a binlog_format=ROW message:\n%s", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"replicate", "--target", "mysql://root@127.0.0.1:1"},
		{"replay", "--target", "mysql://root@127.0.0.1:1"},
		{"replay", "--target", "http://x", "f"},
		{"replicate", "--source", "mysql://a@b:1", "--target", "mysql://a@b:1", "--mode", "bogus"},
		{"nosuch"},
	} {
		if code, out := prepl(t, args...); code != 2 {
			t.Errorf("prepl %v: exit %d, want 2\n%s", args, code, out)
		}
	}
	for _, cmd := range []string{"replicate", "replay", "status", "version"} {
		code, out := prepl(t, cmd, "--help")
		if code != 0 || (cmd != "version" && !strings.Contains(out, "Example")) {
			t.Errorf("prepl %s --help: exit %d\n%s", cmd, code, out)
		}
	}
}

// buildPrepl compiles the binary once for tests that must kill it.
var buildOnce struct {
	sync.Once
	path string
	err  error
}

// TestMain removes the prepl binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildOnce.path != "" {
		os.RemoveAll(filepath.Dir(buildOnce.path))
	}
	os.Exit(code)
}

func preplBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "prepl-bin-")
		if err != nil {
			buildOnce.err = err
			return
		}
		buildOnce.path = filepath.Join(dir, "prepl")
		out, err := exec.Command("go", "build", "-o", buildOnce.path, ".").CombinedOutput()
		if err != nil {
			buildOnce.err = fmt.Errorf("%v: %s", err, out)
		}
	})
	if buildOnce.err != nil {
		t.Fatalf("build prepl: %v", buildOnce.err)
	}
	return buildOnce.path
}

func TestMissingTargetTableIsNamed(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE m", "CREATE TABLE m.needed (id INT PRIMARY KEY)", "INSERT INTO m.needed VALUES (1)")
	files := binlogFiles(t, src)
	tgt := targetServer(t)
	sandbox.MustExec(t, sandbox.MustOpen(t, tgt, ""), "CREATE DATABASE m")
	// Start after the CREATE TABLE (GTID 0-1-2): the target never gets it.
	code, out := prepl(t, append([]string{"replay", "--target", tgt.URL(), "--start-gtid", "0-1-2", "--progress", "0"}, files...)...)
	// Exit 2: a restart meets the same missing table (systemd must not
	// restart prepl in a loop); the user must create it or re-seed.
	if code != 2 || !strings.Contains(out, "m.needed") {
		t.Fatalf("exit %d, want 2 naming m.needed:\n%s", code, out)
	}
}
