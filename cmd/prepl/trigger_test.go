package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/verify"
)

// triggerSchema is created on the source, on every target and on
// MariaDB's replica before anything is applied, as on a real replica;
// it stays out of the binlog. The triggers set a column, write audit
// rows, and chain (t1 writes t2 whose trigger writes t3); film fills
// film_text as sakila's does.
func triggerSchema(schema string) []string {
	r := strings.NewReplacer("tr.", schema+".")
	out := []string{"CREATE DATABASE " + schema}
	for _, q := range []string{
		"CREATE TABLE tr.t1 (id INT PRIMARY KEY, v INT NOT NULL, note VARCHAR(40), updates INT NOT NULL DEFAULT 0)",
		"CREATE TABLE tr.t2 (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE tr.t3 (id INT PRIMARY KEY, n INT NOT NULL)",
		"CREATE TABLE tr.audit (id INT AUTO_INCREMENT PRIMARY KEY, tbl VARCHAR(10), op VARCHAR(10), rid INT, v INT)",
		"CREATE TABLE tr.plain (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE tr.film (film_id INT AUTO_INCREMENT PRIMARY KEY, title VARCHAR(100), description TEXT)",
		"CREATE TABLE tr.film_text (film_id INT PRIMARY KEY, title VARCHAR(100), description TEXT)",
		"CREATE TRIGGER tr.t1_bi BEFORE INSERT ON tr.t1 FOR EACH ROW SET NEW.note = CONCAT('bi:', NEW.v)",
		"CREATE TRIGGER tr.t1_ai AFTER INSERT ON tr.t1 FOR EACH ROW INSERT INTO tr.audit (tbl, op, rid, v) VALUES ('t1', 'ins', NEW.id, NEW.v)",
		"CREATE TRIGGER tr.t1_bu BEFORE UPDATE ON tr.t1 FOR EACH ROW SET NEW.updates = OLD.updates + 1",
		"CREATE TRIGGER tr.t1_au AFTER UPDATE ON tr.t1 FOR EACH ROW INSERT INTO tr.t2 (id, v) VALUES (NEW.id, NEW.v) ON DUPLICATE KEY UPDATE v = NEW.v",
		"CREATE TRIGGER tr.t1_bd BEFORE DELETE ON tr.t1 FOR EACH ROW INSERT INTO tr.audit (tbl, op, rid, v) VALUES ('t1', 'bdel', OLD.id, OLD.v)",
		"CREATE TRIGGER tr.t1_ad AFTER DELETE ON tr.t1 FOR EACH ROW DELETE FROM tr.t2 WHERE id = OLD.id",
		"CREATE TRIGGER tr.t2_ai AFTER INSERT ON tr.t2 FOR EACH ROW INSERT INTO tr.t3 (id, n) VALUES (NEW.id, 1) ON DUPLICATE KEY UPDATE n = n + 1",
		"CREATE TRIGGER tr.t2_au AFTER UPDATE ON tr.t2 FOR EACH ROW UPDATE tr.t3 SET n = n + 1 WHERE id = NEW.id",
		"CREATE TRIGGER tr.t2_ad AFTER DELETE ON tr.t2 FOR EACH ROW UPDATE tr.t3 SET n = -n WHERE id = OLD.id",
		"CREATE TRIGGER tr.ins_film AFTER INSERT ON tr.film FOR EACH ROW INSERT INTO tr.film_text (film_id, title, description) VALUES (NEW.film_id, NEW.title, NEW.description)",
		"CREATE TRIGGER tr.upd_film AFTER UPDATE ON tr.film FOR EACH ROW UPDATE tr.film_text SET title = NEW.title, description = NEW.description WHERE film_id = OLD.film_id",
		"CREATE TRIGGER tr.del_film AFTER DELETE ON tr.film FOR EACH ROW DELETE FROM tr.film_text WHERE film_id = OLD.film_id",
	} {
		out = append(out, r.Replace(q))
	}
	return out
}

// triggerWorkload writes the source's binlog: trigger tables alone, in
// multi-row statements, mixed with a table without triggers in one
// transaction, runs of plain transactions that compaction can merge,
// and a second GTID domain.
func triggerWorkload(t *testing.T, db *sql.DB) {
	t.Helper()
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, "SET SESSION sql_log_bin = 0")
	sandbox.MustExec(t, db, triggerSchema("tr")...)
	sandbox.MustExec(t, db, "SET SESSION sql_log_bin = 1")
	var q []string
	for i := 1; i <= 40; i++ {
		q = append(q, fmt.Sprintf("INSERT INTO tr.t1 (id, v) VALUES (%d, %d)", i, i*10))
		q = append(q, fmt.Sprintf("INSERT INTO tr.plain VALUES (%d, %d)", i, i))
		q = append(q, fmt.Sprintf("UPDATE tr.plain SET v = v + 1 WHERE id = %d", i))
	}
	q = append(q,
		"INSERT INTO tr.t1 (id, v) VALUES (41, 1), (42, 2), (43, 3)",
		"UPDATE tr.t1 SET v = v + 1 WHERE id <= 20",
		"UPDATE tr.t1 SET v = v * 2 WHERE id BETWEEN 10 AND 30",
		"DELETE FROM tr.t1 WHERE id IN (5, 15, 25)",
		"BEGIN", "INSERT INTO tr.plain VALUES (100, 1)", "UPDATE tr.t1 SET v = 0 WHERE id = 1",
		"INSERT INTO tr.plain VALUES (101, 1)", "DELETE FROM tr.t1 WHERE id = 2", "UPDATE tr.plain SET v = 7 WHERE id = 100", "COMMIT",
		"INSERT INTO tr.film (title, description) VALUES ('ACADEMY DINOSAUR', 'A epic drama'), ('ACE GOLDFINGER', 'A astounding epistle')",
		"INSERT INTO tr.film (title, description) VALUES ('ADAPTATION HOLES', 'A astounding reflection')",
		"UPDATE tr.film SET description = 'changed' WHERE film_id = 2",
		"DELETE FROM tr.film WHERE film_id = 1",
		"SET SESSION gtid_domain_id = 1",
		"INSERT INTO tr.t1 (id, v) VALUES (200, 5)",
		"INSERT INTO tr.plain VALUES (200, 5)",
		"UPDATE tr.t1 SET v = 6 WHERE id = 200",
		"SET SESSION gtid_domain_id = 0",
	)
	for i := 1; i <= 30; i++ {
		q = append(q, fmt.Sprintf("UPDATE tr.plain SET v = v + %d WHERE id = %d", i, i))
	}
	q = append(q, "UPDATE tr.t1 SET v = v + 1 WHERE id > 30", "INSERT INTO tr.film (title) VALUES ('AFFAIR PREJUDICE')")
	sandbox.MustExec(t, db, q...)
}

// triggerTarget starts a target with the schema and triggers in place,
// kept out of its binlog when it has one.
func triggerTarget(t *testing.T, schema string, withBinlog bool) *sandbox.Server {
	t.Helper()
	o := sandbox.Defaults()
	o.FlushLogAtTrxCommit, o.ServerID, o.Binlog = 2, 2, withBinlog
	tgt := sandbox.MustStart(t, o)
	db := sandbox.MustOpen(t, tgt, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, "SET SESSION sql_log_bin = 0")
	sandbox.MustExec(t, db, triggerSchema(schema)...)
	return tgt
}

// mariaDBReplica applies src's binlog with MariaDB's own replica, from
// the beginning, and returns it once it has src's last GTID.
func mariaDBReplica(t *testing.T, src *sandbox.Server) *sandbox.Server {
	t.Helper()
	rep := triggerTarget(t, "tr", false)
	db := sandbox.MustOpen(t, rep, "")
	var pos string
	if err := sandbox.MustOpen(t, src, "").QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	sandbox.MustExec(t, db, "SET GLOBAL gtid_slave_pos = ''",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = %d, MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_USE_GTID = slave_pos", src.Port),
		"START SLAVE")
	for {
		var r sql.NullInt64
		if err := db.QueryRow("SELECT MASTER_GTID_WAIT(?, 1)", pos).Scan(&r); err != nil {
			t.Fatal(err)
		}
		if r.Valid && r.Int64 == 0 {
			break
		}
		st := sandbox.MustSlaveStatus(t, db)
		ioErr, sqlErr := st["Last_IO_Error"], st["Last_SQL_Error"]
		if ioErr != "" || sqlErr != "" {
			t.Fatalf("MariaDB's replica stopped: IO %q, SQL %q", ioErr, sqlErr)
		}
	}
	sandbox.MustExec(t, db, "STOP SLAVE")
	return rep
}

// TestTriggersDoNotFireOnAppliedRows: rows of tables with triggers on
// the target are applied without firing them, in every mode, with and
// without compaction, from files and from the live stream: the target
// equals the source and MariaDB's own replica table by table.
func TestTriggersDoNotFireOnAppliedRows(t *testing.T) {
	t.Parallel() // waits on servers, a replica and delays: overlaps with the other parallel tests
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	triggerWorkload(t, db)
	files := binlogFiles(t, src)
	replica := mariaDBReplica(t, src)
	a := sandbox.MustOpen(t, replica, "")
	if err := verify.Rows(context.Background(), db, a); err != nil {
		t.Fatalf("MariaDB's replica differs from the source (the reference is wrong): %v", err)
	}

	type run struct {
		cmd, mode, compact string
		extra              []string
	}
	var runs []run
	for _, mode := range []string{"serial", "writeset", "optimistic", "domain"} {
		for _, c := range []string{"true", "false"} {
			runs = append(runs, run{"replay", mode, c, nil})
		}
	}
	runs = append(runs,
		run{"replicate", "writeset", "true", nil},
		run{"replicate", "optimistic", "false", nil},
		run{"replay", "serial", "false", []string{"--keep-gtid"}},
	)
	for _, r := range runs {
		name := fmt.Sprintf("%s/%s/compact=%s%s", r.cmd, r.mode, r.compact, strings.Join(r.extra, ""))
		t.Run(name, func(t *testing.T) {
			keep := len(r.extra) > 0
			tgt := triggerTarget(t, "tr", keep)
			args := []string{r.cmd, "--target", tgt.URL(), "--mode", r.mode, "--workers", "4", "--commit-unit", "50",
				"--compact=" + r.compact, "--progress", "0"}
			args = append(args, r.extra...)
			if r.cmd == "replicate" {
				args = append(args, "--source", src.URL(), "--stop-at-end")
			} else {
				args = append(args, files...)
			}
			mustPrepl(t, args...)
			b := sandbox.MustOpen(t, tgt, "")
			if err := verify.Rows(context.Background(), db, b); err != nil {
				t.Fatalf("target differs from the source: %v", err)
			}
			if err := verify.Rows(context.Background(), a, b); err != nil {
				t.Fatalf("target differs from MariaDB's replica: %v", err)
			}
			if keep { // BINLOG statements keep the source's GTIDs too
				var srcPos, tgtPos string
				db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&srcPos)
				b.QueryRow("SELECT @@gtid_binlog_pos").Scan(&tgtPos)
				if srcPos != tgtPos {
					t.Fatalf("with --keep-gtid the target's gtid_binlog_pos is %q, the source's %q", tgtPos, srcPos)
				}
			}
		})
	}
}

// TestTriggerTablesFiltered: a rewritten schema reaches the BINLOG
// statement's table maps, and tables not included are left out of it,
// whether they share a transaction or a statement with included ones.
func TestTriggerTablesFiltered(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	triggerWorkload(t, db)
	files := binlogFiles(t, src)
	tgt := triggerTarget(t, "tr2", false)
	// tr.plain shares transactions with tr.t1; tr.audit and tr.film_text
	// share statements with tr.t1 and tr.film (their triggers' rows).
	mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--workers", "4", "--progress", "0",
		"--rewrite-schema", "tr=tr2", "--include", "tr.t?", "--include", "tr.film"}, files...)...)
	tdb := sandbox.MustOpen(t, tgt, "")
	for _, tb := range []string{"t1", "t2", "t3", "film"} {
		a, b := rowsOf(t, db, "tr."+tb), rowsOf(t, tdb, "tr2."+tb)
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("tr2.%s on the target differs from tr.%s on the source:\n target %q\n source %q", tb, tb, b, a)
		}
	}
	for _, tb := range []string{"audit", "film_text", "plain"} {
		if rows := rowsOf(t, tdb, "tr2."+tb); len(rows) != 0 {
			t.Errorf("excluded table tr2.%s has rows on the target (a trigger fired, or its rows were applied): %q", tb, rows)
		}
	}
}

// TestBinlogPrivilegeNamed: a target user without BINLOG REPLAY gets an
// error that says what to grant, and nothing of the transaction.
func TestBinlogPrivilegeNamed(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	triggerWorkload(t, db)
	files := binlogFiles(t, src)
	tgt := triggerTarget(t, "tr", false)
	sandbox.MustExec(t, sandbox.MustOpen(t, tgt, ""),
		"CREATE USER 'applier'@'%'",
		"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, TRIGGER ON *.* TO 'applier'@'%'")
	url := strings.Replace(tgt.URL(), "root@", "applier@", 1)
	code, out := prepl(t, append([]string{"replay", "--target", url, "--progress", "0"}, files...)...)
	if code == 0 || !strings.Contains(out, "BINLOG REPLAY") || !strings.Contains(out, "0-1-1 ") {
		t.Fatalf("exit %d, want an error naming the privilege BINLOG REPLAY and the first transaction 0-1-1:\n%s", code, out)
	}
	var n int
	sandbox.MustOpen(t, tgt, "").QueryRow("SELECT COUNT(*) FROM tr.t1").Scan(&n)
	if n != 0 {
		t.Fatalf("%d rows of tr.t1 applied without the privilege", n)
	}
}

// BenchmarkTriggerTablesBinlogVsSQL times one binlog of single-row
// transactions on a table whose trigger writes an audit row, applied to
// a target that has the triggers (BINLOG statements) and to one with the
// same tables without triggers (SQL, compacted or not). Run it with
// -benchtime=1x; it reports the seconds of each and their ratio.
func BenchmarkTriggerTablesBinlogVsSQL(b *testing.B) {
	const n = 5000
	o := sandbox.Defaults()
	o.Binlog = true
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 2
	src := sandbox.MustStart(b, o)
	db := sandbox.MustOpen(b, src, "")
	db.SetMaxOpenConns(1)
	schema := []string{
		"CREATE DATABASE tb",
		"CREATE TABLE tb.t (id INT PRIMARY KEY, v INT NOT NULL, note VARCHAR(40))",
		"CREATE TABLE tb.audit (id INT AUTO_INCREMENT PRIMARY KEY, rid INT, op VARCHAR(10))",
	}
	triggers := []string{
		"CREATE TRIGGER tb.t_ai AFTER INSERT ON tb.t FOR EACH ROW INSERT INTO tb.audit (rid, op) VALUES (NEW.id, 'ins')",
		"CREATE TRIGGER tb.t_au AFTER UPDATE ON tb.t FOR EACH ROW INSERT INTO tb.audit (rid, op) VALUES (NEW.id, 'upd')",
	}
	sandbox.MustExec(b, db, "SET SESSION sql_log_bin = 0")
	sandbox.MustExec(b, db, append(schema, triggers...)...)
	sandbox.MustExec(b, db, "SET SESSION sql_log_bin = 1")
	for i := 1; i <= n; i++ {
		q := fmt.Sprintf("INSERT INTO tb.t VALUES (%d, %d, 'x')", i, i)
		if i%2 == 0 {
			q = fmt.Sprintf("UPDATE tb.t SET v = v + 1 WHERE id = %d", i-1)
		}
		sandbox.MustExec(b, db, q)
	}
	sandbox.MustExec(b, db, "FLUSH BINARY LOGS")
	files, err := src.BinlogFiles()
	if err != nil {
		b.Fatal(err)
	}
	replay := func(withTriggers bool, compact string) float64 {
		to := sandbox.Defaults()
		to.FlushLogAtTrxCommit, to.ServerID = 2, 2
		tgt := sandbox.MustStart(b, to)
		tdb := sandbox.MustOpen(b, tgt, "")
		sandbox.MustExec(b, tdb, schema...)
		if withTriggers {
			sandbox.MustExec(b, tdb, triggers...)
		}
		args := append([]string{"replay", "--target", tgt.URL(), "--mode", "serial", "--compact=" + compact, "--progress", "0"}, files...)
		start := time.Now()
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			b.Fatalf("prepl replay: exit %d\n%s%s", code, out.String(), errb.String())
		}
		el := time.Since(start).Seconds()
		if err := verify.Rows(context.Background(), db, tdb); err != nil {
			b.Fatalf("target differs from source: %v", err)
		}
		tgt.Close()
		return el
	}
	var bin, sqlC, sqlU float64
	for i := 0; i < b.N; i++ {
		bin += replay(true, "true")
		sqlC += replay(false, "true")
		sqlU += replay(false, "false")
	}
	k := float64(b.N)
	b.ReportMetric(bin/k, "binlog-s")
	b.ReportMetric(sqlC/k, "sql-compact-s")
	b.ReportMetric(sqlU/k, "sql-s")
	b.ReportMetric(bin/sqlU, "binlog/sql")
	b.ReportMetric(bin/sqlC, "binlog/sql-compact")
}

// TestTriggersReplicateResumes: a second replicate resumes from the
// stored GTID, where the source sends its artificial format description;
// the BINLOG statements read the events with it just as well.
func TestTriggersReplicateResumes(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	triggerWorkload(t, db)
	tgt := triggerTarget(t, "tr", false)
	args := []string{"replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4", "--stop-at-end", "--progress", "0"}
	mustPrepl(t, args...)
	sandbox.MustExec(t, db,
		"INSERT INTO tr.t1 (id, v) VALUES (300, 1), (301, 2)",
		"UPDATE tr.t1 SET v = v + 100 WHERE id >= 300",
		"DELETE FROM tr.t1 WHERE id = 300",
		"INSERT INTO tr.film (title) VALUES ('AGENT TRUMAN')")
	if out := mustPrepl(t, args...); !strings.Contains(out, "applied 4 transactions") {
		t.Fatalf("second run, want 4 transactions applied:\n%s", out)
	}
	if err := verify.Rows(context.Background(), db, sandbox.MustOpen(t, tgt, "")); err != nil {
		t.Fatalf("target differs from the source: %v", err)
	}
}
