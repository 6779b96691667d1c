package run

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// galeraAll skips a Galera test unless PREPL_GALERA=all (make
// test-galera): each starts a three-node cluster, and make test, near its
// 10 minutes on a 2-core machine, runs only TestGaleraNodeKilled (a run
// into the cluster, the node prepl writes to killed, every node equal).
func galeraAll(t *testing.T) {
	t.Helper()
	if os.Getenv("PREPL_GALERA") != "all" {
		t.Skip("a three-node cluster of its own: make test-galera (PREPL_GALERA=all) runs it")
	}
}

// galeraKills is how many times TestGaleraNodeKilled kills the node prepl
// writes to: PREPL_GALERA_KILLS, 2 by default (make test), 10 in make
// test-galera, as issue 34 asks. Each kill costs a prepl restart and a
// node rejoin (IST): 10 kills took 2m04s, the whole test 150 s, on this
// 2-core machine when quiet; 3m54s and 270 s while other tests ran.
func galeraKills(t *testing.T) int {
	v := os.Getenv("PREPL_GALERA_KILLS")
	if v == "" {
		return 2
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("PREPL_GALERA_KILLS=%q: want a number of kills, 1 or more", v)
	}
	return n
}

// galeraWorkers is the workers of the runs into the cluster.
const galeraWorkers = 4

// TestGaleraReplicate: prepl replicates with several workers into one node
// of a three-node Galera cluster; every node ends equal to the source,
// every source transaction applied once.
func TestGaleraReplicate(t *testing.T) {
	galeraAll(t)
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

// TestGaleraNodeKilled: the node prepl writes to is killed mid-run
// (SIGKILL), galeraKills times. prepl stops (its reconnect timeout ends),
// is started again on a surviving node with the same channel, and
// resumes from the position stored in the cluster; the killed node
// rejoins. At the end every node equals the source, and every source
// transaction was applied once (the channel's applied counter, and the
// source's counters in w.hot, which a transaction applied twice would
// move).
func TestGaleraNodeKilled(t *testing.T) {
	galeraKills := galeraKills(t)
	n := 1000 + galeraKills*500
	src := startWorkload(t, n)
	c := sandbox.MustStartCluster(t, 3, sandbox.Defaults())
	ctx := context.Background()
	node := 0
	start := time.Now()
	for kill := range galeraKills {
		db := sandbox.MustOpen(t, c.Nodes[node], "")
		p := startHelper(t, helperArgs{Source: src.URL(), Target: c.Nodes[node].URL(), Workers: galeraWorkers, Reconnect: 2})
		more := 50 + rand.Int64N(450) // a random moment of the run
		from := applied(db)
		until(t, p, "prepl to apply more transactions", func() bool { return applied(db) >= from+more })
		at := applied(db)
		if at >= int64(n) {
			t.Fatalf("prepl applied all %d transactions before kill %d: make the workload bigger", n, kill+1)
		}
		c.Kill(node)
		code := p.wait(t, "prepl after its node was killed")
		t.Logf("kill %d of node %d at %d applied: prepl exited %d: %s", kill+1, node+1, at, code, lastLine(p.out.String()))
		if code == 0 {
			t.Fatalf("prepl exited 0 after its node was killed mid-run\n%s", p.out)
		}
		next := (node + 1) % len(c.Nodes)
		if err := c.WaitSynced(ctx, next, len(c.Nodes)-1); err != nil {
			t.Fatal(err)
		}
		if err := c.Restart(ctx, node); err != nil {
			t.Fatal(err)
		}
		node = next
	}
	p := startHelper(t, helperArgs{Source: src.URL(), Target: c.Nodes[node].URL(), Workers: galeraWorkers, Reconnect: 2})
	if code := p.wait(t, "the last prepl"); code != 0 {
		t.Fatalf("the last prepl exited %d\n%s", code, p.out)
	}
	t.Logf("%d kills, each node killed and rejoined, in %s", galeraKills, time.Since(start).Round(time.Second))
	sandbox.MustSyncWait(t, c)
	for i, node := range c.Nodes {
		t.Logf("node %d", i+1)
		checkEnd(t, src, node, sandbox.MustOpen(t, node, ""))
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// TestGaleraWriteSetLimits: a node that refuses write sets of more than
// 60 rows (wsrep_max_ws_rows), fed units of up to 500 transactions of two
// rows each: prepl reads the limit at connect and keeps each unit under
// it, and every node ends equal to the source.
func TestGaleraWriteSetLimits(t *testing.T) {
	galeraAll(t)
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
	galeraAll(t)
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
	galeraAll(t)
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
	galeraAll(t)
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
	time.Sleep(3 * time.Second)
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
