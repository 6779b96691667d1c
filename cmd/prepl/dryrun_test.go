package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/verify"
)

// TestPrintSQLFollowsTableMaps: --print-sql takes each row's columns from
// the table map it came with, not from the first one of its table's name:
// a table dropped and re-created with fewer columns printed its second
// rows with the first definition (index out of range). Without a target
// it leaves out the generated columns that the stream's CREATE TABLE
// names, as the applier does; the script then makes the source's rows.
// With a target, the rows are fitted to the target's definitions as the
// applier fits them.
//
// The script is what prepl replay sends, from the same renderer: run by
// the mariadb client it makes the tables prepl replay makes on another
// server, multi-row statements and a DDL after SET NAMES ... COLLATE
// (whose session goes as execDDL sets it) included.
func TestPrintSQLFollowsTableMaps(t *testing.T) {
	src := source(t, func(o *sandbox.Options) { o.BinlogRowMetadata = "FULL" })
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1) // SET NAMES is the session's
	sandbox.MustExec(t, db,
		"CREATE DATABASE rc",
		"CREATE TABLE rc.C (pk INT PRIMARY KEY, a INT, b INT, c INT, d INT)",
		"INSERT INTO rc.C VALUES (1, 1, 1, 1, 1)",
		"DROP TABLE rc.C",
		"CREATE TABLE rc.C (pk INT PRIMARY KEY, a INT, b INT, c INT)",
		"INSERT INTO rc.C VALUES (1, 1, 1, 1), (2, 2, 2, 2)",
		"UPDATE rc.C SET c = 5 WHERE pk = 2",
		"CREATE TABLE rc.g (id INT PRIMARY KEY, v INT, s INT AS (v * 2) STORED, w INT GENERATED ALWAYS AS (v + 1) VIRTUAL, z INT)",
		"INSERT INTO rc.g (id, v, z) VALUES (1, 5, 1), (2, 7, 2)",
		"UPDATE rc.g SET v = 6 WHERE id = 1",
		"DELETE FROM rc.g WHERE id = 2",
		"SET NAMES utf8mb4 COLLATE utf8mb4_bin",
		"CREATE TABLE rc.n (a VARCHAR(10) PRIMARY KEY, b VARCHAR(10) DEFAULT 'Ü')",
		"INSERT INTO rc.n (a) VALUES ('x'), ('y'), ('ß')",
		"INSERT INTO rc.g (id, v, z) VALUES (10, 10, 10), (11, 11, 11), (12, 12, 12), (13, 13, 13)",
	)
	files := binlogFiles(t, src)

	script := mustPrepl(t, append([]string{"replay", "--dry-run", "--print-sql"}, files...)...)
	for _, l := range strings.Split(script, "\n") {
		if strings.HasPrefix(l, "INSERT INTO `rc`.`g`") || strings.HasPrefix(l, "UPDATE `rc`.`g`") {
			if regexp.MustCompile("`[sw]`").MatchString(l) {
				t.Errorf("a generated column is written: %s", l)
			}
		}
	}
	for _, want := range []string{"character_set_client='utf8mb4', collation_connection=46", "),("} {
		if !strings.Contains(script, want) {
			t.Errorf("the script has no %q:\n%s", want, script)
		}
	}
	tgt, applied := targetServer(t), targetServer(t)
	mariadbScript(t, tgt, script)
	sameRows(t, src, tgt)
	mustPrepl(t, append([]string{"replay", "--target", applied.URL(), "--progress", "0"}, files...)...)
	sameRows(t, applied, tgt)
	if err := verify.Checksums(context.Background(), sandbox.MustOpen(t, applied, ""), sandbox.MustOpen(t, tgt, "")); err != nil {
		t.Fatalf("the script's tables differ from prepl replay's: %v", err)
	}

	// The source as the target: its rc.C has four columns, the first
	// rows five, cut as the applier cuts them.
	mustPrepl(t, append([]string{"replay", "--dry-run", "--print-sql", "--target", src.URL()}, files...)...)
}
