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
