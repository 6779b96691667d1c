package run

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/verify"
)

// The standby tests run Replicate in processes of their own, so that one
// can be killed (SIGKILL) or stopped (SIGSTOP) as a prepl would be: the
// test binary runs itself with helperEnv set to the run's options.
const helperEnv = "PREPL_RUN_TEST_REPLICATE"

// helperArgs are a helper process's options.
type helperArgs struct {
	Source, Target, MetricsAddr string
	Standby                     bool
	// Workers (default 2), UnitTxns (default 1) and Reconnect (seconds,
	// default 30) of the run.
	Workers, UnitTxns, Reconnect int
}

func TestMain(m *testing.M) {
	if a := os.Getenv(helperEnv); a != "" {
		os.Exit(helperReplicate(a))
	}
	os.Exit(m.Run())
}

// helperReplicate runs Replicate to the source's end with prepl's exit
// codes: 0, 1, 2 (fatal), 3 (fenced).
func helperReplicate(js string) int {
	var a helperArgs
	if err := json.Unmarshal([]byte(js), &a); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	src, err := mysql.ParseURL(a.Source)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	workers, unit, reconnect := cmp.Or(a.Workers, 2), cmp.Or(a.UnitTxns, 1), time.Duration(cmp.Or(a.Reconnect, 30))*time.Second
	cfg := apply.Config{Mode: depend.Writeset, Workers: workers, UnitTxns: unit, Retries: sequencer.DefaultRetries, WindowBytes: 8 << 20,
		ReconnectTimeout: reconnect, Log: log}
	o := Options{Log: log, Config: cfg, Target: TargetOptions{URL: a.Target, Channel: DefaultChannel, Reconnect: reconnect},
		Source: src, StopAtEnd: true, Heartbeat: time.Second, SourceReconnect: 30 * time.Second,
		Standby: a.Standby, TakeoverAfter: 2 * time.Second, Gate: GateOptions{CheckEvery: time.Second}, Watch: WatchOptions{MetricsAddr: a.MetricsAddr}}
	_, err = Replicate(ctx, o)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrFenced):
		fmt.Fprintln(os.Stderr, "exit: "+err.Error())
		return 3
	case Fatal(err):
		fmt.Fprintln(os.Stderr, "exit: "+err.Error())
		return 2
	}
	fmt.Fprintln(os.Stderr, "exit: "+err.Error())
	return 1
}

// proc is a helper process.
type proc struct {
	cmd    *exec.Cmd
	out    *syncBuf
	exited chan int
}

// syncBuf is a process's output, read while it is written.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startHelper(t *testing.T, a helperArgs) *proc {
	t.Helper()
	js, _ := json.Marshal(a)
	p := &proc{cmd: exec.Command(os.Args[0], "-test.run=^$"), out: new(syncBuf), exited: make(chan int, 1)}
	p.cmd.Env = append(os.Environ(), helperEnv+"="+string(js))
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		p.exited <- p.cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGCONT)
		p.cmd.Process.Kill()
	})
	return p
}

// wait waits for p's exit code (failing after two minutes).
func (p *proc) wait(t *testing.T, what string) int {
	t.Helper()
	select {
	case code := <-p.exited:
		return code
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not exit in 2 minutes\n%s", what, p.out)
	}
	return -1
}

// until polls cond every 10 ms until it holds; it fails the test after
// two minutes or when p exits first.
func until(t *testing.T, p *proc, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		select {
		case code := <-p.exited:
			p.exited <- code
			t.Fatalf("waiting for %s: the process exited %d first\n%s", what, code, p.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not in 2 minutes\n%s", what, p.out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// standbyPair starts a source with a workload of n transactions, a
// target, and an active prepl that has applied some of it; then a standby
// waiting for it. It returns the target's pool and the two processes.
func standbyPair(t *testing.T, n int, standbyMetrics string) (src, tgt *sandbox.Server, db *sql.DB, active, standby *proc) {
	src = startWorkload(t, n)
	to := sandbox.Defaults()
	to.ServerID = 2 // commits fsync: the run lasts long enough to be cut
	tgt = sandbox.MustStart(t, to)
	db = sandbox.MustOpen(t, tgt, "")

	active = startHelper(t, helperArgs{Source: src.URL(), Target: tgt.URL(), Standby: true})
	until(t, active, "the active to apply 200 transactions", func() bool { return applied(db) >= 200 })
	standby = startHelper(t, helperArgs{Source: src.URL(), Target: tgt.URL(), Standby: true, MetricsAddr: standbyMetrics})
	until(t, standby, "the standby to wait", func() bool {
		var id sql.NullInt64
		db.QueryRow("SELECT IS_USED_LOCK(?)", mysql.StandbyLockName(DefaultChannel)).Scan(&id)
		return id.Valid
	})
	if got := applied(db); got >= int64(n) {
		t.Fatalf("the active applied all %d transactions before the standby waited: make the workload bigger", got)
	}
	return src, tgt, db, active, standby
}

// startWorkload starts a source with n transactions in its binlog, each
// inserting a row of w.log and adding one to a counter of w.hot (three
// hot rows): a transaction applied twice shows in the counters.
func startWorkload(t *testing.T, n int) *sandbox.Server {
	t.Helper()
	o := sandbox.Defaults()
	o.Binlog = true
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 2
	src := sandbox.MustStart(t, o)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, "CREATE DATABASE w", "CREATE TABLE w.log (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE w.hot (id INT PRIMARY KEY, n BIGINT)", "INSERT INTO w.hot VALUES (1, 0), (2, 0), (3, 0)")
	for i := range n {
		tx, err := sdb.Begin()
		if err == nil {
			_, err = tx.Exec("INSERT INTO w.log VALUES (?, ?)", i, i*7)
		}
		if err == nil {
			_, err = tx.Exec("UPDATE w.hot SET n = n + 1 WHERE id = ?", 1+i%3)
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// applied is the transactions the target's channel has applied, over all
// runs: each counted once when its unit commits with the position.
func applied(db *sql.DB) int64 {
	var n sql.NullInt64
	db.QueryRow("SELECT SUM(applied) FROM prepl.position WHERE channel = ?", DefaultChannel).Scan(&n)
	return n.Int64
}

func epoch(db *sql.DB) uint64 {
	var e uint64
	db.QueryRow("SELECT epoch FROM prepl.channel WHERE channel = ?", DefaultChannel).Scan(&e)
	return e
}

// checkEnd: the target equals the source, and the channel applied every
// source transaction exactly once (the source's GTIDs count them all).
func checkEnd(t *testing.T, src, tgt *sandbox.Server, db *sql.DB) {
	t.Helper()
	var pos string
	sandbox.MustOpen(t, src, "").QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos)
	var n int64
	if _, err := fmt.Sscanf(pos, "0-1-%d", &n); err != nil {
		t.Fatalf("source gtid_binlog_pos %q: %v", pos, err)
	}
	if err := verify.Rows(context.Background(), sandbox.MustOpen(t, src, ""), sandbox.MustOpen(t, tgt, "")); err != nil {
		t.Fatalf("target differs from source: %v", err)
	}
	if got, want := applied(db), n; got != want {
		t.Fatalf("the channel counts %d transactions applied, want %d: some were applied twice or not at all", got, want)
	}
}

// TestStandbyTakesOverFromKilled: the active is killed (SIGKILL) mid-run;
// the standby takes the channel over and applies the rest, nothing twice.
func TestStandbyTakesOverFromKilled(t *testing.T) {
	const n = 2000
	src, tgt, db, active, standby := standbyPair(t, n, "")
	before := epoch(db)
	active.cmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	active.wait(t, "the killed active")
	until(t, standby, "the standby to take over", func() bool { return epoch(db) > before })
	t.Logf("standby took over %s after the kill", time.Since(killed).Round(time.Millisecond))
	if code := standby.wait(t, "the standby"); code != 0 {
		t.Fatalf("the standby exited %d\n%s", code, standby.out)
	}
	checkEnd(t, src, tgt, db)
}

// TestStandbyFencesStopped: the active is stopped (SIGSTOP) mid-run, its
// connections open, its transactions in flight. The target drops its
// lock after the lease, the standby takes over while it is still stopped
// and applies the rest; woken (SIGCONT), the old active commits nothing:
// it exits 3, fenced. The standby's metrics say it waited, then became
// the active.
func TestStandbyFencesStopped(t *testing.T) {
	const n = 2000
	addr := freeAddr(t)
	src, tgt, db, active, standby := standbyPair(t, n, addr)
	if m := scrape(t, addr); !strings.Contains(m, "\nprepl_standby 1\n") {
		t.Fatalf("the waiting standby's metrics lack prepl_standby 1:\n%s", m)
	}
	before := epoch(db)
	active.cmd.Process.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	until(t, standby, "the standby to take over from the stopped active", func() bool { return epoch(db) > before })
	t.Logf("standby took over %s after SIGSTOP (lease 2s)", time.Since(stopped).Round(time.Millisecond))
	at := applied(db)
	until(t, standby, "the new active to commit", func() bool { return applied(db) > at })
	if s := channelActive(t, tgt); !strings.Contains(s, fmt.Sprintf("pid %d", standby.cmd.Process.Pid)) {
		t.Errorf("the channel's active is %q, want the standby's pid %d", s, standby.cmd.Process.Pid)
	}
	active.cmd.Process.Signal(syscall.SIGCONT)
	if code := active.wait(t, "the woken active"); code != 3 {
		t.Fatalf("the old active exited %d after SIGCONT, want 3 (fenced)\n%s", code, active.out)
	}
	if !strings.Contains(active.out.String(), "fenced") {
		t.Errorf("the old active's output does not say it was fenced:\n%s", active.out)
	}
	if m := scrape(t, addr); !strings.Contains(m, "\nprepl_standby 0\n") || !strings.Contains(m, "prepl_active_since_timestamp_seconds") {
		t.Errorf("the new active's metrics lack prepl_standby 0 and prepl_active_since_timestamp_seconds:\n%s", m)
	}
	if code := standby.wait(t, "the standby"); code != 0 {
		t.Fatalf("the standby exited %d\n%s", code, standby.out)
	}
	checkEnd(t, src, tgt, db)
}

// channelActive is the channel's active as prepl status tells it.
func channelActive(t *testing.T, s *sandbox.Server) string {
	e, err := mysql.ParseURL(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := mysql.Open(context.Background(), e, DefaultChannel, mysql.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	return tgt.ChannelActive(context.Background(), DefaultChannel)
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrape reads /metrics at addr, retrying while the server is between
// the standby's and the run's own.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	var last error
	for range 200 {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return string(b)
		}
		last = err
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("metrics at %s: %v", addr, last)
	return ""
}

// TestStandbyStoppedWhileWaiting: a standby waits while the channel's
// lock is held (here by the test), says so to prepl status, and stopped
// (SIGTERM) while it waits, exits 0 having applied nothing.
func TestStandbyStoppedWhileWaiting(t *testing.T) {
	o := sandbox.Defaults()
	o.Binlog = true
	src := sandbox.MustStart(t, o)
	to := sandbox.Defaults()
	to.ServerID = 2
	tgt := sandbox.MustStart(t, to)
	db := sandbox.MustOpen(t, tgt, "")
	hold, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	var got int
	if err := hold.QueryRowContext(context.Background(), "SELECT GET_LOCK(?, 0)", mysql.LockName(DefaultChannel)).Scan(&got); err != nil || got != 1 {
		t.Fatalf("take the channel's lock: %d %v", got, err)
	}
	standby := startHelper(t, helperArgs{Source: src.URL(), Target: tgt.URL(), Standby: true})
	until(t, standby, "the standby to wait", func() bool { return strings.Contains(standby.out.String(), "standby: waiting") })
	e, err := mysql.ParseURL(tgt.URL())
	if err != nil {
		t.Fatal(err)
	}
	m, err := mysql.Open(context.Background(), e, DefaultChannel, mysql.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if s := m.ChannelStandby(context.Background(), DefaultChannel); s == "" {
		t.Error("prepl status sees no standby waiting")
	}
	standby.cmd.Process.Signal(syscall.SIGTERM)
	if code := standby.wait(t, "the standby"); code != 0 {
		t.Fatalf("a standby stopped while waiting exited %d, want 0\n%s", code, standby.out)
	}
	if !strings.Contains(standby.out.String(), "standby stopped on signal while waiting") {
		t.Errorf("the standby did not say it stopped while waiting:\n%s", standby.out)
	}
	if a := applied(db); a != 0 {
		t.Errorf("a standby that never took over applied %d transactions", a)
	}
}

// notMySQL is a target of another kind (PostgreSQL): only its type is read.
type notMySQL struct{ Target }

// TestStandbyRefusedOffMySQL: a target without a lease and an epoch
// refuses --standby before anything is waited for.
func TestStandbyRefusedOffMySQL(t *testing.T) {
	_, err := lockChannel(context.Background(), slog.Default(), notMySQL{}, standbyOptions{standby: true, takeoverAfter: DefaultTakeoverAfter})
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "--standby needs a MySQL/MariaDB target") {
		t.Fatalf("--standby on a PostgreSQL target: %v, want a usage error", err)
	}
}
