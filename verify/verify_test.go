package verify_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/verify"
)

// pair starts a source and a target server once for a whole test; each
// case starts from servers without user schemas (reset).
func pair(t *testing.T) (src, dst *sql.DB) {
	t.Helper()
	o := sandbox.Defaults()
	s := sandbox.MustStart(t, o)
	o.ServerID = 2
	d := sandbox.MustStart(t, o)
	return sandbox.MustOpen(t, s, ""), sandbox.MustOpen(t, d, "")
}

// reset drops every schema but the server's own.
func reset(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")
	if err != nil {
		t.Fatal(err)
	}
	var drop []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		switch strings.ToLower(s) {
		case "mysql", "information_schema", "performance_schema", "sys":
		default:
			drop = append(drop, "DROP DATABASE `"+strings.ReplaceAll(s, "`", "``")+"`")
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sandbox.MustExec(t, db, drop...)
}

// kinds is one table with a column of each kind the cases change; id 1
// and 2 are the same on both sides unless a case changes them.
var kinds = []string{
	"CREATE DATABASE v",
	`CREATE TABLE v.k (id INT PRIMARY KEY, n INT, big BIGINT UNSIGNED, d DECIMAL(10,2), f DOUBLE,
		s VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, c CHAR(5), b BLOB,
		ts DATETIME(6), e ENUM('x','y'), bits BIT(8))`,
	`INSERT INTO v.k VALUES (1, 1, 18446744073709551615, 1.10, 0.5, 'a', 'c', 'b', '2024-01-02 03:04:05.000006', 'x', b'1'),
		(2, 2, 0, -3.25, 1e300, 'text', '', REPEAT('z', 2000), '1970-01-01 00:00:01.5', 'y', b'11111111')`,
}

type verifyCase struct {
	name     string
	both     []string // run on source and target
	src, dst []string // then on each side alone
	table    string   // the table of the Diffs
	rows     string   // in the Diff of Rows; "" when Rows finds the sides equal
	checksum string   // in the Diff of Checksums; "" when Checksums finds them equal
}

var verifyCases = []verifyCase{
	{name: "equal", both: append(slices.Clone(kinds),
		"CREATE TABLE v.empty (a INT)",
		"CREATE TABLE v.nokey (a INT, s TEXT)",
		"INSERT INTO v.nokey VALUES (1, 'x'), (1, 'x'), (NULL, NULL), (2, '')")},
	{name: "no user tables"},
	{name: "row missing on target", both: kinds, src: []string{"INSERT INTO v.k (id) VALUES (3)"},
		table: "v.k", rows: "target has fewer rows (first missing is row 3 in order)", checksum: "on target"},
	{name: "row missing on source", both: kinds, dst: []string{"INSERT INTO v.k (id) VALUES (3)"},
		table: "v.k", rows: "source has fewer rows (first missing is row 3 in order)", checksum: "on target"},
	{name: "empty on target", both: kinds, dst: []string{"DELETE FROM v.k"},
		table: "v.k", rows: "target has fewer rows (first missing is row 1 in order)", checksum: "on target"},
	{name: "int", both: kinds, dst: []string{"UPDATE v.k SET n = 3 WHERE id = 2"},
		table: "v.k", rows: `row 2 column n: source "2", target "3"`, checksum: "on target"},
	{name: "bigint unsigned", both: kinds, dst: []string{"UPDATE v.k SET big = 18446744073709551614 WHERE id = 1"},
		table: "v.k", rows: `row 1 column big: source "18446744073709551615", target "18446744073709551614"`, checksum: "on target"},
	{name: "decimal", both: kinds, dst: []string{"UPDATE v.k SET d = 1.11 WHERE id = 1"},
		table: "v.k", rows: `row 1 column d: source "1.10", target "1.11"`, checksum: "on target"},
	{name: "double", both: kinds, dst: []string{"UPDATE v.k SET f = 0.5000000000000001 WHERE id = 1"},
		table: "v.k", rows: `row 1 column f: source "0.5", target "0.5000000000000001"`, checksum: "on target"},
	// Bytes are compared, not the collation: 'a' = 'A' and 'a' = 'a '
	// in utf8mb4_general_ci, yet the target is not a copy.
	{name: "case in a case-insensitive collation", both: kinds, dst: []string{"UPDATE v.k SET s = 'A' WHERE id = 1"},
		table: "v.k", rows: `row 1 column s: source "a", target "A"`, checksum: "on target"},
	{name: "trailing space in a PAD SPACE collation", both: kinds, dst: []string{"UPDATE v.k SET s = 'a ' WHERE id = 1"},
		table: "v.k", rows: `row 1 column s: source "a", target "a "`, checksum: "on target"},
	{name: "char", both: kinds, dst: []string{"UPDATE v.k SET c = 'C' WHERE id = 1"},
		table: "v.k", rows: `row 1 column c: source "c", target "C"`, checksum: "on target"},
	{name: "blob after 64 bytes", both: kinds, dst: []string{"UPDATE v.k SET b = CONCAT(REPEAT('z', 1999), 'Z') WHERE id = 2"},
		table: "v.k", rows: `row 2 column b: source "` + strings.Repeat("z", 64) + `"..., target "`, checksum: "on target"},
	{name: "datetime fraction", both: kinds, dst: []string{"UPDATE v.k SET ts = '2024-01-02 03:04:05.000007' WHERE id = 1"},
		table: "v.k", rows: `row 1 column ts: source "2024-01-02 03:04:05.000006", target "2024-01-02 03:04:05.000007"`, checksum: "on target"},
	{name: "enum", both: kinds, dst: []string{"UPDATE v.k SET e = 'y' WHERE id = 1"},
		table: "v.k", rows: `row 1 column e: source "x", target "y"`, checksum: "on target"},
	{name: "bit", both: kinds, dst: []string{"UPDATE v.k SET bits = b'10' WHERE id = 1"},
		table: "v.k", rows: `row 1 column bits: source "\x01", target "\x02"`, checksum: "on target"},
	{name: "NULL vs empty string", both: kinds, dst: []string{"UPDATE v.k SET c = NULL WHERE id = 2"},
		table: "v.k", rows: `row 2 column c: source "", target NULL`, checksum: "on target"},
	{name: "empty string vs NULL", both: kinds, src: []string{"UPDATE v.k SET c = NULL WHERE id = 2"},
		table: "v.k", rows: `row 2 column c: source NULL, target ""`, checksum: "on target"},
	{name: "NULL vs zero", both: kinds, dst: []string{"UPDATE v.k SET n = NULL WHERE id = 2"},
		table: "v.k", rows: `row 2 column n: source "2", target NULL`, checksum: "on target"},
	{name: "table missing on target", both: kinds, src: []string{"CREATE TABLE v.gone (a INT)"},
		table: "*", rows: "tables differ: source has [v.gone], target has []", checksum: "tables differ: source has [v.gone], target has []"},
	{name: "table missing on source", both: kinds, dst: []string{"CREATE DATABASE w", "CREATE TABLE w.new (a INT)"},
		table: "*", rows: "tables differ: source has [], target has [w.new]", checksum: "tables differ: source has [], target has [w.new]"},
	{name: "table renamed", both: kinds, src: []string{"CREATE TABLE v.a (a INT)"}, dst: []string{"CREATE TABLE v.b (a INT)"},
		table: "*", rows: "tables differ: source has [v.a], target has [v.b]", checksum: "source has [v.a], target has [v.b]"},
	// The difference is named in the table that holds it, after equal ones.
	{name: "second schema", both: append(slices.Clone(kinds), "CREATE DATABASE w", "CREATE TABLE w.t (a INT)", "INSERT INTO w.t VALUES (1)"),
		dst: []string{"UPDATE w.t SET a = 2"}, table: "w.t", rows: `row 1 column a: source "1", target "2"`, checksum: "on target"},
	// Views are no tables; prepl's own schema is never compared.
	{name: "view on one side", both: kinds, src: []string{"CREATE VIEW v.only AS SELECT 1 AS one"}},
	{name: "prepl schema on the target", both: kinds, dst: []string{"CREATE DATABASE prepl",
		"CREATE TABLE prepl.position (channel VARCHAR(64) PRIMARY KEY, gtid TEXT)", "INSERT INTO prepl.position VALUES ('default', '0-1-5')"}},
	// Tables without a key: rows compare as a multiset, whatever order
	// they were written in, duplicates counted.
	{name: "key-less, same rows in another order", both: []string{"CREATE DATABASE v", "CREATE TABLE v.t (a INT, s VARCHAR(10))"},
		src: []string{"INSERT INTO v.t VALUES (2, 'x'), (1, 'y'), (1, 'y'), (NULL, 'z')"},
		dst: []string{"INSERT INTO v.t VALUES (1, 'y'), (NULL, 'z'), (1, 'y'), (2, 'x')"}},
	{name: "key-less, a duplicate more on target", both: []string{"CREATE DATABASE v", "CREATE TABLE v.t (a INT)"},
		src: []string{"INSERT INTO v.t VALUES (1), (1), (2)"}, dst: []string{"INSERT INTO v.t VALUES (1), (2), (2)"},
		table: "v.t", rows: `row 2 column a: source "1", target "2"`, checksum: "on target"},
	{name: "key-less, a duplicate missing on target", both: []string{"CREATE DATABASE v", "CREATE TABLE v.t (a INT)"},
		src: []string{"INSERT INTO v.t VALUES (1), (1)"}, dst: []string{"INSERT INTO v.t VALUES (1)"},
		table: "v.t", rows: "target has fewer rows (first missing is row 2 in order)", checksum: "on target"},
	// Rows equal under the ORDER BY but not in bytes, in another order.
	{name: "key-less, case-insensitive duplicates in another order", both: []string{"CREATE DATABASE v",
		"CREATE TABLE v.t (s VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci)"},
		src: []string{"INSERT INTO v.t VALUES ('a'), ('A'), ('a '), ('b')"},
		dst: []string{"INSERT INTO v.t VALUES ('b'), ('a '), ('A'), ('a')"}},
	{name: "key-less, long texts alike in their first KiB in another order", both: []string{"CREATE DATABASE v", "CREATE TABLE v.t (s TEXT)"},
		src: []string{"INSERT INTO v.t VALUES (CONCAT(REPEAT('x', 2000), '1')), (CONCAT(REPEAT('x', 2000), '2')), (CONCAT(REPEAT('x', 2000), '3'))"},
		dst: []string{"INSERT INTO v.t VALUES (CONCAT(REPEAT('x', 2000), '3')), (CONCAT(REPEAT('x', 2000), '1')), (CONCAT(REPEAT('x', 2000), '2'))"}},
	{name: "key-less, long texts differing after the first KiB", both: []string{"CREATE DATABASE v", "CREATE TABLE v.t (s TEXT)"},
		src:   []string{"INSERT INTO v.t VALUES (CONCAT(REPEAT('x', 2000), '1')), (CONCAT(REPEAT('x', 2000), '2'))"},
		dst:   []string{"INSERT INTO v.t VALUES (CONCAT(REPEAT('x', 2000), '2')), (CONCAT(REPEAT('x', 2000), '2'))"},
		table: "v.t", rows: `column s: source "xxxx`, checksum: "on target"},
	// A column more or less on the target.
	{name: "column more on target", both: kinds, dst: []string{"ALTER TABLE v.k ADD COLUMN extra INT"},
		table: "v.k", rows: "columns differ: source has [id n big d f s c b ts e bits], target has [id n big d f s c b ts e bits extra]",
		checksum: "columns differ: source has [id n big d f s c b ts e bits], target has [id n big d f s c b ts e bits extra]"},
	{name: "column less on target", both: kinds, dst: []string{"ALTER TABLE v.k DROP COLUMN bits"},
		table: "v.k", rows: "target has [id n big d f s c b ts e]", checksum: "target has [id n big d f s c b ts e]"},
	{name: "column renamed on target", both: kinds, dst: []string{"ALTER TABLE v.k RENAME COLUMN e TO e2"},
		table: "v.k", rows: "target has [id n big d f s c b ts e2 bits]", checksum: "target has [id n big d f s c b ts e2 bits]"},
	// The type may differ: Rows compares values as text.
	{name: "column type wider on target", both: kinds, dst: []string{"ALTER TABLE v.k MODIFY n BIGINT"}, table: "v.k", checksum: "on target"},
	{name: "schema name with a dot", both: []string{"CREATE DATABASE `v.w`", "CREATE TABLE `v.w`.t (a INT, b INT)", "INSERT INTO `v.w`.t VALUES (1, 1), (1, 2)"},
		dst: []string{"UPDATE `v.w`.t SET b = 3 WHERE b = 1"}, table: "v.w.t", rows: `row 1 column b: source "1", target "2"`, checksum: "on target"},
	// Names that need quoting.
	{name: "quoted names", both: []string{"CREATE DATABASE `we``ird`", "CREATE TABLE `we``ird`.`t-1` (`a b` INT)", "INSERT INTO `we``ird`.`t-1` VALUES (1)"},
		dst:   []string{"UPDATE `we``ird`.`t-1` SET `a b` = 2"},
		table: "we`ird.t-1", rows: `row 1 column a b: source "1", target "2"`, checksum: "on target"},
}

func TestCompare(t *testing.T) {
	src, dst := pair(t)
	ctx := context.Background()
	for _, c := range verifyCases {
		t.Run(c.name, func(t *testing.T) {
			reset(t, src)
			reset(t, dst)
			sandbox.MustExec(t, src, c.both...)
			sandbox.MustExec(t, dst, c.both...)
			sandbox.MustExec(t, src, c.src...)
			sandbox.MustExec(t, dst, c.dst...)
			check(t, "Rows", verify.Rows(ctx, src, dst), c.table, c.rows)
			check(t, "Checksums", verify.Checksums(ctx, src, dst), c.table, c.checksum)
		})
	}
}

// check wants err nil when detail is "", else a Diff of table whose
// Detail holds detail.
func check(t *testing.T, fn string, err error, table, detail string) {
	t.Helper()
	if detail == "" {
		if err != nil {
			t.Errorf("%s: want equal, got %v", fn, err)
		}
		return
	}
	var d verify.Diff
	if !errors.As(err, &d) {
		t.Errorf("%s: want a difference in %s, got %v", fn, table, err)
		return
	}
	if d.Table != table || !strings.Contains(d.Detail, detail) {
		t.Errorf("%s: want a difference in %s with %q, got %q", fn, table, detail, d.Error())
	}
	if d.Error() != d.Table+": "+d.Detail {
		t.Errorf("%s: Error() is %q", fn, d.Error())
	}
}

// TestTables: every base table outside the system schemas, sorted by
// bytes (t and T tie in information_schema's collation).
func TestTables(t *testing.T) {
	db, _ := pair(t)
	sandbox.MustExec(t, db, "CREATE DATABASE b", "CREATE DATABASE a", "CREATE DATABASE `a.b`", "CREATE DATABASE prepl",
		"CREATE TABLE b.y (x INT)", "CREATE TABLE a.T (x INT)", "CREATE TABLE a.t (x INT)", "CREATE TABLE `a.b`.x (x INT)",
		"CREATE VIEW a.v AS SELECT 1", "CREATE TABLE prepl.position (x INT)")
	got, err := verify.Tables(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.T", "a.t", "a.b.x", "b.y"}; !slices.Equal(got, want) {
		t.Fatalf("Tables = %q, want %q", got, want)
	}
}

// TestUnreachable: a side that cannot be read is an error, not a Diff.
func TestUnreachable(t *testing.T) {
	src, dst := pair(t)
	closed, err := sql.Open("mysql", "root@tcp(127.0.0.1:1)/")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	ctx := context.Background()
	for _, c := range []struct {
		src, dst *sql.DB
		want     string
	}{{closed, dst, "list source tables: sql: database is closed"}, {src, closed, "list target tables: sql: database is closed"}} {
		for _, err := range []error{verify.Rows(ctx, c.src, c.dst), verify.Checksums(ctx, c.src, c.dst)} {
			var d verify.Diff
			if err == nil || errors.As(err, &d) || err.Error() != c.want {
				t.Errorf("got %v, want %q", err, c.want)
			}
		}
	}
}

// TestReadFailureIsNoDiff: a side whose read fails after its first
// packet (here a sort that runs out of sort_buffer_size) is an error
// naming that side, not a side with fewer rows.
func TestReadFailureIsNoDiff(t *testing.T) {
	src, dst := pair(t)
	ctx := context.Background()
	for _, side := range []string{"source", "target"} {
		t.Run(side, func(t *testing.T) {
			reset(t, src)
			reset(t, dst)
			for _, db := range []*sql.DB{src, dst} {
				db.SetMaxIdleConns(0) // new sessions take the global sort_buffer_size
				sandbox.MustExec(t, db, "SET GLOBAL sort_buffer_size = DEFAULT", "SET GLOBAL max_sort_length = DEFAULT",
					"CREATE DATABASE v", "CREATE TABLE v.t (a TEXT, b TEXT, c TEXT, d TEXT)",
					"INSERT INTO v.t SELECT REPEAT('x', 3000), REPEAT('y', 3000), REPEAT('z', 3000), seq FROM v.seq_1_to_100")
			}
			failing := map[string]*sql.DB{"source": src, "target": dst}[side]
			sandbox.MustExec(t, failing, "SET GLOBAL sort_buffer_size = 1", "SET GLOBAL max_sort_length = 8388608")
			t.Cleanup(func() {
				sandbox.MustExec(t, failing, "SET GLOBAL sort_buffer_size = DEFAULT", "SET GLOBAL max_sort_length = DEFAULT")
			})
			err := verify.Rows(ctx, src, dst)
			var d verify.Diff
			if err == nil || errors.As(err, &d) || !strings.HasPrefix(err.Error(), "read v.t on "+side+": ") {
				t.Fatalf("got %v, want an error reading v.t on the %s", err, side)
			}
		})
	}
}
