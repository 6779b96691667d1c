package main

import (
	"context"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// TestVerifyOnlineUnderLoad: prepl verify --online runs while prepl
// replicate applies a steady load of updates (4 sessions, random rows of
// 2,000, a write a millisecond each) and inserts into the target: it reports the one row damaged on
// the target behind prepl's back, and no row that only lagged. Plain
// verify in the same state is run too, for the record (it may report the
// lag as differences: that is what --online is for).
func TestVerifyOnlineUnderLoad(t *testing.T) {
	t.Parallel() // waits on a load and on replication
	src, tgt := source(t, nil), targetServer(t)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE o", "CREATE TABLE o.t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(40))",
		"CREATE TABLE o.cold (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO o.t SELECT seq, 0, 'x' FROM test.seq_1_to_2000",
		"INSERT INTO o.cold SELECT seq, 'cold' FROM test.seq_1_to_300")
	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4", "--progress", "500ms")
	want := gtidPos(t, db)
	waitFor(t, "the set-up applied", func() bool { return r.status(t).Applied.GTIDPosition == want })

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var writes atomic.Int64
	for s := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(s)))
			for n := 0; ctx.Err() == nil; n++ {
				var err error
				if n%10 == 9 {
					_, err = db.ExecContext(ctx, "INSERT INTO o.t VALUES (?, 0, 'new')", 10000+s*1000000+n)
				} else {
					_, err = db.ExecContext(ctx, "UPDATE o.t SET k = k + 1, c = ? WHERE id = ?", "s"+string(rune('0'+s)), 1+rng.Intn(2000))
				}
				if err != nil && ctx.Err() == nil {
					t.Errorf("load: %v", err)
					return
				}
				writes.Add(1)
				time.Sleep(time.Millisecond) // a steady load, not all the CPU make test has
			}
		}()
	}
	defer func() { stop(); wg.Wait() }()
	waitFor(t, "the load to run", func() bool { return writes.Load() > 500 })

	// Damage a row of the table no load touches, behind prepl's back.
	sandbox.MustExec(t, sandbox.MustOpen(t, tgt, ""), "UPDATE o.cold SET v = 'damaged' WHERE id = 150")

	args := []string{"verify", "--source", src.URL(), "--target", tgt.URL(), "--databases", "o", "--chunk-rows", "100"}
	code, out := prepl(t, append(args, "--online")...)
	t.Logf("verify --online, with %d source writes so far:\n%s", writes.Load(), out)
	if code == 0 {
		t.Fatalf("verify --online found no difference; the damaged row is one:\n%s", out)
	}
	var found []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "o.") {
			found = append(found, l)
		}
	}
	if len(found) != 1 || !strings.Contains(found[0], "o.cold id=150") || !strings.Contains(out, "1 difference(s)") {
		t.Fatalf("verify --online: want exactly the damaged row o.cold id=150, got %d:\n%s", len(found), out)
	}
	code, out = prepl(t, args...)
	t.Logf("plain verify in the same state: exit %d, %d lines naming a row", code, strings.Count(out, "\no."))

	stop()
	wg.Wait()
	sandbox.MustExec(t, sandbox.MustOpen(t, tgt, ""), "UPDATE o.cold SET v = 'cold' WHERE id = 150")
	want = gtidPos(t, db)
	waitFor(t, "the load applied", func() bool { return r.status(t).Applied.GTIDPosition == want })
	sameRows(t, src, tgt)
}
