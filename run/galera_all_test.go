//go:build galera

// The Galera tests that make test leaves out: each starts a three-node
// cluster of its own (about 20 s each on a 2-core machine), and make test
// runs only TestGaleraNodeKilled (galera_test.go), which covers a run into
// the cluster, the node prepl writes to killed, and every node equal to the
// source. make test-galera builds these with -tags galera and runs them
// all, with issue 34's 10 kills.

package run

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// TestGaleraReplicate: prepl replicates with several workers into one node
// of a three-node Galera cluster; every node ends equal to the source,
// every source transaction applied once.
func TestGaleraReplicate(t *testing.T) {
	const n = 1000
	src := startWorkload(t, n)
	c := sandbox.MustStartCluster(t, 3, sandbox.Defaults())
	p := startHelper(t, helperArgs{Source: src.URL(), Target: c.Nodes[0].URL(), Workers: galeraWorkers})
	if code := p.wait(t, "prepl into node 1"); code != 0 {
		t.Fatalf("prepl exited %d\n%s", code, p.out)
	}
	sandbox.MustSyncWait(t, c)
	for i, node := range c.Nodes {
		t.Logf("node %d", i+1)
		checkEnd(t, src, node, sandbox.MustOpen(t, node, ""))
	}
}

// TestGaleraWriteSetLimits: a node that refuses write sets of more than
// 60 rows (wsrep_max_ws_rows), fed units of up to 500 transactions of two
// rows each: prepl reads the limit at connect and keeps each unit under
// it, and every node ends equal to the source.
func TestGaleraWriteSetLimits(t *testing.T) {
	const n = 600
	src := startWorkload(t, n)
	c := sandbox.MustStartCluster(t, 3, sandbox.Defaults())
	sandbox.MustExec(t, sandbox.MustOpen(t, c.Nodes[0], ""), "SET GLOBAL wsrep_max_ws_rows = 60")
	p := startHelper(t, helperArgs{Source: src.URL(), Target: c.Nodes[0].URL(), Workers: 2, UnitTxns: 500})
	if code := p.wait(t, "prepl into node 1"); code != 0 {
		t.Fatalf("prepl exited %d\n%s", code, p.out)
	}
	if !strings.Contains(p.out.String(), "commit units sized to the target's write-set limits") || !strings.Contains(p.out.String(), "unit_rows=58") {
		t.Errorf("prepl did not say it sized its units to wsrep_max_ws_rows=60:\n%s", p.out)
	}
	sandbox.MustSyncWait(t, c)
	for _, node := range c.Nodes {
		checkEnd(t, src, node, sandbox.MustOpen(t, node, ""))
	}
}

// TestGaleraRefusesMyISAM: an XA transaction goes into the cluster like
// any other (prepl applies its rows at XA COMMIT, with no XA statement);
// a change to a MyISAM table, which Galera would leave on one node,
// stops prepl before it is applied, with a message that names the table
// and what to do, the transactions before it committed.
func TestGaleraRefusesMyISAM(t *testing.T) {
	src := startWorkload(t, 10)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, "CREATE TABLE w.m (id INT PRIMARY KEY) ENGINE=MyISAM",
		"XA START 'x1'", "INSERT INTO w.log VALUES (100, 1)", "XA END 'x1'", "XA PREPARE 'x1'", "XA COMMIT 'x1'",
		"INSERT INTO w.m VALUES (1)", "INSERT INTO w.log VALUES (101, 1)")
	c := sandbox.MustStartCluster(t, 3, sandbox.Defaults())
	p := startHelper(t, helperArgs{Source: src.URL(), Target: c.Nodes[0].URL(), Workers: 2})
	if code := p.wait(t, "prepl into node 1"); code != 2 {
		t.Fatalf("prepl exited %d, want 2 (refused)\n%s", code, p.out)
	}
	out := p.out.String()
	for _, want := range []string{"table w.m is MYISAM on the target", "ALTER TABLE w.m ENGINE=InnoDB", "--exclude w.m"} {
		if !strings.Contains(out, want) {
			t.Errorf("prepl's refusal lacks %q:\n%s", want, out)
		}
	}
	sandbox.MustSyncWait(t, c)
	for i, node := range c.Nodes {
		db := sandbox.MustOpen(t, node, "")
		var xa, m, after int
		db.QueryRow("SELECT COUNT(*) FROM w.log WHERE id = 100").Scan(&xa)
		db.QueryRow("SELECT COUNT(*) FROM w.m").Scan(&m)
		db.QueryRow("SELECT COUNT(*) FROM w.log WHERE id = 101").Scan(&after)
		if xa != 1 || m != 0 || after != 0 {
			t.Errorf("node %d: the XA row %d times (want 1), MyISAM rows %d and the row after %d (want 0)", i+1, xa, m, after)
		}
	}
}

// TestGaleraFenceAcrossNodes: GET_LOCK is local to a node, so a second
// prepl on another node of the cluster takes "the" channel lock while the
// first still holds it on its own node, and claims the channel: it raises
// the epoch, a write that the cluster replicates. The first, on its next
// position write, reads the raised epoch on its own node (or has its
// transaction aborted by the raise's applier, which then retries and
// reads it): it stops, fenced (exit 3). The second applies the rest;
// every node ends equal to the source, every transaction applied once.
func TestGaleraFenceAcrossNodes(t *testing.T) {
	const n = 2000
	src := startWorkload(t, n)
	c := sandbox.MustStartCluster(t, 3, sandbox.Defaults())
	db1 := sandbox.MustOpen(t, c.Nodes[0], "")
	first := startHelper(t, helperArgs{Source: src.URL(), Target: c.Nodes[0].URL(), Standby: true, Workers: galeraWorkers})
	until(t, first, "the first prepl to apply 200 transactions", func() bool { return applied(db1) >= 200 })
	before := epoch(db1)
	second := startHelper(t, helperArgs{Source: src.URL(), Target: c.Nodes[1].URL(), Standby: true, Workers: galeraWorkers})
	if code := first.wait(t, "the first prepl"); code != 3 {
		t.Fatalf("the first prepl exited %d once another claimed the channel on another node, want 3 (fenced)\n%s", code, first.out)
	}
	if code := second.wait(t, "the second prepl"); code != 0 {
		t.Fatalf("the second prepl exited %d\n%s", code, second.out)
	}
	if after := epoch(db1); after <= before {
		t.Errorf("the epoch on node 1 is %d, was %d: the second claim did not raise it", after, before)
	}
	sandbox.MustSyncWait(t, c)
	for _, node := range c.Nodes {
		checkEnd(t, src, node, sandbox.MustOpen(t, node, ""))
	}
}

// TestGaleraNodePartitioned: the node prepl writes to is cut off from the
// other two (gmcast.isolate) mid-run, for a few seconds: it leaves the
// primary component and answers 1047 (not prepared) to every statement,
// then rejoins. prepl rides through (a node out of the cluster is retried
// like a lost connection) and every node ends equal to the source.
func TestGaleraNodePartitioned(t *testing.T) {
	const n = 2000
	src := startWorkload(t, n)
	c := sandbox.MustStartCluster(t, 3, sandbox.Defaults())
	db := sandbox.MustOpen(t, c.Nodes[0], "")
	p := startHelper(t, helperArgs{Source: src.URL(), Target: c.Nodes[0].URL(), Workers: galeraWorkers})
	until(t, p, "prepl to apply 300 transactions", func() bool { return applied(db) >= 300 })
	at := applied(db)
	sandbox.MustExec(t, db, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'")
	until(t, p, "node 1 to leave the primary component", func() bool {
		var k, v string
		db.QueryRow("SHOW STATUS LIKE 'wsrep_cluster_status'").Scan(&k, &v)
		return v == "non-Primary"
	})
	time.Sleep(3 * time.Second) // the partition's length: a fault held, not a wait for anything
	sandbox.MustExec(t, db, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'")
	if err := c.WaitSynced(context.Background(), 0, 3); err != nil {
		t.Fatal(err)
	}
	t.Logf("partitioned at %d applied", at)
	if code := p.wait(t, "prepl"); code != 0 {
		t.Fatalf("prepl exited %d after its node was partitioned and came back\n%s", code, p.out)
	}
	if at >= n {
		t.Fatalf("prepl applied all %d transactions before the partition: make the workload bigger", n)
	}
	sandbox.MustSyncWait(t, c)
	for _, node := range c.Nodes {
		checkEnd(t, src, node, sandbox.MustOpen(t, node, ""))
	}
}
