package sandbox

import (
	"context"
	"testing"
)

// TestGaleraCluster: three nodes come up Synced; a row written on one is
// on the others; a node killed leaves a cluster of two that still takes
// writes, and restarted it catches up (incremental transfer) and has them.
func TestGaleraCluster(t *testing.T) {
	c := MustStartCluster(t, 3, Defaults())
	db0 := MustOpen(t, c.Nodes[0], "")
	MustExec(t, db0, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1)")
	for i := range c.Nodes {
		if err := c.SyncWait(context.Background(), i); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := MustOpen(t, c.Nodes[i], "").QueryRow("SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 1 {
			t.Fatalf("node %d: %d rows (%v), want 1", i+1, n, err)
		}
	}
	c.Kill(2)
	if err := c.WaitSynced(context.Background(), 0, 2); err != nil {
		t.Fatal(err)
	}
	MustExec(t, db0, "INSERT INTO d.t VALUES (2)")
	if err := c.Restart(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := MustOpen(t, c.Nodes[2], "").QueryRow("SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("restarted node: %d rows (%v), want 2", n, err)
	}
}
