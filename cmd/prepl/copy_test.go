package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// typesSource is a source holding typesWorkload, an invalid-in-cp1252
// byte (0x81) and a byte cp1252 maps to € (0x80) in the latin1 column.
func typesSource(t *testing.T) *sandbox.Server {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, typesWorkload...)
	sandbox.MustExec(t, db, allBytesWorkload()...)
	sandbox.MustExec(t, db, "INSERT INTO ty.t (id, l1, bu, ti) VALUES (6, CONCAT(X'81', X'80', 'x'), 18446744073709551615, -128)")
	// A table without a key, a row in it twice.
	sandbox.MustExec(t, db, "CREATE TABLE ty.k (a INT, b VARCHAR(10))", "INSERT INTO ty.k VALUES (1, 'x'), (1, 'x'), (2, NULL), (3, 'y')")
	return src
}

// fixWithVerify damages a copy (damage: statements in the target's SQL)
// and repairs it with verify --fix-sql, the file applied by the target's
// own client (apply): verify must then find it equal. The damage covers
// a missing row of every type and of every byte, a row changed in every
// column, an extra row, and a table without a key one row short, one
// changed and one extra.
func fixWithVerify(t *testing.T, verifyArgs []string, exec func(...string), apply func(file string) error, damage ...string) string {
	t.Helper()
	exec(damage...)
	file := filepath.Join(t.TempDir(), "fix.sql")
	code, out := prepl(t, append(append([]string{"verify"}, verifyArgs...), "--fix-sql", file, "--max-differences", "3")...)
	fix, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(out, "statement(s) to "+file) || strings.Contains(out, "cannot fix") {
		t.Fatalf("verify --fix-sql of a damaged target: exit %d\n%s\nfixes:\n%s", code, out, fix)
	}
	for _, want := range []string{"DELETE FROM", "UPDATE", "INSERT INTO"} {
		if !strings.Contains(string(fix), want) {
			t.Errorf("the fixes hold no %s:\n%s", want, fix)
		}
	}
	if err := apply(file); err != nil {
		t.Fatalf("applying the fixes: %v\n%s", err, fix)
	}
	out = mustPrepl(t, append([]string{"verify"}, verifyArgs...)...)
	if !strings.Contains(out, "equal") {
		t.Fatalf("verify after the fixes: %s\nfixes:\n%s", out, fix)
	}
	return string(fix)
}

func TestCopyTypesToPostgresThenVerify(t *testing.T) {
	src := typesSource(t)
	pg := sandbox.MustStartPostgres(t)
	url := pg.URL("postgres")
	mustPrepl(t, "copy", "--source", src.URL(), "--target", url, "--zero-dates", "null", "--chunk-rows", "2", "--progress=false")
	out := mustPrepl(t, "verify", "--source", src.URL(), "--target", url, "--zero-dates", "null", "--chunk-rows", "2")
	if !strings.Contains(out, "equal") {
		t.Fatalf("verify: %s", out)
	}
	// A few values read with PostgreSQL's own client, not through verify's normalization.
	pdb := sandbox.MustOpenPostgres(t, pg, "postgres")
	for q, want := range map[string]string{
		`SELECT bu::text FROM ty.t WHERE id = 6`:                   "18446744073709551615",
		`SELECT l1 FROM ty.t WHERE id = 6`:                         "\u0081€x",
		`SELECT l1 FROM ty.t WHERE id = 1`:                         "café",
		`SELECT de::text FROM ty.t WHERE id = 1`:                   "-99999999999999999999999999999999999.999999999999999999999999999999",
		`SELECT tm::text FROM ty.t WHERE id = 2`:                   "838:59:59.999999",
		`SELECT coalesce(da::text, 'NULL') FROM ty.t WHERE id = 2`: "NULL",
		`SELECT ts::text FROM ty.t WHERE id = 1`:                   "2038-01-19 03:14:07.999999+00",
		`SELECT b64::text FROM ty.t WHERE id = 1`:                  strings.Repeat("1", 64),
		`SELECT e || '/' || s FROM ty.t WHERE id = 1`:              "c/x,z",
		`SELECT j->'a'->>2 FROM ty.t WHERE id = 1`:                 "x",
		`SELECT encode(bn, 'hex') FROM ty.t WHERE id = 1`:          "00ff7f80",
		`SELECT vc FROM ty.t WHERE id = 1`:                         "changed ✓",
		`SELECT position || ' ' || gtid_pos FROM (SELECT pos::text AS position, gtid_pos FROM prepl.position WHERE channel = 'default' AND slot = 'main') p`: "",
	} {
		var got string
		if err := pdb.QueryRow("SET TIME ZONE 'UTC'; " + q).Scan(&got); err != nil {
			// pgx runs one statement per query: set the zone separately.
			if _, err2 := pdb.Exec("SET TIME ZONE 'UTC'"); err2 != nil {
				t.Fatal(err2)
			}
			if err := pdb.QueryRow(q).Scan(&got); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if want == "" {
			if got == "" || !strings.Contains(got, "0-1-") {
				t.Errorf("%s: %q, want the source's binlog offset and GTID", q, got)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
	// A planted difference is found and the row named.
	sandbox.MustExec(t, pdb, "UPDATE ty.t SET vc = 'planted' WHERE id = 4")
	code, out := prepl(t, "verify", "--source", src.URL(), "--target", url, "--zero-dates", "null")
	if code != 1 || !strings.Contains(out, "ty.t id=4: column vc") {
		t.Fatalf("verify after a planted difference: exit %d\n%s", code, out)
	}
	fixWithVerify(t, []string{"--source", src.URL(), "--target", url, "--zero-dates", "null"},
		func(q ...string) { sandbox.MustExec(t, pdb, q...) },
		func(file string) error {
			out, err := exec.Command("psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", file).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		},
		"DELETE FROM ty.t WHERE id IN (1, 5)",
		`UPDATE ty.t SET ti = 1, tu = 1, si = 1, su = 1, mi = 1, mu = 1, i = 1, iu = 1, bi = 1, bu = 1, de = 1, d2 = 1, f = 1, dbl = 1,
			b1 = B'1', b64 = B'1'::bit(64), e = 'a', s = 'y', da = '2000-01-01', dt = '2000-01-01', ts = '2000-01-01', tm = '01:00:00',
			y = 2000, c = 'z', vc = 'z', tx = 'z', l1 = 'z', bn = '\x01010101', vb = '\x01', bl = '\x01', j = '{}', g = 7, gs = 'z' WHERE id = 2`,
		"INSERT INTO ty.t (id, vc) VALUES (99, 'extra')",
		"DELETE FROM ty.k WHERE ctid = (SELECT ctid FROM ty.k WHERE a = 1 LIMIT 1)",
		"UPDATE ty.k SET b = 'q' WHERE a = 3",
		"INSERT INTO ty.k VALUES (2, NULL)")
}

func TestCopyZeroDateIsAnErrorByDefault(t *testing.T) {
	src := typesSource(t)
	pg := sandbox.MustStartPostgres(t)
	code, out := prepl(t, "copy", "--source", src.URL(), "--target", pg.URL("postgres"), "--progress=false")
	if code == 0 || !strings.Contains(out, "zero date") || !strings.Contains(out, "column da") {
		t.Fatalf("copy of a zero date without --zero-dates=null: exit %d\n%s", code, out)
	}
}

func TestCopyMySQLToMySQLThenVerify(t *testing.T) {
	src := typesSource(t)
	tgt := targetServer(t)
	mustPrepl(t, "copy", "--source", src.URL(), "--target", tgt.URL(), "--chunk-rows", "2", "--progress=false")
	if out := mustPrepl(t, "verify", "--source", src.URL(), "--target", tgt.URL()); !strings.Contains(out, "equal") {
		t.Fatalf("verify: %s", out)
	}
	sameRows(t, src, tgt) // the existing verify package, an independent comparison
	var gtid string
	if err := sandbox.MustOpen(t, tgt, "").QueryRow("SELECT gtid_pos FROM prepl.position WHERE channel = 'default' AND slot = 'main'").Scan(&gtid); err != nil || gtid == "" {
		t.Fatalf("stored position: %q %v", gtid, err)
	}
	tdb := sandbox.MustOpen(t, tgt, "")
	sandbox.MustExec(t, tdb, "DELETE FROM ty.t WHERE id = 5")
	code, out := prepl(t, "verify", "--source", src.URL(), "--target", tgt.URL())
	if code != 1 || !strings.Contains(out, "ty.t id=5: missing on target") {
		t.Fatalf("verify after a planted difference: exit %d\n%s", code, out)
	}
	fix := fixWithVerify(t, []string{"--source", src.URL(), "--target", tgt.URL()},
		func(q ...string) { sandbox.MustExec(t, tdb, q...) },
		func(file string) error {
			cl := exec.Command("mariadb", "--no-defaults", "-uroot", "-h127.0.0.1", "-P", strconv.Itoa(tgt.Port))
			f, err := os.Open(file)
			if err != nil {
				return err
			}
			defer f.Close()
			cl.Stdin = f
			if out, err := cl.CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		},
		"SET SESSION sql_mode = ''",
		"DELETE FROM ty.t WHERE id = 1",
		`UPDATE ty.t SET ti = 1, tu = 1, si = 1, su = 1, mi = 1, mu = 1, i = 1, iu = 1, bi = 1, bu = 1, de = 1, d2 = 1, f = 1, dbl = 1,
			b1 = 0, b64 = 1, e = 'a', s = 'y', da = '2000-01-01', dt = '2000-01-01', ts = '2000-01-01', tm = '01:00:00',
			y = 2000, c = 'z', vc = 'z', tx = 'z', l1 = 'z', bn = X'01010101', vb = X'01', bl = X'01', j = '{}' WHERE id = 2`,
		"INSERT INTO ty.t (id, vc) VALUES (99, 'extra')",
		"DELETE FROM ty.k WHERE a = 1 LIMIT 1",
		"UPDATE ty.k SET b = 'q' WHERE a = 3",
		"INSERT INTO ty.k VALUES (2, NULL)")
	sameRows(t, src, tgt)
	// Generated columns are the target's to compute: never set.
	if strings.Contains(fix, "`g`") || strings.Contains(fix, "`gs`") {
		t.Errorf("the fixes set a generated column:\n%s", fix)
	}
}

func TestCopyKilledAndResumed(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, "SET SESSION max_recursive_iterations = 100000", "CREATE DATABASE big", "CREATE TABLE big.t (id INT PRIMARY KEY, v VARCHAR(40), d DECIMAL(20,5), KEY v (v))",
		"INSERT INTO big.t WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 30000) SELECT n, CONCAT('row ', n, ' é'), n / 7 FROM s")
	pg := sandbox.MustStartPostgres(t)
	url := pg.URL("postgres")
	pdb := sandbox.MustOpenPostgres(t, pg, "postgres")
	// Four workers cut the table in four key ranges, copied in parallel,
	// each resumed from its own last chunk.
	cmd := exec.Command(preplBinary(t), "copy", "--source", src.URL(), "--target", url, "--chunk-rows", "50", "--workers", "4", "--progress=false")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int64
		pdb.QueryRow("SELECT coalesce(sum(rows_copied), 0) FROM prepl.copy_progress").Scan(&n)
		if n >= 1000 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("copy made no progress in 2 minutes")
		}
		time.Sleep(20 * time.Millisecond) // polling the progress table, not waiting for time to pass
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	var copied, rows, parts, keys int64
	pdb.QueryRow("SELECT sum(rows_copied), count(*) FROM prepl.copy_progress WHERE table_name = 't'").Scan(&copied, &parts)
	pdb.QueryRow("SELECT count(*) FROM big.t").Scan(&rows)
	if copied >= 30000 || rows != copied || parts != 4 {
		t.Fatalf("after the kill: progress says %d rows in %d parts, the table has %d (want a part of the rows, the same, in 4 parts)", copied, parts, rows)
	}
	// The keys wait for the rows: the resumed copy writes into a table
	// without a primary key, and must not write a row twice.
	pdb.QueryRow("SELECT count(*) FROM pg_constraint WHERE conrelid = 'big.t'::regclass").Scan(&keys)
	if keys != 0 {
		t.Fatalf("after the kill mid-table: %d constraints on big.t, want none before its rows are all copied", keys)
	}
	out := mustPrepl(t, "copy", "--source", src.URL(), "--target", url, "--chunk-rows", "50", "--progress=false")
	if out := mustPrepl(t, "verify", "--source", src.URL(), "--target", url); !strings.Contains(out, "equal") {
		t.Fatalf("verify after resume: %s", out)
	}
	var distinct int64
	pdb.QueryRow("SELECT count(*), count(DISTINCT id) FROM big.t").Scan(&rows, &distinct)
	if rows != 30000 || distinct != 30000 {
		t.Fatalf("after resume: %d rows, %d distinct keys, want 30000 of each", rows, distinct)
	}
	// The primary key and the plain index are built after the rows, once,
	// by the resumed copy.
	var pk, idx string
	pdb.QueryRow("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'big.t'::regclass AND contype = 'p'").Scan(&pk)
	pdb.QueryRow("SELECT indexdef FROM pg_indexes WHERE schemaname = 'big' AND indexname = 't_v'").Scan(&idx)
	if pk != "PRIMARY KEY (id)" || !strings.Contains(idx, "(v)") {
		t.Fatalf("keys after the copy: primary %q, index t_v %q, want a primary key on id and an index on v", pk, idx)
	}
	t.Logf("killed after %d of 30000 rows; resumed: %s", copied, strings.TrimSpace(out))
}

// The keys are built after each table's rows, the foreign keys after
// every table's keys: a child table copied before its parent gets its
// foreign key all the same; unique and composite keys are there.
func TestCopyKeysAfterRows(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, "CREATE DATABASE k",
		"CREATE TABLE k.b_parent (a INT, b VARCHAR(10), u INT, PRIMARY KEY (a, b), UNIQUE KEY u (u), KEY bu (b, u))",
		"CREATE TABLE k.a_child (id INT AUTO_INCREMENT PRIMARY KEY, pa INT, pb VARCHAR(10), FOREIGN KEY fk (pa, pb) REFERENCES k.b_parent (a, b))",
		"INSERT INTO k.b_parent VALUES (1, 'x', 10), (1, 'y', 11), (2, 'x', NULL), (3, 'z', NULL)",
		"INSERT INTO k.a_child (pa, pb) VALUES (1, 'x'), (1, 'y'), (3, 'z'), (NULL, NULL)")
	pg := sandbox.MustStartPostgres(t)
	url := pg.URL("postgres")
	pdb := sandbox.MustOpenPostgres(t, pg, "postgres")
	mustPrepl(t, "copy", "--source", src.URL(), "--target", url, "--chunk-rows", "2", "--progress=false")
	want := map[string]string{
		"a_child p":  "PRIMARY KEY (id)",
		"a_child f":  "FOREIGN KEY (pa, pb) REFERENCES k.b_parent(a, b) DEFERRABLE INITIALLY DEFERRED",
		"b_parent p": "PRIMARY KEY (a, b)",
	}
	constraints := func() map[string]string {
		rows, err := pdb.Query("SELECT conrelid::regclass::text, contype::text, pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = 'k'::regnamespace")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]string{}
		for rows.Next() {
			var tbl, typ, def string
			rows.Scan(&tbl, &typ, &def)
			got[strings.TrimPrefix(tbl, "k.")+" "+typ] += def
		}
		return got
	}
	if got := constraints(); !reflect.DeepEqual(got, want) {
		t.Fatalf("constraints after the copy:\n%v\nwant\n%v", got, want)
	}
	var unique, plain bool
	pdb.QueryRow("SELECT bool_or(indexdef LIKE 'CREATE UNIQUE INDEX%(u)'), bool_or(indexdef LIKE 'CREATE INDEX%(b, u)') FROM pg_indexes WHERE schemaname = 'k'").Scan(&unique, &plain)
	if !unique || !plain {
		t.Fatalf("indexes after the copy: unique on u %v, on (b, u) %v", unique, plain)
	}
	if out := mustPrepl(t, "verify", "--source", src.URL(), "--target", url); !strings.Contains(out, "equal") {
		t.Fatalf("verify: %s", out)
	}
	// The identity continues after the copied rows.
	var next int
	pdb.QueryRow("INSERT INTO k.a_child (pa, pb) VALUES (2, 'x') RETURNING id").Scan(&next)
	if next != 5 {
		t.Fatalf("the next id after the copy: %d, want 5", next)
	}
}

// TestCopySelectsTablesLikeReplicate: copy and verify select tables with
// replicate's words, --include and --exclude, so that a migration's three
// steps take the same tables.
func TestCopySelectsTablesLikeReplicate(t *testing.T) {
	src := source(t, nil)
	sandbox.MustExec(t, sandbox.MustOpen(t, src, ""),
		"CREATE DATABASE a", "CREATE DATABASE b",
		"CREATE TABLE a.t1 (id INT PRIMARY KEY)", "CREATE TABLE a.t2 (id INT PRIMARY KEY)",
		"CREATE TABLE a.tmp_x (id INT PRIMARY KEY)", "CREATE TABLE b.t (id INT PRIMARY KEY)",
		"INSERT INTO a.t1 VALUES (1)", "INSERT INTO a.t2 VALUES (2)", "INSERT INTO a.tmp_x VALUES (3)", "INSERT INTO b.t VALUES (4)")
	tgt := targetServer(t)
	sel := []string{"--include", "a.*", "--exclude", "a.tmp_*"}
	mustPrepl(t, append([]string{"copy", "--source", src.URL(), "--target", tgt.URL(), "--progress=false"}, sel...)...)
	var got []string
	rows, err := sandbox.MustOpen(t, tgt, "").Query(`SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA IN ('a', 'b') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		got = append(got, n)
	}
	rows.Close()
	if strings.Join(got, " ") != "a.t1 a.t2" {
		t.Errorf("copied tables %v, want a.t1 a.t2", got)
	}
	if out := mustPrepl(t, append([]string{"verify", "--source", src.URL(), "--target", tgt.URL()}, sel...)...); !strings.Contains(out, "equal") {
		t.Errorf("verify of the same selection: %s", out)
	}
	if code, out := prepl(t, "verify", "--source", src.URL(), "--target", tgt.URL()); code == 0 {
		t.Errorf("verify of every table passed with a.tmp_x and b.t not copied: %s", out)
	}
}

// TestCopyRewriteSchemaThenReplicate: a migration into renamed schemas
// selects and renames with the same words at every step, copy, verify
// and replicate: a foreign key to a rewritten schema follows it.
func TestCopyRewriteSchemaThenReplicate(t *testing.T) {
	src := source(t, nil)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, "CREATE DATABASE shop", "CREATE DATABASE ref",
		"CREATE TABLE ref.country (code CHAR(2) PRIMARY KEY, name VARCHAR(20))",
		"CREATE TABLE shop.customer (id INT PRIMARY KEY, country CHAR(2), FOREIGN KEY (country) REFERENCES ref.country (code))",
		"INSERT INTO ref.country VALUES ('fr', 'France'), ('de', 'Germany')",
		"INSERT INTO shop.customer VALUES (1, 'fr'), (2, 'de')")
	tgt := targetServer(t)
	words := []string{"--source", src.URL(), "--target", tgt.URL(), "--include", "shop.*", "--include", "ref.*",
		"--rewrite-schema", "shop=shop_v2", "--rewrite-schema", "ref=ref_v2"}
	mustPrepl(t, append([]string{"copy", "--progress=false"}, words...)...)
	tdb := sandbox.MustOpen(t, tgt, "")
	var schemas string
	if err := tdb.QueryRow(`SELECT GROUP_CONCAT(DISTINCT TABLE_SCHEMA ORDER BY TABLE_SCHEMA) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA IN ('shop', 'ref', 'shop_v2', 'ref_v2')`).Scan(&schemas); err != nil || schemas != "ref_v2,shop_v2" {
		t.Fatalf("schemas on the target: %q %v, want ref_v2,shop_v2", schemas, err)
	}
	var refSchema string
	if err := tdb.QueryRow(`SELECT REFERENCED_TABLE_SCHEMA FROM information_schema.KEY_COLUMN_USAGE
		WHERE TABLE_SCHEMA = 'shop_v2' AND TABLE_NAME = 'customer' AND REFERENCED_TABLE_NAME IS NOT NULL`).Scan(&refSchema); err != nil || refSchema != "ref_v2" {
		t.Fatalf("the copied foreign key references %q (%v), want ref_v2", refSchema, err)
	}
	if out := mustPrepl(t, append([]string{"verify"}, words...)...); !strings.Contains(out, "equal") {
		t.Fatalf("verify with the copy's words: %s", out)
	}
	sandbox.MustExec(t, tdb, "UPDATE shop_v2.customer SET country = 'de' WHERE id = 1")
	if code, out := prepl(t, append([]string{"verify"}, words...)...); code != 1 || !strings.Contains(out, "shop.customer id=1: column country") {
		t.Fatalf("verify after a planted difference in the renamed schema: exit %d\n%s", code, out)
	}
	sandbox.MustExec(t, tdb, "UPDATE shop_v2.customer SET country = 'fr' WHERE id = 1")
	// Replication continues from the copy's position, renaming alike.
	sandbox.MustExec(t, sdb, "INSERT INTO ref.country VALUES ('it', 'Italy')", "INSERT INTO shop.customer VALUES (3, 'it')",
		"UPDATE shop.customer SET country = 'fr' WHERE id = 2")
	mustPrepl(t, append([]string{"replicate", "--stop-at-end", "--progress", "0"}, words...)...)
	if out := mustPrepl(t, append([]string{"verify"}, words...)...); !strings.Contains(out, "equal") {
		t.Fatalf("verify after replicate with the same words: %s", out)
	}
}
