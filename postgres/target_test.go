package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/snapshot"
	"github.com/prepl/prepl/txn"
)

// sourceSchema is the source's database at the copy: a keyed table of
// mixed types, a keyless one, one with a composite key.
var sourceSchema = []string{
	"CREATE DATABASE w",
	`CREATE TABLE w.k (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET latin1, n INT UNSIGNED, e ENUM('a','b','c'),
		d DATETIME(3), f DOUBLE, b VARBINARY(8), m DECIMAL(10,2))`,
	"CREATE TABLE w.nk (a INT, b VARCHAR(10))",
	"CREATE TABLE w.c (id1 INT, id2 VARCHAR(5), v INT, PRIMARY KEY (id1, id2))",
	"INSERT INTO w.k VALUES (1, _latin1'caf\xe9', 4294967295, 'a', '2026-01-02 03:04:05.678', 1.5, X'00ff', 12.34), (2, NULL, 0, NULL, NULL, NULL, NULL, NULL)",
	"INSERT INTO w.nk VALUES (1, 'x'), (1, 'x'), (2, NULL)",
	"INSERT INTO w.c VALUES (1, 'a', 1), (1, 'b', 2)",
}

// workload writes n transactions of inserts, updates and deletes on the
// keyed, keyless and composite-key tables, from seed.
func workload(t *testing.T, db *sql.DB, seed int64, n int) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	for i := 0; i < n; i++ {
		id := 3 + r.Intn(40)
		stmts := []string{"BEGIN"}
		for j := 0; j <= r.Intn(3); j++ {
			switch r.Intn(7) {
			case 0, 1:
				stmts = append(stmts, fmt.Sprintf("INSERT INTO w.k (id, v, n, e, d, f, b, m) VALUES (%d, 'r%d', %d, '%c', '2026-11-%02d 10:00:00.%03d', %g, X'%02x', %d.%02d) "+
					"ON DUPLICATE KEY UPDATE v = VALUES(v), n = n + 1", id, i, r.Intn(1<<31), "abc"[r.Intn(3)], 1+r.Intn(28), r.Intn(1000),
					r.Float64()*1e6, r.Intn(256), r.Intn(1e6), r.Intn(100)))
			case 2:
				stmts = append(stmts, fmt.Sprintf("UPDATE w.k SET v = CONCAT(COALESCE(v, ''), _latin1'\xe8'), e = NULL WHERE id = %d", id))
			case 3:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM w.k WHERE id = %d", id))
			case 4:
				stmts = append(stmts, fmt.Sprintf("INSERT INTO w.nk VALUES (%d, 'x%d')", r.Intn(5), r.Intn(3)))
			case 5:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM w.nk WHERE a = %d LIMIT 1", r.Intn(5)),
					fmt.Sprintf("UPDATE w.nk SET b = 'u%d' WHERE a = %d LIMIT 1", i, r.Intn(5)))
			case 6:
				stmts = append(stmts, fmt.Sprintf("INSERT INTO w.c VALUES (%d, 'k%d', %d) ON DUPLICATE KEY UPDATE v = v + 1", r.Intn(4), r.Intn(4), i),
					fmt.Sprintf("DELETE FROM w.c WHERE id1 = %d AND id2 = 'k%d'", r.Intn(4), r.Intn(4)))
			}
		}
		sandbox.MustExec(t, db, append(stmts, "COMMIT")...)
	}
}

// ddlStream is DDL in the middle of rows: ADD COLUMN ... AFTER, CREATE
// TABLE, RENAME, TRUNCATE, CREATE TABLE ... SELECT, DROP, then a CREATE
// TRIGGER (no translation), then rows again.
var ddlStream = []string{
	"ALTER TABLE w.k ADD COLUMN x INT DEFAULT 7 AFTER v",
	// The rows there get the statement's time, the source's clock set far
	// back, not the target's.
	"SET TIMESTAMP = UNIX_TIMESTAMP('2001-02-03 04:05:06.5')",
	"ALTER TABLE w.k ADD COLUMN added TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), ADD COLUMN added_dt DATETIME NULL DEFAULT CURRENT_TIMESTAMP",
	"SET TIMESTAMP = DEFAULT",
	// The rows there get numbers in w.k's primary key order, which is not
	// PostgreSQL's physical order after the updates.
	"ALTER TABLE w.k ADD COLUMN ai INT NOT NULL AUTO_INCREMENT UNIQUE",
	"UPDATE w.k SET x = id * 3 WHERE id % 2 = 0",
	"INSERT INTO w.k (id, v, x) VALUES (100, 'after alter', 42)",
	"INSERT INTO w.k (id, v, n, e) SELECT seq, CONCAT('bulk', seq), seq, 'b' FROM w.seq_1000_to_1149", // COPY with compaction
	"CREATE TABLE w.n2 (id INT PRIMARY KEY, s SET('p','q','r'), t TIME(2))",
	"INSERT INTO w.n2 VALUES (1, 'p,r', '-838:59:59'), (2, '', '25:00:00.5')",
	"RENAME TABLE w.n2 TO w.n3",
	"UPDATE w.n3 SET s = 'q' WHERE id = 2",
	"TRUNCATE TABLE w.nk",
	"INSERT INTO w.nk VALUES (7, 'truncated')",
	"CREATE TABLE w.cs SELECT id, v, n FROM w.k WHERE id < 20", // the DDL and its rows in one transaction
	"CREATE TABLE w.tmp (id INT PRIMARY KEY)",
	"INSERT INTO w.tmp VALUES (1)",
	"DROP TABLE w.tmp",
	"CREATE TRIGGER w.k_bi BEFORE INSERT ON w.k FOR EACH ROW SET NEW.n = 5",
	"INSERT INTO w.k (id, v) VALUES (101, 'after trigger')",
	"UPDATE w.k SET n = 9 WHERE id = 100",
}

type env struct {
	src  *sandbox.Server
	sdb  *sql.DB
	pg   *sandbox.PGServer
	pdb  *sql.DB // database postgres, for CREATE DATABASE
	srcE mysql.Endpoint
}

func newEnv(t *testing.T) *env {
	t.Helper()
	o := sandbox.Defaults()
	o.Binlog, o.BinlogRowMetadata = true, "FULL"
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 2
	e := &env{src: sandbox.MustStart(t, o), pg: sandbox.MustStartPostgres(t)}
	e.sdb = sandbox.MustOpen(t, e.src, "")
	e.sdb.SetMaxOpenConns(1)
	e.pdb = sandbox.MustOpenPostgres(t, e.pg, "postgres")
	var err error
	if e.srcE, err = mysql.ParseURL(e.src.URL()); err == nil {
		e.srcE, err = e.srcE.WithDefaults()
	}
	if err != nil {
		t.Fatal(err)
	}
	sandbox.MustExec(t, e.sdb, sourceSchema...)
	return e
}

// copyTo makes PostgreSQL database db and copies the source into it
// (prepl copy): the tables, the catalog, the position.
func (e *env) copyTo(t *testing.T, db string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := e.pdb.Exec("CREATE DATABASE " + db); err != nil {
		t.Fatal(err)
	}
	url := e.pg.URL(db)
	tgt, err := postgres.OpenCopy(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	if _, err := snapshot.Run(ctx, snapshot.Config{Source: e.srcE, Target: tgt, ParseTable: postgres.ParseCreateTable, Channel: "test", Databases: []string{"w"}}); err != nil {
		t.Fatalf("copy: %v", err)
	}
	return url
}

func (e *env) binlogFiles(t *testing.T) []string {
	t.Helper()
	sandbox.MustExec(t, e.sdb, "FLUSH BINARY LOGS")
	files, err := e.src.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func openTarget(t *testing.T, url string) *postgres.Target {
	t.Helper()
	tgt, err := postgres.Open(context.Background(), url, "test", postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

// replay applies files to tgt from its stored position, as prepl replay
// does.
func replay(ctx context.Context, tgt *postgres.Target, files []string, cfg apply.Config) (apply.Stats, error) {
	res, err := apply.LoadResume(ctx, tgt)
	if err != nil {
		return apply.Stats{}, err
	}
	var fo fileset.Options
	if res.Found {
		fo.StartFile, fo.StartOffset = res.Position.File, res.Position.Pos
	}
	rd, err := fileset.Open(files, fo)
	if err != nil {
		return apply.Stats{}, err
	}
	defer rd.Close()
	return apply.Run(ctx, rd, tgt, res, cfg)
}

func (e *env) verify(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	r, err := postgres.OpenVerifyReader(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	diffs, err := snapshot.Verify(ctx, snapshot.VerifyConfig{Source: e.srcE, Target: r, ParseTable: postgres.ParseCreateTable, Databases: []string{"w"}})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if len(diffs) > 0 {
		t.Fatalf("target differs from source in %d rows, first: %v", len(diffs), diffs[0])
	}
}

// TestReplicateIntoPostgres copies a source to PostgreSQL, then applies
// its binlog (rows on keyed and keyless tables, DDL mid-stream) in
// writeset mode, with compaction and without (and then with one table's
// definition from the table maps, not the catalog): the run stops before the
// CREATE TRIGGER, naming its GTID, with everything before it applied;
// skipping it, the run ends with the target equal to the source.
func TestReplicateIntoPostgres(t *testing.T) {
	e := newEnv(t)
	dbs := map[bool]string{true: "compacted", false: "ordered"}
	urls := map[bool]string{}
	for _, c := range []bool{true, false} {
		urls[c] = e.copyTo(t, dbs[c])
	}
	workload(t, e.sdb, 1, 300)
	sandbox.MustExec(t, e.sdb, ddlStream...)
	workload(t, e.sdb, 2, 100)
	files := e.binlogFiles(t)
	triggerGTID := gtidOf(t, files, "CREATE DEFINER")

	for _, compaction := range []bool{true, false} {
		t.Run(dbs[compaction], func(t *testing.T) {
			ctx := context.Background()
			// A trigger on the target that refuses every change: rows are the
			// source's effects and must not fire it.
			pdb := sandbox.MustOpenPostgres(t, e.pg, dbs[compaction])
			if !compaction {
				// w.c's definition is read from the binlog's table maps
				// (binlog_row_metadata=FULL) instead.
				sandbox.MustExec(t, pdb, "DELETE FROM prepl.tables WHERE schema_name = 'w' AND table_name = 'c'")
			}
			sandbox.MustExec(t, pdb,
				`CREATE FUNCTION w.refuse() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'a target trigger fired'; END$$`,
				"CREATE TRIGGER refuse BEFORE INSERT OR UPDATE OR DELETE ON w.k FOR EACH ROW EXECUTE FUNCTION w.refuse()")
			tgt := openTarget(t, urls[compaction])
			cfg := apply.Config{Mode: depend.Writeset, Workers: 4, UnitTxns: 20, NoCompact: !compaction}
			_, err := replay(ctx, tgt, files, cfg)
			if !errors.Is(err, postgres.ErrRefusedDDL) || !strings.Contains(err.Error(), triggerGTID) || !strings.Contains(err.Error(), "--skip-gtid "+triggerGTID) {
				t.Fatalf("run: got %v, want it to stop before the CREATE TRIGGER, naming GTID %s and --skip-gtid", err, triggerGTID)
			}
			ps, err := tgt.Checkpoints(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := ps[apply.SlotMain].LastGTID; nextSeq(t, got) != triggerGTID {
				t.Fatalf("stored position is after %s, want the transaction just before %s", got, triggerGTID)
			}
			cfg.Filter = func(tx *txn.Txn) apply.Action {
				if tx.GTID == triggerGTID {
					return apply.Skip
				}
				return apply.Apply
			}
			stats, err := replay(ctx, tgt, files, cfg)
			if err != nil {
				t.Fatalf("run past the trigger: %v", err)
			}
			t.Logf("after the trigger: %d transactions, %d rows, %d compacted away, %d units", stats.Txns, stats.Rows, stats.CompactedRows, stats.Units)
			if compaction && stats.CompactedRows == 0 {
				t.Errorf("compaction on, but no row change was compacted: %+v", stats)
			}
			e.verify(t, urls[compaction])
		})
	}

	// A row the target lost: the run stops, naming the transaction and
	// the row by its key.
	sandbox.MustExec(t, sandbox.MustOpenPostgres(t, e.pg, dbs[false]), "DELETE FROM w.n3 WHERE id = 1")
	sandbox.MustExec(t, e.sdb, "UPDATE w.n3 SET t = '01:00:00' WHERE id = 1")
	workload(t, e.sdb, 4, 50) // units after it, in flight while it fails
	files = e.binlogFiles(t)
	_, err := replay(context.Background(), openTarget(t, urls[false]), files, apply.Config{Workers: 4, UnitTxns: 2, Retries: 2})
	t.Log(err)
	if !errors.Is(err, apply.ErrRowCount) || !strings.Contains(err.Error(), `(row id='1')`) {
		t.Fatalf("update of a row the target lacks: got %v, want a row count error naming row id='1'", err)
	}
}

// gtidOf finds the GTID of the first transaction whose statement starts
// with prefix.
func gtidOf(t *testing.T, files []string, prefix string) string {
	t.Helper()
	rd, err := fileset.Open(files, fileset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for {
		tx, err := rd.Next(context.Background())
		if err != nil {
			t.Fatalf("no transaction starting with %q: %v", prefix, err)
		}
		if tx.IsDDL() && strings.HasPrefix(tx.Changes[0].Stmt.SQL, prefix) {
			return tx.GTID
		}
	}
}

// nextSeq is the MariaDB GTID after g in its domain.
func nextSeq(t *testing.T, g string) string {
	var d, s, n uint64
	if _, err := fmt.Sscanf(g, "%d-%d-%d", &d, &s, &n); err != nil {
		t.Fatalf("GTID %q: %v", g, err)
	}
	return fmt.Sprintf("%d-%d-%d", d, s, n+1)
}

// TestPositionCommitsWithRows kills the PostgreSQL server while units
// commit, restarts it, and runs again from the stored position: the
// target ends equal to the source, the keyless table without a row
// applied twice.
func TestPositionCommitsWithRows(t *testing.T) {
	e := newEnv(t)
	url := e.copyTo(t, "crash")
	workload(t, e.sdb, 3, 1000)
	files := e.binlogFiles(t)
	ctx := context.Background()

	tgt := openTarget(t, url)
	cfg := apply.Config{Mode: depend.Writeset, Workers: 4, UnitTxns: 5, ReconnectTimeout: 200 * time.Millisecond}
	done := make(chan error, 1)
	go func() { _, err := replay(ctx, tgt, files, cfg); done <- err }()
	for {
		ps, err := tgt.Checkpoints(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ps[apply.SlotMain].Applied > 100 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the run ended before the kill: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	// Hold the run where it is, so that on a loaded machine the rest of
	// it cannot commit between the poll above and the kill: almost every
	// unit changes w.k, and the lock waits for the units that hold rows
	// of it to commit. One table: the lock holds nothing else a unit
	// could hold while it waits for w.k (three tables in one LOCK
	// deadlocked with a unit holding rows of w.nk).
	lk, err := sandbox.MustOpenPostgres(t, e.pg, "crash").Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lk.Exec("LOCK TABLE w.k IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the run ended before the kill: %v", err)
	default:
	}
	e.pg.Kill()
	if err := <-done; err == nil {
		t.Fatal("the run went on with its target killed")
	}
	tgt.Close()
	if err := e.pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	url = e.pg.URL("crash")
	tgt = openTarget(t, url)
	stats, err := replay(ctx, tgt, files, cfg)
	if err != nil {
		t.Fatalf("run after the restart: %v", err)
	}
	if stats.Txns == 0 {
		t.Fatal("nothing was left to apply after the restart: the kill came too late to test anything")
	}
	e.verify(t, url)
}

// TestClassify provokes the errors the engine tells apart, for real: a
// unique violation is refused, a serialization failure and a deadlock are
// retried, a terminated backend reconnects. And a user who may not turn
// triggers off is refused at connect, told what to grant.
func TestClassify(t *testing.T) {
	pg := sandbox.MustStartPostgres(t)
	ctx := context.Background()
	tgt := openTarget(t, pg.URL("postgres"))
	db := sandbox.MustOpenPostgres(t, pg, "postgres")
	sandbox.MustExec(t, db, "CREATE TABLE r (id int PRIMARY KEY, v int)", "INSERT INTO r VALUES (1, 0), (2, 0)")
	conn := func() *sql.Conn {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	must := func(c *sql.Conn, q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	check := func(what string, err error, want apply.Class) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if got := tgt.Classify(err); got != want {
			t.Errorf("%s (%v): class %v, want %v", what, err, got, want)
		}
	}

	a, b := conn(), conn()
	_, err := a.ExecContext(ctx, "INSERT INTO r VALUES (1, 1)")
	check("unique violation", err, apply.Refused)

	must(a, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	must(a, "SELECT * FROM r")
	must(b, "UPDATE r SET v = v + 1 WHERE id = 1")
	_, err = a.ExecContext(ctx, "UPDATE r SET v = v + 1 WHERE id = 1")
	check("serialization failure", err, apply.Retry)
	must(a, "ROLLBACK")

	must(a, "BEGIN")
	must(b, "BEGIN")
	must(a, "UPDATE r SET v = 1 WHERE id = 1")
	must(b, "UPDATE r SET v = 1 WHERE id = 2")
	errs := make(chan error, 2)
	go func() { _, err := b.ExecContext(ctx, "UPDATE r SET v = 2 WHERE id = 1"); errs <- err }()
	_, errA := a.ExecContext(ctx, "UPDATE r SET v = 2 WHERE id = 2")
	errB := <-errs
	check("deadlock", errors.Join(errA, errB), apply.Retry)
	a.ExecContext(ctx, "ROLLBACK")
	b.ExecContext(ctx, "ROLLBACK")

	// A user that may not set session_replication_role is told what to grant.
	sandbox.MustExec(t, db, "CREATE ROLE plain LOGIN")
	u := strings.Replace(pg.URL("postgres"), "postgres@", "plain@", 1)
	if _, err := postgres.Open(ctx, u, "test", postgres.Options{}); err == nil || !strings.Contains(err.Error(), "GRANT SET ON PARAMETER session_replication_role") {
		t.Errorf("open as a user without superuser: got %v, want an error saying what to grant", err)
	}

	w, err := tgt.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	must(a, fmt.Sprintf("SELECT pg_terminate_backend(%d)", w.ID()))
	err = w.Rollback(ctx)
	check("terminated backend", err, apply.Connection)
}
