package bench

import (
	"strings"
	"testing"
	"time"
)

func TestETA(t *testing.T) {
	for _, c := range []struct {
		spent       time.Duration
		done, total int
		want        string
	}{
		{0, 0, 10, "?"},
		{10 * time.Second, 1, 10, "1m30s"},
		{time.Hour, 10, 40, "3h00m"},
		{5 * time.Second, 5, 5, "0s"},
	} {
		if got := eta(c.spent, c.done, c.total); got != c.want {
			t.Errorf("eta(%s, %d, %d) = %q, want %q", c.spent, c.done, c.total, got, c.want)
		}
	}
}

func TestProgressLines(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, 4)
	now := p.start
	p.now = func() time.Time { return now }
	r := plannedRun{Cell{"oltp", "A", MariaDB, "optimistic", 4}, 2}
	p.begin(r, 3)
	now = now.Add(20 * time.Second)
	p.end(Result{Cell: r.Cell, Seconds: 2, Txns: 1000, Verified: true}, 20*time.Second)
	p.begin(r, 3)
	p.end(Result{Cell: r.Cell, Err: "replica SQL thread stopped"}, 10*time.Second)
	want := "bench 0s  [1/4, ETA ?] oltp/A MariaDB optimistic threads=4, repeat 2/3\n" +
		"      2.00 s, 500 txn/s, target = source\n" +
		"bench 20s  [2/4, ETA 1m00s] oltp/A MariaDB optimistic threads=4, repeat 2/3\n" +
		"      FAILED: replica SQL thread stopped\n"
	if b.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", b.String(), want)
	}
}
