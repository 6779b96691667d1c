package main

import (
	"context"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// appliedOn returns a count of the transactions a MySQL target has
// applied: the sum of the applied counters of a channel's position rows
// (one per slot in modes schema and domain), or -1.
func appliedOn(t *testing.T, tgt *sandbox.Server, channel string) func() int64 {
	return func() int64 {
		db := sandbox.MustOpen(t, tgt, "")
		var n int64 = -1
		db.QueryRow("SELECT COALESCE(SUM(applied), -1) FROM prepl.position WHERE channel = ?", channel).Scan(&n)
		db.Close()
		return n
	}
}

// preplProc is a prepl process a test started.
type preplProc struct {
	cmd    *exec.Cmd
	out    *strings.Builder
	exited chan error
}

// startUntil starts prepl and waits until applied (a count of the
// transactions the target has applied) reaches threshold, then calls at
// with prepl still running. It
// reports whether prepl finished on its own first (then at is not called).
func startUntil(t *testing.T, bin string, args []string, applied func() int64, threshold int64, at func(*preplProc)) bool {
	t.Helper()
	r := &preplProc{cmd: exec.Command(bin, args...), out: &strings.Builder{}, exited: make(chan error, 1)}
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case err := <-r.exited:
			if err != nil {
				t.Fatalf("prepl failed before reaching %d transactions: %v\n%s", threshold, err, r.out.String())
			}
			return true
		case <-deadline:
			r.cmd.Process.Kill()
			t.Fatalf("prepl made no progress to %d transactions in 2 minutes\n%s", threshold, r.out.String())
		case <-tick.C:
			if applied() >= threshold {
				at(r)
				return false
			}
		}
	}
}

// killAt runs prepl until threshold transactions are applied, then kills
// it with SIGKILL; it reports whether prepl finished on its own first.
func killAt(t *testing.T, bin string, args []string, applied func() int64, threshold int64) bool {
	return startUntil(t, bin, args, applied, threshold, func(r *preplProc) {
		r.cmd.Process.Signal(syscall.SIGKILL)
		<-r.exited
	})
}

func TestKillNineAndResume(t *testing.T) {
	t.Parallel() // it waits on kills, restarts and stalls: let it overlap
	bin := preplBinary(t)
	src := source(t, func(o *sandbox.Options) { o.CommitWaitCount, o.CommitWaitUsec = 4, 2000 })
	db := sandbox.MustOpen(t, src, "")
	const total = 3000
	setupEnd := counterWorkload(t, db, total, 8)
	files := binlogFiles(t, src)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	t.Logf("random kill points; source has %d workload transactions", total)

	cases := []struct {
		name  string
		kills int
		args  func(tgt *sandbox.Server) []string
	}{
		// Commit units vary: a kill can land inside a unit of many source
		// transactions as well as between single ones.
		{"replay-serial", 5, func(tgt *sandbox.Server) []string {
			return append([]string{"replay", "--target", tgt.URL(), "--workers", "0", "--commit-unit", "20", "--progress", "0"}, files...)
		}},
		{"replay-writeset", 10, func(tgt *sandbox.Server) []string {
			return append([]string{"replay", "--target", tgt.URL(), "--workers", "4", "--commit-unit", "1", "--progress", "0"}, files...)
		}},
		{"replay-optimistic", 10, func(tgt *sandbox.Server) []string {
			return append([]string{"replay", "--target", tgt.URL(), "--workers", "8", "--mode", "optimistic", "--commit-unit", "4", "--progress", "0"}, files...)
		}},
		{"replay-domain", 10, func(tgt *sandbox.Server) []string {
			return append([]string{"replay", "--target", tgt.URL(), "--workers", "8", "--mode", "domain", "--commit-unit", "8", "--progress", "0"}, files...)
		}},
		{"replicate-writeset", 10, func(tgt *sandbox.Server) []string {
			return []string{"replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4", "--commit-unit", "5", "--stop-at-end", "--progress", "0"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tgt := targetServer(t)
			channel := "default"
			if strings.HasPrefix(c.name, "replay") {
				channel = "replay"
			}
			if strings.Contains(c.name, "domain") {
				// The setup, in domain 0, first: domain 1 depends on it.
				mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--stop-gtid", setupEnd, "--progress", "0"}, files...)...)
			}
			var threshold int64
			kills := 0
			for kills < c.kills {
				threshold += 1 + rng.Int63n(total/int64(2*c.kills))
				if killAt(t, bin, c.args(tgt), appliedOn(t, tgt, channel), threshold) {
					break
				}
				kills++
			}
			if kills < c.kills {
				t.Fatalf("prepl finished after %d kills, want %d: the workload is too small to kill it at random points", kills, c.kills)
			}
			if code, out := runBin(bin, c.args(tgt)); code != 0 {
				t.Fatalf("final run: exit %d\n%s", code, out)
			}
			sameRows(t, src, tgt)
			if strings.Contains(c.name, "domain") {
				// Both GTID domains committed on rows of their own.
				db := sandbox.MustOpen(t, tgt, "")
				var n int
				db.QueryRow("SELECT COUNT(*) FROM prepl.position WHERE channel = ? AND slot LIKE 'domain:%'", channel).Scan(&n)
				db.Close()
				if n != 2 {
					t.Fatalf("%d domain position rows, want 2", n)
				}
			}
		})
	}
}

func runBin(bin string, args []string) (int, string) { return runBinEnv(bin, nil, args) }

// runBinEnv runs prepl with extra environment variables; a process killed
// by a signal exits -1.
func runBinEnv(bin string, env []string, args []string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		return -1, err.Error() + string(out)
	}
	return 0, string(out)
}

// TestTargetKilledMidRun kills the target server while prepl applies to
// it, and starts it again: prepl reconnects and finishes (or stops with an
// error that names the target), and a run after it ends with target =
// source.
func TestTargetKilledMidRun(t *testing.T) {
	t.Parallel() // it waits on kills, restarts and stalls: let it overlap
	bin := preplBinary(t)
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	const total = 3000
	counterWorkload(t, db, total, 8)
	files := binlogFiles(t, src)
	tgt := targetServer(t)
	args := append([]string{"replay", "--target", tgt.URL(), "--workers", "4", "--commit-unit", "5",
		"--progress", "0", "--reconnect-timeout", "2m"}, files...)

	var r *preplProc
	if startUntil(t, bin, args, appliedOn(t, tgt, "replay"), total/5, func(x *preplProc) { r = x; tgt.Kill() }) {
		t.Fatal("prepl ended before the target could be killed: make the workload bigger")
	}
	if err := tgt.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.exited:
		if err != nil {
			// Allowed: a clear error that says the target is the problem.
			if !strings.Contains(r.out.String(), "target") {
				t.Fatalf("prepl failed without naming the target: %v\n%s", err, r.out.String())
			}
			t.Logf("prepl stopped: %v", err)
		} else if !strings.Contains(r.out.String(), "reconnected") {
			t.Fatalf("prepl finished but never said it reconnected:\n%s", r.out.String())
		}
	case <-time.After(3 * time.Minute):
		r.cmd.Process.Kill()
		t.Fatalf("prepl hung after the target restarted:\n%s", r.out.String())
	}
	args[2] = tgt.URL() // the restart may have moved it to another port
	if code, out := runBin(bin, args); code != 0 {
		t.Fatalf("run after the restart: exit %d\n%s", code, out)
	}
	sameRows(t, src, tgt)
}
