// Command prepl-demo is `make demo`: it starts a sandbox source and
// targets, runs a sysbench workload on the source, replicates it with
// prepl serially and in parallel, verifies target = source and prints the
// times.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/prepl/prepl/bench"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/verify"
)

func main() {
	preplBin := flag.String("prepl", "bin/prepl", "prepl binary")
	rows := flag.Int("rows", 20000, "rows in the sysbench table")
	seconds := flag.Int("seconds", 15, "seconds of sysbench oltp_read_write on the source")
	threads := flag.Int("threads", 16, "sysbench threads on the source")
	flag.Parse()
	if err := run(context.Background(), *preplBin, *rows, *seconds, *threads); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin string, rows, seconds, threads int) error {
	fmt.Println("starting a sandbox source (binlog ROW, GTID, group commit wait 12/10ms)...")
	so := sandbox.Defaults()
	so.Binlog = true
	so.SyncBinlog, so.FlushLogAtTrxCommit = 0, 2
	so.CommitWaitCount, so.CommitWaitUsec = 12, 10000
	src, err := sandbox.Start(ctx, so)
	if err != nil {
		return err
	}
	defer src.Close()
	db, err := src.Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	sb := bench.Sysbench{Server: src, TableSize: rows}
	fmt.Printf("sysbench oltp_read_write: prepare %d rows, then %ds with %d threads...\n", rows, seconds, threads)
	if err := sb.Prepare(ctx, "oltp_read_write"); err != nil {
		return err
	}
	if err := sb.Run(ctx, "oltp_read_write", bench.RunSpec{Threads: threads, Seconds: seconds}); err != nil {
		return err
	}
	var commits, groups int64
	var name string
	db.QueryRow("SHOW GLOBAL STATUS LIKE 'Binlog_commits'").Scan(&name, &commits)
	db.QueryRow("SHOW GLOBAL STATUS LIKE 'Binlog_group_commits'").Scan(&name, &groups)
	fmt.Printf("source binlog: %d transactions in %d group commits (%.1f per group)\n\n", commits, groups, float64(commits)/float64(max(groups, 1)))

	fmt.Printf("%-34s %10s %12s  %s\n", "run", "seconds", "txn/s", "target = source")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"prepl serial (--workers 0)", []string{"--workers", "0"}},
		{"prepl writeset, 4 workers", []string{"--workers", "4", "--mode", "writeset"}},
		{"prepl commit-order, 4 workers", []string{"--workers", "4", "--mode", "commit-order"}},
	} {
		to := sandbox.Defaults()
		to.ServerID = 2
		to.FlushLogAtTrxCommit = 1
		tgt, err := sandbox.Start(ctx, to)
		if err != nil {
			return err
		}
		start := time.Now()
		args := append([]string{"replicate", "--source", src.URL(), "--target", tgt.URL(), "--stop-at-end", "--progress", "0"}, c.args...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		el := time.Since(start)
		if err != nil {
			tgt.Close()
			return fmt.Errorf("%s: %v\n%s", c.name, err, out)
		}
		tdb, _ := tgt.Open("")
		verr := verify.Rows(ctx, db, tdb)
		tdb.Close()
		tgt.Close()
		ok := "yes"
		if verr != nil {
			ok = "NO: " + verr.Error()
		}
		fmt.Printf("%-34s %10.2f %12.0f  %s\n", c.name, el.Seconds(), float64(commits)/el.Seconds(), ok)
		if verr != nil {
			return verr
		}
	}
	fmt.Println("\n(target: no binlog, innodb_flush_log_at_trx_commit=1; times include connecting and catching up)")
	return nil
}
