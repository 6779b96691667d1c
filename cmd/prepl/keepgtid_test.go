package main

import (
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestKeepGTIDForFailover: with --keep-gtid the target's binlog holds the
// source's transactions one for one, under the source's GTIDs, in both
// GTID domains, even with parallel workers and a DDL in the stream.
func TestKeepGTIDForFailover(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 600, 4)
	sandbox.MustExec(t, db, "ALTER TABLE w.log ADD COLUMN extra INT NULL", "UPDATE w.log SET extra = id WHERE id < 10",
		// MyISAM: one GTID each on the target too, prepl's marker kept out of its binlog
		"CREATE TABLE w.my (id INT PRIMARY KEY, v INT) ENGINE=MyISAM", "INSERT INTO w.my VALUES (1, 1), (2, 2)", "UPDATE w.my SET v = v + 1")
	files := binlogFiles(t, src)

	o := sandbox.Defaults()
	o.ServerID, o.Binlog = 2, true
	tgt := sandbox.MustStart(t, o)
	mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--workers", "4", "--keep-gtid", "--progress", "0"}, files...)...)
	sameRows(t, src, tgt)

	tdb := sandbox.MustOpen(t, tgt, "")
	var srcPos, tgtPos, srcState, tgtState string
	db.QueryRow("SELECT @@gtid_binlog_pos, @@gtid_binlog_state").Scan(&srcPos, &srcState)
	tdb.QueryRow("SELECT @@gtid_binlog_pos, @@gtid_binlog_state").Scan(&tgtPos, &tgtState)
	if srcPos != tgtPos {
		t.Fatalf("target gtid_binlog_pos %q, source %q", tgtPos, srcPos)
	}
	// The state lists the last GTID of every (domain, server) pair: no
	// transaction of the target's own server_id may appear.
	if strings.Contains(tgtState, "-2-") {
		t.Fatalf("target binlog holds transactions of its own (gtid_binlog_state %q)", tgtState)
	}
	var srcGTIDs, tgtGTIDs int
	countGTIDs := func(s *sandbox.Server) int {
		n := 0
		d := sandbox.MustOpen(t, s, "")
		defer d.Close()
		for _, f := range binlogFiles(t, s) {
			rows, err := d.Query("SHOW BINLOG EVENTS IN '" + f[strings.LastIndex(f, "/")+1:] + "'")
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			vals := make([]any, len(cols))
			for i := range vals {
				vals[i] = new(any)
			}
			for rows.Next() {
				rows.Scan(vals...)
				if typ, _ := (*vals[2].(*any)).([]byte); string(typ) == "Gtid" {
					n++
				}
			}
			rows.Close()
		}
		return n
	}
	srcGTIDs, tgtGTIDs = countGTIDs(src), countGTIDs(tgt)
	if srcGTIDs != tgtGTIDs {
		t.Fatalf("source binlog has %d transactions, target %d: want one target transaction per source transaction", srcGTIDs, tgtGTIDs)
	}
}
