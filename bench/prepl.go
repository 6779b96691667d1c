package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// preplArgs is the prepl command line of a cell: replicate from the live
// source or replay its binlog files, after the snapshot's GTID position.
// threads 0 is --workers 0 (serial). extra comes last, so it overrides.
func preplArgs(cell Cell, sourceURL, targetURL, startGTID string, files, extra []string) []string {
	var a []string
	switch cell.System {
	case PreplReplicate:
		a = []string{"replicate", "--source", sourceURL, "--stop-at-end"}
	case PreplKeepGTID:
		a = []string{"replicate", "--source", sourceURL, "--stop-at-end", "--keep-gtid"}
	case PreplPrefetch:
		a = []string{"replicate", "--source", sourceURL, "--stop-at-end", "--prefetch", "4"}
	default:
		a = []string{"replay"}
	}
	a = append(a, "--target", targetURL, "--start-gtid", startGTID, "--progress", "0")
	if cell.System != Limit {
		mode := cell.Mode
		if cell.Threads == 0 {
			mode = SerialMode
		}
		a = append(a, "--workers", strconv.Itoa(cell.Threads), "--mode", mode)
	}
	a = append(a, extra...)
	if cell.System == PreplReplay || cell.System == Limit {
		a = append(a, files...)
	}
	return a
}

// RunPrepl runs the prepl binary, its output going to logPath, and times
// it from start to exit: connecting, reading the binlog and applying it,
// all that a user waits for. cpu is the process's user + system time.
func RunPrepl(ctx context.Context, bin string, args []string, logPath string) (elapsed, cpu time.Duration, err error) {
	log, err := os.Create(logPath)
	if err != nil {
		return 0, 0, err
	}
	defer log.Close()
	fmt.Fprintf(log, "$ %s %s\n", bin, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err = cmd.Run()
	elapsed = time.Since(start)
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		out, _ := os.ReadFile(logPath)
		return 0, 0, fmt.Errorf("prepl %s: %v; its output (%s) ends:\n%s", args[0], err, logPath, Tail(string(out), 8))
	}
	return elapsed, cpu, nil
}
