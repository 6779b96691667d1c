package main

import (
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestDDLExactlyOnceDefaultDatabase: DDL whose digest reads only the
// tables, schemas or routines it names, by unqualified names resolved in
// the statement's default database and across schemas (a swap of two
// tables, a foreign key to another schema, a table moved to another
// schema, a schema dropped), is run exactly once across a crash on either
// side of it: a digest read in the wrong schema would see no change and
// run a swap twice.
func TestDDLExactlyOnceDefaultDatabase(t *testing.T) {
	bin := preplBinary(t)
	src := source(t, nil)
	sandbox.MustExec(t, sandbox.MustOpen(t, src, ""),
		"CREATE DATABASE d", "CREATE DATABASE e", "CREATE DATABASE f",
		"CREATE TABLE d.a (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB",
		"CREATE TABLE d.b (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB",
		"INSERT INTO d.a VALUES (1, 'was a')", "INSERT INTO d.b VALUES (2, 'was b')",
		"CREATE TABLE e.p (id INT PRIMARY KEY) ENGINE=InnoDB", "INSERT INTO e.p VALUES (1), (2)",
		"CREATE TABLE f.z (id INT PRIMARY KEY) ENGINE=InnoDB")
	db := sandbox.MustOpen(t, src, "d")
	db.SetMaxOpenConns(1)
	gtids := runDDLSteps(t, db, [][]string{
		{"RENAME TABLE a TO tmp, b TO a, tmp TO b", "INSERT INTO a VALUES (3, 'after swap')"},
		{"CREATE TABLE c (id INT PRIMARY KEY, FOREIGN KEY (id) REFERENCES e.p (id) ON DELETE CASCADE) ENGINE=InnoDB", "INSERT INTO c VALUES (1), (2)"},
		{"RENAME TABLE b TO e.b", "INSERT INTO e.b VALUES (4, 'moved')"},
		{"CREATE PROCEDURE pr() SELECT 1", "DELETE FROM e.p WHERE id = 2"},
		{"DROP DATABASE f", "INSERT INTO a VALUES (5, 'after drop')"},
	})
	files := binlogFiles(t, src)
	for _, c := range []struct {
		point string
		flags []string
	}{
		{"before-ddl", []string{"--workers", "0"}},
		{"after-ddl", []string{"--workers", "4"}},
	} {
		t.Run(c.point, func(t *testing.T) {
			tgt := targetServer(t)
			args := append(append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, c.flags...), files...)
			out := crashAtEachDDL(t, bin, args, c.point, gtids)
			if c.point == "after-ddl" && strings.Count(out, "DDL not run again") != 1 {
				t.Errorf("want one DDL not run again in the last run:\n%s", out)
			}
			sameRows(t, src, tgt)
		})
	}
}
