package mysql_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
	"github.com/prepl/prepl/verify"
)

// rowEventsSchema has what a compacted unit's rows events must carry
// exactly: foreign keys (the unit's rows go out of source order, checks
// off), a hot row updated by every transaction, deletes and re-inserts,
// and the types of a real schema (DECIMAL, DATETIME(3), TIMESTAMP, CHAR,
// VARCHAR, TEXT, BLOB, DATE, FLOAT, DOUBLE, signed and unsigned
// integers, NULLs, a key WITHOUT OVERLAPS).
var rowEventsSchema = []string{
	"CREATE DATABASE re",
	"CREATE TABLE re.w (id SMALLINT PRIMARY KEY, ytd DECIMAL(12,2), name VARCHAR(10), zip CHAR(9)) ENGINE=InnoDB",
	`CREATE TABLE re.o (id INT NOT NULL, w SMALLINT NOT NULL, at DATETIME(3), ts TIMESTAMP NULL, d DATE, f FLOAT, g DOUBLE,
		u BIGINT UNSIGNED, t TINYINT, note TEXT, bin BLOB, PRIMARY KEY (w, id),
		CONSTRAINT fk_o_w FOREIGN KEY (w) REFERENCES re.w (id)) ENGINE=InnoDB`,
	"CREATE TABLE re.p (id INT, f INT, s DATE, e DATE, PERIOD FOR p(s, e), PRIMARY KEY (id, p WITHOUT OVERLAPS)) ENGINE=InnoDB",
}

// rowEventsSource writes the transactions the tests replay: a seed, then
// a unit's worth of new orders with a hot warehouse row.
func rowEventsSource(t *testing.T) (*sandbox.Server, []*txn.Txn) {
	o := sandbox.Defaults()
	o.Binlog = true
	src := sandbox.MustStart(t, o)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, rowEventsSchema...)
	sandbox.MustExec(t, sdb,
		"INSERT INTO re.w VALUES (1, 0, 'one', '12345'), (2, 0, 'two', NULL)",
		"INSERT INTO re.o VALUES (1, 1, '2026-01-01 10:00:00.123', '2026-01-01 10:00:00', '2026-01-01', 1.5, 2.25, 18446744073709551615, -5, 'x', x'00ff'),"+
			" (2, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
		"INSERT INTO re.p VALUES (1, 0, '2000-01-01', '2000-01-02')",
	)
	stmts := []string{}
	for i := 3; i < 43; i++ { // rows enough for rows events (minEventRows)
		stmts = append(stmts, "BEGIN",
			"UPDATE re.w SET ytd = ytd + 10.5, name = CONCAT('w', "+itoa(i)+") WHERE id = 1",
			"INSERT INTO re.o VALUES ("+itoa(i)+", 2, NOW(3), NOW(), CURDATE(), 0.5, -1e300, "+itoa(i)+", 127, REPEAT('n', 300), x'01')",
			"UPDATE re.o SET note = CONCAT(IFNULL(note, ''), 'u') WHERE w = 1 AND id = 1",
			"COMMIT")
	}
	stmts = append(stmts,
		"DELETE FROM re.o WHERE w = 1 AND id = 2",
		"INSERT INTO re.o (id, w, note) VALUES (2, 1, 'back')", // deleted and re-inserted: an update of the row
		"UPDATE re.p SET f = 20",
		"DELETE FROM re.o WHERE w = 2 AND id = 3",
	)
	sandbox.MustExec(t, sdb, stmts...)
	return src, readTxns(t, src)
}

func itoa(i int) string { return strconv.Itoa(i) }

// replayUnit applies txs[:seed] one by one, then the rest as one
// compacted unit, and returns the unit's batch as text.
func replayUnit(t *testing.T, tgt *mysql.Target, txs []*txn.Txn, seed int) (string, error) {
	t.Helper()
	conn, err := tgt.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tx := range txs[:seed] {
		if _, err := applyUnit(t, tgt, conn, []*txn.Txn{tx}, false); err != nil {
			t.Fatal(err)
		}
	}
	return applyUnit(t, tgt, conn, txs[seed:], true)
}

// TestCompactedRowEvents: a compacted unit's inserts and updates go to a
// MariaDB target as rows events built from the binlog's images, and the
// target ends equal to the source, as it does with the same unit as SQL
// (--row-events=false) on another.
func TestCompactedRowEvents(t *testing.T) {
	ctx := context.Background()
	src, txs := rowEventsSource(t)
	sdb := sandbox.MustOpen(t, src, "")
	const seed = 3
	for _, sqlRows := range []bool{false, true} {
		dst, ddb := startTarget(t, rowEventsSchema...)
		var opts []mysql.Option
		if sqlRows {
			opts = append(opts, mysql.SQLRows())
		}
		tgt := openTarget(t, dst, dst.URL(), opts...)
		if tgt.RowEvents() == sqlRows {
			t.Fatalf("RowEvents() = %v with SQLRows %v: root on a MariaDB target may run BINLOG", tgt.RowEvents(), sqlRows)
		}
		text, err := replayUnit(t, tgt, txs, seed)
		if err != nil {
			t.Fatalf("sqlRows=%v: %v\n%s", sqlRows, err, text)
		}
		events := strings.Contains(text, "update_rows") && strings.Contains(text, "write_rows")
		if events == sqlRows {
			t.Errorf("sqlRows=%v: the unit's rows events: %v, want %v:\n%s", sqlRows, events, !sqlRows, text)
		}
		if !sqlRows && strings.Contains(text, "ON DUPLICATE KEY UPDATE") {
			t.Errorf("an update went as SQL beside the rows events:\n%s", text)
		}
		if err := verify.Rows(ctx, sdb, ddb); err != nil {
			t.Fatalf("sqlRows=%v: target differs from source: %v", sqlRows, err)
		}
	}
}

// TestCompactedRowEventsDiverged: a row the unit updates is missing on
// the target. The rows events fail (1032) as the replica's would, the
// failure is ErrCompacted (so the unit is applied again in source
// order), and in source order the update names its row.
func TestCompactedRowEventsDiverged(t *testing.T) {
	_, txs := rowEventsSource(t)
	dst, ddb := startTarget(t, rowEventsSchema...)
	tgt := openTarget(t, dst, dst.URL())
	conn, err := tgt.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tx := range txs[:3] {
		if _, err := applyUnit(t, tgt, conn, []*txn.Txn{tx}, false); err != nil {
			t.Fatal(err)
		}
	}
	sandbox.MustExec(t, ddb, "DELETE FROM re.o WHERE w = 1 AND id = 1")
	_, err = applyUnit(t, tgt, conn, txs[3:], true)
	if !errors.Is(err, mysql.ErrCompacted) || mysql.ErrorCode(err) != 1032 {
		t.Fatalf("compacted rows events updating a missing row: got %v, want ErrCompacted wrapping error 1032", err)
	}
	_, err = applyUnit(t, tgt, conn, txs[3:], false)
	if !errors.Is(err, mysql.ErrRowCount) || !strings.Contains(err.Error(), "re.o") {
		t.Fatalf("the unit in source order: got %v, want ErrRowCount naming re.o", err)
	}
}

// TestCompactedRowEventsOtherType: a target column whose type differs
// from the binlog's (a wider VARCHAR) takes the rows as SQL, converted
// by the server, not as rows events, which MariaDB's replica refuses
// (error 1677).
func TestCompactedRowEventsOtherType(t *testing.T) {
	ctx := context.Background()
	src, txs := rowEventsSource(t)
	sdb := sandbox.MustOpen(t, src, "")
	dst, ddb := startTarget(t, rowEventsSchema...)
	sandbox.MustExec(t, ddb, "ALTER TABLE re.w MODIFY name VARCHAR(20)")
	tgt := openTarget(t, dst, dst.URL())
	text, err := replayUnit(t, tgt, txs, 3)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !strings.Contains(text, "INSERT INTO `re`.`w`") {
		t.Errorf("the updates of re.w did not go as SQL:\n%s", text)
	}
	if !strings.Contains(text, "write_rows") {
		t.Errorf("re.o's inserts did not go as rows events:\n%s", text)
	}
	if err := verify.Rows(ctx, sdb, ddb); err != nil {
		t.Fatalf("target differs from source: %v", err)
	}
}

// TestKeylessBigChangeAsEvents: a transaction with many inserts, updates
// or deletes of a table without a row key (identical rows among them, which
// only the count of each tells apart) goes as the binlog's own rows
// events, and the target ends equal to the source; a small one goes as
// SQL.
func TestKeylessBigChangeAsEvents(t *testing.T) {
	ctx := context.Background()
	o := sandbox.Defaults()
	o.Binlog = true
	src := sandbox.MustStart(t, o)
	sdb := sandbox.MustOpen(t, src, "")
	schema := []string{"CREATE DATABASE kl", "CREATE TABLE kl.t (a INT, b VARCHAR(20), c DECIMAL(8,2), KEY (a)) ENGINE=InnoDB"}
	sandbox.MustExec(t, sdb, schema...)
	sandbox.MustExec(t, sdb,
		"INSERT INTO kl.t SELECT seq % 50, CONCAT('r', seq % 7), seq / 3 FROM kl.seq_1_to_600",
		"DELETE FROM kl.t WHERE a < 20",                       // 240 rows, duplicates among them
		"UPDATE kl.t SET b = 'upd' WHERE a BETWEEN 20 AND 35", // 192 rows
		"DELETE FROM kl.t WHERE a = 40 LIMIT 3",               // 3 rows: as SQL
	)
	txs := readTxns(t, src)
	if len(txs) != 4 {
		t.Fatalf("%d transactions, want 4", len(txs))
	}
	dst, ddb := startTarget(t, schema...)
	tgt := openTarget(t, dst, dst.URL())
	conn, err := tgt.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i, tx := range txs {
		text, err := applyUnit(t, tgt, conn, []*txn.Txn{tx}, true)
		if err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		if events, want := strings.Contains(text, "BINLOG"), i < 3; events != want {
			t.Errorf("transaction %d (%d rows): as rows events %v, want %v:\n%.600s", i, tx.Rows(), events, want, text)
		}
	}
	if err := verify.Rows(ctx, sdb, ddb); err != nil {
		t.Fatalf("target differs from source: %v", err)
	}
}
