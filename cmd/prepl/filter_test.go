package main

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/verify"
)

// filterWorkload writes to included, excluded and rewritten tables, with
// DDL of every kind the filter reads, and transactions that mix them.
var filterWorkload = []string{
	"CREATE DATABASE shop",
	"CREATE DATABASE crm",
	"CREATE DATABASE logs",
	"CREATE TABLE shop.customers (id INT PRIMARY KEY, name VARCHAR(20))",
	"CREATE TABLE shop.orders (id INT PRIMARY KEY, customer INT, total DECIMAL(10,2), note VARCHAR(40), UNIQUE KEY (note)," +
		" FOREIGN KEY (customer) REFERENCES shop.customers (id))",
	"CREATE TABLE shop.tmp_import (id INT PRIMARY KEY, raw TEXT)",
	"CREATE TABLE shop.tmp_other (id INT PRIMARY KEY)",
	"CREATE TABLE shop.staging (id INT PRIMARY KEY, v INT)",
	"CREATE TABLE crm.contacts (id INT PRIMARY KEY, email VARCHAR(40))",
	"CREATE TABLE crm.secrets (id INT PRIMARY KEY, token VARCHAR(40))",
	"CREATE TABLE logs.events (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40))",
	"INSERT INTO shop.customers VALUES (1, 'ann'), (2, 'bob'), (3, 'cy')",
	"INSERT INTO shop.orders VALUES (1, 1, 10.50, 'a'), (2, 2, 20.00, 'b')",
	"INSERT INTO shop.tmp_import VALUES (1, 'x'), (2, 'y')",
	"INSERT INTO crm.contacts VALUES (1, 'ann@example.com')",
	"INSERT INTO crm.secrets VALUES (1, 'hunter2')",
	"INSERT INTO logs.events (what) VALUES ('boot')",
	// Transactions mixing included and excluded tables keep only the included rows.
	"BEGIN", "INSERT INTO shop.orders VALUES (3, 3, 5.00, 'c')", "INSERT INTO logs.events (what) VALUES ('order 3')",
	"UPDATE shop.tmp_import SET raw = 'z' WHERE id = 1", "INSERT INTO crm.contacts VALUES (2, 'bob@example.com')", "COMMIT",
	// Transactions of excluded tables only are skipped.
	"BEGIN", "INSERT INTO logs.events (what) VALUES ('only logs')", "DELETE FROM crm.secrets", "COMMIT",
	"UPDATE shop.orders SET note = 'c2', total = total + 1 WHERE id = 3",
	"UPDATE shop.orders SET note = 'tmp' WHERE id = 1",
	"DELETE FROM shop.orders WHERE id = 2",
	// DDL: included tables are changed (and renamed into the target schema), excluded ones are not.
	"ALTER TABLE shop.orders ADD COLUMN status VARCHAR(10) DEFAULT 'new'",
	"ALTER TABLE shop.tmp_import ADD COLUMN extra INT",
	"ALTER TABLE logs.events ADD COLUMN at INT",
	"UPDATE shop.orders SET status = 'paid' WHERE id = 1",
	"RENAME TABLE shop.staging TO shop.staged",
	"INSERT INTO shop.staged VALUES (1, 1), (2, 2)",
	"CREATE TABLE shop.archive LIKE shop.orders",
	"INSERT INTO shop.archive SELECT * FROM shop.orders WHERE id = 1",
	"USE shop",
	"CREATE TABLE notes (id INT PRIMARY KEY, body VARCHAR(20))",
	"INSERT INTO notes VALUES (1, 'relative')",
	"CREATE INDEX by_total ON orders (total)",
	"TRUNCATE TABLE tmp_import",
	"DROP TABLE IF EXISTS shop.tmp_other, shop.staged, logs.events",
	"CREATE TABLE shop.tmp_late (id INT PRIMARY KEY)",
	"INSERT INTO shop.tmp_late VALUES (1)",
	"USE crm",
	"UPDATE contacts SET email = 'ann@example.org' WHERE id = 1",
	"DROP DATABASE logs",
	"INSERT INTO shop.customers VALUES (4, 'dee')",
}

// rowsOf reads a table ordered by every column, as text.
func rowsOf(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	var n int
	s, tb, _ := strings.Cut(table, ".")
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", s, tb).Scan(&n); err != nil {
		t.Fatal(err)
	}
	order := make([]string, n)
	for i := range order {
		order[i] = fmt.Sprint(i + 1)
	}
	rows, err := db.Query("SELECT * FROM " + table + " ORDER BY " + strings.Join(order, ","))
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	var out []string
	vals := make([]sql.RawBytes, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range vals {
			if v == nil {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, string(v))
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out
}

// TestFilters replays and replicates the workload with tables included,
// excluded and a schema rewritten, and compares the target with the
// source as filtered: the included tables row by row under their new
// names, and nothing else.
func TestFilters(t *testing.T) {
	t.Parallel()
	src := source(t, func(o *sandbox.Options) { o.BinlogRowMetadata = "FULL" })
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, filterWorkload...)
	files := binlogFiles(t, src)
	filters := []string{"--include", "shop.*", "--include", "crm.contacts", "--exclude", "shop.tmp_*", "--rewrite-schema", "shop=shop_copy"}
	// source table -> target table; every other table must be absent.
	want := map[string]string{
		"shop.customers": "shop_copy.customers", "shop.orders": "shop_copy.orders", "shop.archive": "shop_copy.archive",
		"shop.notes": "shop_copy.notes", "crm.contacts": "crm.contacts",
	}
	var lastGTID string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&lastGTID); err != nil {
		t.Fatal(err)
	}

	runs := map[string][]string{
		"replay":    append(append([]string{"replay", "--workers", "4", "--progress", "0"}, filters...), files...),
		"replicate": append([]string{"replicate", "--source", src.URL(), "--workers", "4", "--stop-at-end", "--progress", "0"}, filters...),
	}
	for name, args := range runs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tgt := targetServer(t)
			args := append([]string{args[0], "--target", tgt.URL()}, args[1:]...)
			out := mustPrepl(t, args...)
			tdb := sandbox.MustOpen(t, tgt, "")
			tables, err := verify.Tables(context.Background(), tdb)
			if err != nil {
				t.Fatal(err)
			}
			var wantTables []string
			for _, dst := range want {
				wantTables = append(wantTables, dst)
			}
			if strings.Join(sortedStrings(tables), ",") != strings.Join(sortedStrings(wantTables), ",") {
				t.Errorf("target tables %v, want %v", tables, sortedStrings(wantTables))
			}
			for srcTable, dstTable := range want {
				a, b := rowsOf(t, db, srcTable), rowsOf(t, tdb, dstTable)
				if strings.Join(a, "\n") != strings.Join(b, "\n") {
					t.Errorf("%s on the target differs from %s on the source:\n target %q\n source %q", dstTable, srcTable, b, a)
				}
			}
			var schemas int
			tdb.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ('shop', 'logs')").Scan(&schemas)
			if schemas != 0 {
				t.Errorf("the target has schema shop or logs: they are rewritten or excluded")
			}
			// The position covers the whole stream, skipped transactions included.
			var gtid string
			tdb.QueryRow("SELECT gtid_pos FROM prepl.position WHERE slot = 'main'").Scan(&gtid)
			if gtid != lastGTID {
				t.Errorf("stored GTID position %q, want the source's %q", gtid, lastGTID)
			}
			if strings.Contains(out, "skipped 0;") {
				t.Errorf("nothing skipped, though transactions of excluded tables only were read:\n%s", out)
			}
			// A second run applies nothing more.
			if out := mustPrepl(t, args...); !strings.Contains(out, "applied 0 transactions") {
				t.Errorf("second run applied something:\n%s", out)
			}
		})
	}
}

func sortedStrings(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}

// TestSkipRows: replay with --skip-rows keeps on the target what the
// source deleted from the archive table (the deletes are dropped, the
// inserts and updates applied), and applies every change to the others.
func TestSkipRows(t *testing.T) {
	t.Parallel()
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db,
		"CREATE DATABASE arc",
		"CREATE TABLE arc.archive (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE arc.live (id INT PRIMARY KEY, v INT)",
		"INSERT INTO arc.archive VALUES (1, 1), (2, 2), (3, 3)",
		"INSERT INTO arc.live VALUES (1, 1), (2, 2), (3, 3)",
		"BEGIN", "DELETE FROM arc.archive WHERE id = 2", "DELETE FROM arc.live WHERE id = 2", "UPDATE arc.archive SET v = 30 WHERE id = 3", "COMMIT",
		"DELETE FROM arc.archive WHERE id = 1", // a transaction left with no rows
		"INSERT INTO arc.archive VALUES (4, 4)",
	)
	files := binlogFiles(t, src)
	tgt := targetServer(t)
	out := mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--progress", "0", "--skip-rows", "arc.arch*:delete"}, files...)...)
	tdb := sandbox.MustOpen(t, tgt, "")
	if got, want := strings.Join(rowsOf(t, tdb, "arc.archive"), " "), "1|1 2|2 3|30 4|4"; got != want {
		t.Errorf("arc.archive on the target: %q, want %q (the source's deletes left out)", got, want)
	}
	if a, b := rowsOf(t, db, "arc.live"), rowsOf(t, tdb, "arc.live"); strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("arc.live on the target %q, want the source's %q", b, a)
	}
	if !strings.Contains(out, "skipped 1;") {
		t.Errorf("the transaction of a skipped delete only was not skipped:\n%s", out)
	}
}
