package main

import (
	"database/sql"
	"regexp"
	"strconv"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestWorkersOpenedAsUsed: --workers 256 is a ceiling, and a worker's
// connection is opened when the controller first lets it run a unit, not
// at start. The same binlog is replayed with --workers 0 and with
// --workers 256 onto two targets; the connections each run opened on its
// target (the server's Connections counter, read on a connection the test
// holds throughout) differ by no more than the units in flight the
// controller allowed at its peak (from its debug log), plus one for a
// next-to-commit unit started over the limit and one for the lock-wait
// monitor's queries: never the 255 more that opening every worker would.
func TestWorkersOpenedAsUsed(t *testing.T) {
	src := source(t, nil)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL)",
		"BEGIN NOT ATOMIC FOR i IN 1..3000 DO INSERT INTO d.t VALUES (i, i); END FOR; END")
	files := binlogFiles(t, src)
	opened := func(workers string) (conns int64, out string) {
		tgt := targetServer(t)
		held, err := sandbox.MustOpen(t, tgt, "").Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		before := connections(t, held)
		out = mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--workers", workers, "--commit-unit", "1",
			"--progress", "0", "--log-level", "debug"}, files...)...)
		sameRows(t, src, tgt)
		return connections(t, held) - before, out
	}
	serial, _ := opened("0")
	many, out := opened("256")
	peak := 1
	for _, m := range regexp.MustCompile(`msg="units in flight" from=(\d+) to=(\d+)`).FindAllStringSubmatch(out, -1) {
		for _, s := range m[1:] {
			n, _ := strconv.Atoi(s)
			peak = max(peak, n)
		}
	}
	if many-serial > int64(peak+1) {
		t.Errorf("--workers 256 opened %d connections, --workers 0 %d: %d more, want at most %d (%d units in flight at the peak, "+
			"one over the limit for the next to commit, one for the lock-wait monitor, one already in --workers 0)\n%s",
			many, serial, many-serial, peak+1, peak, out)
	}
	t.Logf("connections opened: --workers 0: %d, --workers 256: %d; units in flight at most %d", serial, many, peak)
}

// connections is the server's count of connection attempts so far.
func connections(t *testing.T, c *sql.Conn) int64 {
	t.Helper()
	var name string
	var n int64
	if err := c.QueryRowContext(t.Context(), "SHOW GLOBAL STATUS LIKE 'Connections'").Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
