package bench

import (
	"context"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestDrainPurge leaves InnoDB's purge the delete-marked secondary index
// entries of committed updates, as a run on config D does, and checks
// that drainPurge waits until the history list is empty. It checks no
// timing.
func TestDrainPurge(t *testing.T) {
	srv := sandbox.MustStart(t, sandbox.Defaults())
	db := sandbox.MustOpen(t, srv, "")
	sandbox.MustExec(t, db,
		"CREATE DATABASE sb",
		"CREATE TABLE sb.t (id INT PRIMARY KEY, k INT NOT NULL, KEY k_1 (k))",
		"INSERT INTO sb.t SELECT seq, seq FROM mysql.seq_1_to_20000",
		"UPDATE sb.t SET k = k + 1",
		"UPDATE sb.t SET k = k + 1")
	ctx := context.Background()
	reads, millis, err := drainPurge(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if reads < 0 || millis < 0 {
		t.Errorf("drainPurge: %d reads, %d ms: want 0 or more", reads, millis)
	}
	var history int64
	if err := db.QueryRowContext(ctx, "SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'").Scan(&history); err != nil {
		t.Fatal(err)
	}
	if history != 0 && millis < purgeTimeout.Milliseconds() {
		t.Errorf("history list length %d after drainPurge returned in %d ms", history, millis)
	}
}
