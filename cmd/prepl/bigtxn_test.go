package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestTransactionOverMaxTxnSize: a transaction larger than --max-txn-size
// is refused before anything of it is applied, with an error naming its
// GTID, place, size and the ways on; the transactions before it are
// applied. Applied by hand and left out (replay --skip-gtid, or prepl skip
// before replicate), the rest of the binlog follows to target = source.
func TestTransactionOverMaxTxnSize(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE b", "CREATE TABLE b.t (id INT PRIMARY KEY, c VARCHAR(200))")
	for i := 0; i < 2000; i += 250 { // transactions of about 55 KB each
		sandbox.MustExec(t, db, fmt.Sprintf("INSERT INTO b.t SELECT seq, REPEAT('a', 200) FROM b.seq_%d_to_%d", i+1, i+250))
	}
	sandbox.MustExec(t, db, "INSERT INTO b.t VALUES (5000, 'before')")
	sandbox.MustExec(t, db, "UPDATE b.t SET c = REPEAT('b', 200) WHERE id <= 2000") // about 800 KB of rows events
	var big string
	db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&big)
	sandbox.MustExec(t, db, "INSERT INTO b.t VALUES (5001, 'after')")
	files := binlogFiles(t, src)

	for _, way := range []string{"replay", "replicate"} {
		t.Run(way, func(t *testing.T) {
			tgt := targetServer(t)
			args := []string{"replay", "--target", tgt.URL(), "--progress", "0", "--max-txn-size", "100KiB"}
			if way == "replicate" {
				args = []string{"replicate", "--source", src.URL(), "--target", tgt.URL(), "--stop-at-end", "--progress", "0", "--max-txn-size", "100KiB"}
			} else {
				args = append(args, files...)
			}
			code, out := prepl(t, args...)
			if code != 2 || !strings.Contains(out, "(in transaction "+big+")") || !strings.Contains(out, "larger than --max-txn-size 102400") ||
				!strings.Contains(out, "--skip-gtid "+big) || !strings.Contains(out, "mariadb-binlog --start-position=") {
				t.Fatalf("exit %d, want 2 naming %s, the cap and the ways on:\n%s", code, big, out)
			}
			tdb := sandbox.MustOpen(t, tgt, "")
			var before, changed int
			tdb.QueryRow("SELECT COUNT(*) FROM b.t WHERE id = 5000").Scan(&before)
			tdb.QueryRow("SELECT COUNT(*) FROM b.t WHERE c LIKE 'bbbb%'").Scan(&changed)
			if before != 1 || changed != 0 {
				t.Fatalf("after the refusal: %d of the row before it (want 1), %d rows of it (want 0)", before, changed)
			}
			// The way on: the transaction applied by hand, then left out.
			sandbox.MustExec(t, tdb, "UPDATE b.t SET c = REPEAT('b', 200) WHERE id <= 2000")
			if way == "replicate" {
				mustPrepl(t, "skip", "--target", tgt.URL(), "--gtid", big)
			} else {
				args = append([]string{"replay", "--skip-gtid", big}, args[1:]...)
			}
			mustPrepl(t, args...)
			sameRows(t, src, tgt)
		})
	}
}
