//go:build soak

package main

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/internal/faultproxy"
	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/sandbox"
)

// TestSoak runs prepl replicate for SOAK_TIME (default 30m) against a
// source under steady sysbench load (oltp_write_only at SOAK_RATE
// transactions per second, default 200), through fault proxies to the
// source and the target, and injects a fault at random every 5 to 25
// seconds: source connections cut, stalled or refused for a while, one
// byte of the stream corrupted, the target killed and restarted, prepl
// killed with SIGKILL and restarted. It samples prepl's RSS and lag every
// second, then stops the load, waits for prepl to catch up and compares
// the target with the source. The figures go to the test log and to
// SOAK_OUT (default soak-out/soak.md). Run it with `make soak`.
func TestSoak(t *testing.T) {
	soak := 30 * time.Minute
	if v := os.Getenv("SOAK_TIME"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SOAK_TIME %q: %v", v, err)
		}
		soak = d
	}
	rate := 200
	if v := os.Getenv("SOAK_RATE"); v != "" {
		rate, _ = strconv.Atoi(v)
	}
	outPath := os.Getenv("SOAK_OUT")
	if outPath == "" {
		outPath = "soak-out/soak.md"
	}
	if _, err := exec.LookPath("sysbench"); err != nil {
		t.Fatal("sysbench is needed: make deps")
	}
	src := source(t, nil)
	tgt := targetServer(t)
	sp, tp := faultProxy(t, src.Addr()), faultProxy(t, tgt.Addr())
	sbArgs := func(extra ...string) []string {
		return append([]string{"oltp_write_only", "--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=" + strconv.Itoa(src.Port),
			"--mysql-user=root", "--mysql-db=sbtest", "--tables=4", "--table-size=10000"}, extra...)
	}
	sandbox.MustExec(t, sandbox.MustOpen(t, src, ""), "CREATE DATABASE sbtest")
	if out, err := exec.Command("sysbench", sbArgs("prepare")...).CombinedOutput(); err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := exec.CommandContext(ctx, "sysbench", sbArgs("--threads=4", "--rate="+strconv.Itoa(rate), "--time=0", "--events=0",
		"--mysql-ignore-errors=all", "run")...)
	loadOut := &strings.Builder{}
	load.Stdout, load.Stderr = loadOut, loadOut
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	loadDone := make(chan error, 1)
	go func() { loadDone <- load.Wait() }()

	args := []string{"replicate", "--source", "mysql://root@" + sp.Addr(), "--target", "mysql://root@" + tp.Addr(), "--workers", "4",
		"--progress", "10s", "--heartbeat", "500ms", "--source-reconnect-timeout", "2m", "--reconnect-timeout", "2m"}
	r := startPrepl(t, args...)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	faults := map[string]int{}
	var rssMax, lagMax float64
	var unexpected []string // prepl exits that no fault of ours explains
	restart := func() { r = startPrepl(t, args...) }

	end := time.Now().Add(soak)
	nextFault := time.Now().Add(time.Duration(5+rng.Intn(20)) * time.Second)
	var clear func() // ends a fault that lasts (stall, down)
	var clearAt time.Time
	sample := time.NewTicker(time.Second)
	defer sample.Stop()
	for time.Now().Before(end) {
		select {
		case err := <-loadDone:
			t.Fatalf("sysbench ended early: %v\n%s", err, loadOut.String())
		case <-sample.C:
		}
		select {
		case <-r.exited:
			unexpected = append(unexpected, fmt.Sprintf("%s: %v: %s", time.Now().Format(time.TimeOnly), r.err, lastLines(r.output(), 3)))
			restart()
		default:
		}
		if kb := rssKB(r.cmd.Process.Pid); kb > 0 {
			rssMax = max(rssMax, float64(kb)/1024)
		}
		if st, err := fetchStatus(r.addr); err == nil {
			lagMax = max(lagMax, st.LagSeconds)
		}
		if clear != nil && time.Now().After(clearAt) {
			clear()
			clear = nil
		}
		if clear != nil || time.Now().Before(nextFault) {
			continue
		}
		nextFault = time.Now().Add(time.Duration(5+rng.Intn(20)) * time.Second)
		lasts := time.Duration(1+rng.Intn(15)) * time.Second
		switch kind := []string{"source-cut", "source-stall", "source-down", "source-corrupt", "target-kill", "prepl-kill"}[rng.Intn(6)]; kind {
		case "source-cut":
			sp.Cut()
			faults[kind]++
		case "source-stall", "source-down":
			state := faultproxy.Stall
			if kind == "source-down" {
				state = faultproxy.Down
			}
			sp.Set(state)
			clear, clearAt = func() { sp.Set(faultproxy.Up) }, time.Now().Add(lasts)
			faults[kind]++
		case "source-corrupt":
			sp.CorruptNext(60)
			faults[kind]++
		case "target-kill":
			tgt.Kill()
			if err := tgt.Restart(context.Background()); err != nil {
				t.Fatalf("target restart: %v", err)
			}
			tp.SetUpstream(tgt.Addr())
			faults[kind]++
		case "prepl-kill":
			r.cmd.Process.Signal(syscall.SIGKILL)
			<-r.exited
			restart()
			faults[kind]++
		}
	}
	if clear != nil {
		clear()
	}
	cancel()
	<-loadDone
	start := time.Now()
	select {
	case <-r.exited:
		unexpected = append(unexpected, fmt.Sprintf("at the end: %v: %s", r.err, lastLines(r.output(), 3)))
		restart()
	default:
	}
	caughtUpAndSame(t, r, src, tgt)
	catchUp := time.Since(start)

	var applied int64
	tdb := sandbox.MustOpen(t, tgt, "")
	tdb.QueryRow("SELECT applied FROM prepl.position WHERE channel = 'default' AND slot = 'main'").Scan(&applied)
	total := 0
	var kinds []string
	for _, k := range []string{"source-cut", "source-stall", "source-down", "source-corrupt", "target-kill", "prepl-kill"} {
		total += faults[k]
		kinds = append(kinds, fmt.Sprintf("%s %d", k, faults[k]))
	}
	report := fmt.Sprintf(`| figure | value |
|---|---|
| duration | %s at %d tx/s offered (sysbench oltp_write_only, 4 threads, 4 tables of 10,000 rows) |
| source transactions applied (channel total) | %d |
| faults injected | %d: %s (bytes actually corrupted: %d) |
| prepl RSS max | %.0f MiB |
| lag max (/status, sampled each second) | %.1f s |
| catch-up and comparison after the load stopped | %s |
| prepl exits not caused by a fault | %d |
| result | target = source (verify.Rows, every table) |
`, soak, rate, applied, total, strings.Join(kinds, ", "), sp.Corrupted(), rssMax, lagMax, catchUp.Round(time.Second), len(unexpected))
	for _, u := range unexpected {
		report += "\nunexpected exit: " + u + "\n"
	}
	t.Log("\n" + report)
	if err := os.MkdirAll(filepath.Dir(outPath), 0o755); err == nil {
		os.WriteFile(outPath, []byte(report), 0o644)
	}
	if len(unexpected) > 0 {
		t.Errorf("prepl exited %d times on its own", len(unexpected))
	}
}

// rssKB is a process's resident set size in KiB (0 when gone).
func rssKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

func fetchStatus(addr string) (metrics.Status, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return metrics.Fetch(ctx, addr)
}
