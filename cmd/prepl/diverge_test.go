package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestDivergenceStopsTheUnit: when the target lacks a row the source
// updates, the compacted statement's row count surprises, the unit is
// applied again in source order, and prepl stops naming the transaction;
// nothing of the unit is committed and the position stays before it.
func TestDivergenceStopsTheUnit(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO d.t VALUES (1,0),(2,0),(3,0),(4,0),(5,0),(6,0)")
	tgt := targetServer(t)
	files := binlogFiles(t, src)
	mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, files...)...)

	tdb := sandbox.MustOpen(t, tgt, "")
	sandbox.MustExec(t, tdb, "DELETE FROM d.t WHERE id = 5") // the target diverges
	sandbox.MustExec(t, db, "UPDATE d.t SET v = 1 WHERE id = 1", "UPDATE d.t SET v = 1 WHERE id = 5", "UPDATE d.t SET v = 1 WHERE id = 2")
	var before string
	tdb.QueryRow("SELECT gtid_pos FROM prepl.position WHERE channel = 'replay'").Scan(&before)

	files = binlogFiles(t, src)
	code, out := prepl(t, append([]string{"replay", "--target", tgt.URL(), "--progress", "0", "--commit-unit", "10"}, files...)...)
	if code != 2 || !strings.Contains(out, "diverged") {
		t.Fatalf("exit %d, want 2 with a divergence error:\n%s", code, out)
	}
	// The update of row 5 is the second of the three: name it.
	var last string
	db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&last)
	parts := strings.Split(last, "-")
	n, _ := strconv.Atoi(parts[2])
	want := fmt.Sprintf("%s-%s-%d", parts[0], parts[1], n-1)
	if !strings.Contains(out, want) {
		t.Fatalf("the error does not name GTID %s:\n%s", want, out)
	}
	var v1 int
	tdb.QueryRow("SELECT v FROM d.t WHERE id = 1").Scan(&v1)
	var after string
	tdb.QueryRow("SELECT gtid_pos FROM prepl.position WHERE channel = 'replay'").Scan(&after)
	if v1 != 0 || after != before {
		t.Fatalf("part of the unit was committed: row 1 v=%d, position %q -> %q", v1, before, after)
	}
}
