package scenario

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/bench"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
)

// PREPL_SCENARIOS, a regular expression, selects scenarios by folder name
// (go test -run 'TestScenarios/NAME' does too); make test runs them all.
const selectEnv = "PREPL_SCENARIOS"

// replayModes are prepl's modes; serial runs on one connection, the others
// with 4 workers.
var replayModes = []string{"serial", "writeset", "commit-order", "optimistic", "aggressive", "schema", "domain"}

// replicateModes are the modes also run through `prepl replicate`.
var replicateModes = []string{"serial", "writeset"}

// crashKills is how many SIGKILLs must land while prepl runs.
const crashKills = 10

func TestScenarios(t *testing.T) {
	all, err := Load(filepath.Join("..", "testdata", "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	sel := regexp.MustCompile(os.Getenv(selectEnv))
	var run []Scenario
	for _, sc := range all {
		if sel.MatchString(sc.Name) {
			run = append(run, sc)
		}
	}
	// Scenarios run in parallel, each on a harness of its own taken from
	// a pool: a scenario mostly waits (for the client, mariadb-binlog,
	// prepl's runs, MariaDB's replica catching up), so two harnesses on
	// two cores take 70% of the time one does (252 s on one, 175-179 s
	// on two, quiet machine).
	n := min(len(run), harnesses(t))
	pool := make(chan *harness, n)
	for range n {
		pool <- newHarness(t)
	}
	start := time.Now()
	t.Cleanup(func() {
		t.Logf("%d scenarios on %d harnesses took %s", len(run), n, time.Since(start).Round(time.Millisecond))
	})
	for _, sc := range run {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			h := <-pool
			defer func() { pool <- h }()
			h.scenario(t, sc)
		})
	}
}

// harnessEnv sets how many harnesses (three servers each) run scenarios
// at once; the default is 2, and go test's -parallel bounds it too.
const harnessEnv = "PREPL_SCENARIO_HARNESSES"

func harnesses(t *testing.T) int {
	v := os.Getenv(harnessEnv)
	if v == "" {
		return 2
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a number of harnesses, 1 or more", harnessEnv, v)
	}
	return n
}

// harness holds the servers every scenario reuses, reset between runs.
type harness struct {
	bin                     string
	source, replica, target *sandbox.Server
	srcDB, repDB, tgtDB     *sql.DB
}

func newHarness(t *testing.T) *harness {
	h := &harness{bin: preplBinary(t)}
	var wg sync.WaitGroup
	var errs [3]error
	start := func(i int, o sandbox.Options, s **sandbox.Server) {
		defer wg.Done()
		*s, errs[i] = sandbox.Start(context.Background(), o)
	}
	src := sandbox.Defaults()
	src.Binlog = true
	src.SyncBinlog, src.FlushLogAtTrxCommit = 0, 2
	rep := sandbox.RelayReplica() // its relay logs, rotated inside transactions, are replayed too
	rep.Flags = append(rep.Flags, "--relay-log-purge=OFF")
	rep.FlushLogAtTrxCommit = 2
	tgt := sandbox.Defaults()
	tgt.ServerID, tgt.FlushLogAtTrxCommit = 3, 2
	wg.Add(3)
	go start(0, src, &h.source)
	go start(1, rep, &h.replica)
	go start(2, tgt, &h.target)
	wg.Wait()
	for i, s := range []*sandbox.Server{h.source, h.replica, h.target} {
		if errs[i] != nil {
			t.Fatalf("start sandbox: %v", errs[i])
		}
		t.Cleanup(s.Close)
	}
	h.srcDB = sandbox.MustOpen(t, h.source, "")
	h.repDB = sandbox.MustOpen(t, h.replica, "")
	h.tgtDB = sandbox.MustOpen(t, h.target, "")
	return h
}

var build struct {
	sync.Once
	path string
	err  error
}

// preplBinary builds cmd/prepl once per test binary.
func preplBinary(t *testing.T) string {
	t.Helper()
	build.Do(func() {
		dir, err := os.MkdirTemp("", "prepl-bin-")
		if err != nil {
			build.err = err
			return
		}
		build.path = filepath.Join(dir, "prepl")
		if out, err := exec.Command("go", "build", "-o", build.path, "../cmd/prepl").CombinedOutput(); err != nil {
			build.err = fmt.Errorf("%v: %s", err, out)
		}
	})
	if build.err != nil {
		t.Fatalf("build prepl: %v", build.err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(build.path)) })
	return build.path
}

// scenarioRun is the state one scenario's runs share.
type scenarioRun struct {
	h          *harness
	sc         Scenario
	files      []string
	relays     []string // the relay logs of MariaDB's replica: the same transactions
	gtidPos    string   // the source's gtid_binlog_pos at the end
	reference  []string // the dump every prepl target must equal (but see prefixes)
	prefixes   map[string][]string
	knownSeen  bool
	knownFails []string
}

func (h *harness) scenario(t *testing.T, sc Scenario) {
	r := &scenarioRun{h: h, sc: sc, prefixes: map[string][]string{}}
	r.runSource(t)
	replica := r.runReplica(t)
	replay := r.runReplay(t)
	switch {
	case sc.Expect.Outcome == EqualReplay:
		r.reference = replay
	default:
		r.reference = replica
	}
	if sc.Expect.ReferenceFails == "" {
		d := Diff(replica, replay)
		switch {
		case d != "" && sc.Expect.ReplayDiffers == "":
			t.Errorf("mariadb-binlog | mariadb differs from MariaDB's replica (say why with replay-differs):\n%s", d)
		case d == "" && sc.Expect.ReplayDiffers != "":
			t.Errorf("mariadb-binlog | mariadb now equals MariaDB's replica: remove replay-differs (%s)", sc.Expect.ReplayDiffers)
		case d != "":
			t.Logf("replay reference differs from the replica as expected (%s):\n%s", sc.Expect.ReplayDiffers, d)
		}
	}
	// A failure may depend on timing (a parallel mode, a random kill): a
	// scenario with a known failure runs again, up to knownRounds times,
	// until it shows, so that "remove known-failure" is not said by luck.
	rounds := 1
	if sc.Expect.KnownFailure != nil {
		rounds = knownRounds
	}
	for i := 0; i < rounds && !r.knownSeen; i++ {
		r.runAll(t)
	}
	if k := sc.Expect.KnownFailure; k != nil {
		if !r.knownSeen {
			t.Errorf("scenario passes in every run now: remove known-failure %q from its expect file", k)
		} else {
			t.Logf("known failure (%s) in %d runs: %s", k, len(r.knownFails), strings.Join(r.knownFails, ", "))
		}
	}
}

// knownRounds bounds the rounds of a scenario with a known failure.
const knownRounds = 10

// runAll runs prepl in every mode and compaction, replicate, and the
// crash test.
func (r *scenarioRun) runAll(t *testing.T) {
	h, sc := r.h, r.sc
	for _, mode := range replayModes {
		for _, compact := range []bool{true, false} {
			name := "replay/" + mode + "/compact"
			if !compact {
				name = "replay/" + mode + "/no-compact"
			}
			args := append([]string{"replay", "--target", h.target.URL(), "--progress", "0",
				"--compact=" + strconv.FormatBool(compact)}, modeArgs(mode)...)
			r.prepl(t, name, append(args, r.files...))
		}
	}
	r.prepl(t, "replay/relay-logs", append([]string{"replay", "--target", h.target.URL(), "--progress", "0",
		"--workers", "4"}, r.relays...))
	for _, mode := range replicateModes {
		args := append([]string{"replicate", "--source", h.source.URL(), "--target", h.target.URL(),
			"--stop-at-end", "--progress", "0"}, modeArgs(mode)...)
		r.prepl(t, "replicate/"+mode, args)
	}
	if sc.Expect.Crash {
		r.crash(t)
	}
}

func modeArgs(mode string) []string {
	if mode == "serial" {
		return []string{"--mode", "serial", "--workers", "0"}
	}
	return []string{"--mode", mode, "--workers", "4"}
}

// runSource resets the source, runs setup.sql unlogged and source.sql
// session by session, and closes the binlog file.
func (r *scenarioRun) runSource(t *testing.T) {
	h := r.h
	if err := dropSchemas(h.srcDB, "SET SESSION sql_log_bin = 0", "RESET MASTER"); err != nil {
		t.Fatalf("reset source: %v", err)
	}
	if r.sc.Setup != "" {
		if err := client(h.source, r.sc.Dir, "SET SESSION sql_log_bin = 0;\n"+r.sc.Setup); err != nil {
			t.Fatalf("setup.sql on the source: %v", err)
		}
	}
	for i, s := range r.sc.Sessions {
		if err := client(h.source, r.sc.Dir, s); err != nil {
			t.Fatalf("source.sql session %d: %v", i+1, err)
		}
	}
	sandbox.MustExec(t, h.srcDB, "FLUSH BINARY LOGS")
	if err := h.srcDB.QueryRow("SELECT @@gtid_binlog_pos").Scan(&r.gtidPos); err != nil {
		t.Fatal(err)
	}
	files, err := h.source.BinlogFiles()
	if err != nil || len(files) == 0 {
		t.Fatalf("binlog files: %v %v", files, err)
	}
	r.files = files
}

// runReplica applies the binlog with MariaDB's own replica and returns its
// state; with reference-fails it checks that the replica stops on an error.
func (r *scenarioRun) runReplica(t *testing.T) []string {
	h := r.h
	ctx := context.Background()
	conn, err := h.repDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.ExecContext(ctx, "STOP SLAVE")
	if _, err := conn.ExecContext(ctx, "RESET SLAVE ALL"); err != nil {
		t.Fatalf("replica: RESET SLAVE ALL: %v", err)
	}
	if err := r.prepareTarget(h.replica, h.repDB); err != nil {
		t.Fatalf("replica: %v", err)
	}
	for _, q := range []string{
		"SET GLOBAL gtid_slave_pos = ''",
		"CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = " + strconv.Itoa(h.source.Port) +
			", MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_USE_GTID = slave_pos",
		"START SLAVE",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("replica: %s: %v", q, err)
		}
	}
	stopped := waitReplica(ctx, conn, r.gtidPos)
	// The relay logs hold every transaction, also where the SQL thread
	// stopped (reference-fails).
	sandbox.MustWaitFetched(t, h.repDB, r.gtidPos, time.Minute)
	conn.ExecContext(ctx, "STOP SLAVE")
	relays, err := filepath.Glob(filepath.Join(h.replica.DataDir(), "relay-bin.0*"))
	if err != nil || len(relays) == 0 {
		t.Fatalf("replica: relay logs: %v %v", relays, err)
	}
	r.relays = relays
	switch why := r.sc.Expect.ReferenceFails; {
	case why == "" && stopped != nil:
		t.Fatalf("MariaDB's replica cannot apply this scenario (say so with reference-fails): %v", stopped)
	case why != "" && stopped == nil:
		t.Fatalf("MariaDB's replica applies this scenario now: remove reference-fails (%s)", why)
	case why != "":
		t.Logf("the replica stops as expected (%s): %v", why, stopped)
	}
	dump, err := Dump(ctx, h.repDB)
	if err != nil {
		t.Fatalf("dump replica: %v", err)
	}
	return dump
}

// waitReplica waits until the replica has applied pos, or returns why its
// SQL thread stopped.
func waitReplica(ctx context.Context, conn *sql.Conn, pos string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var res sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, 0.2)", pos).Scan(&res); err != nil {
			return fmt.Errorf("MASTER_GTID_WAIT: %w", err)
		}
		if res.Valid && res.Int64 == 0 {
			return nil
		}
		st, err := bench.SlaveStatus(ctx, conn)
		if err != nil {
			return err
		}
		if st["Last_SQL_Error"] != "" || st["Slave_SQL_Running"] == "No" {
			return fmt.Errorf("SQL thread stopped at %s: %s (error %s)", st["Gtid_Slave_Pos"], st["Last_SQL_Error"], st["Last_SQL_Errno"])
		}
		if st["Last_IO_Error"] != "" {
			return fmt.Errorf("IO thread: %s", st["Last_IO_Error"])
		}
	}
	return fmt.Errorf("replica did not reach %s in 2 minutes", pos)
}

// runReplay applies the binlog with `mariadb-binlog FILES | mariadb` on the
// target and returns its state.
func (r *scenarioRun) runReplay(t *testing.T) []string {
	dump, err := r.replayUntil("")
	if err != nil {
		if r.sc.Expect.ReferenceFails == "" && r.sc.Expect.ReplayDiffers == "" {
			t.Fatalf("mariadb-binlog | mariadb (if MariaDB's tools differ here, say why with replay-differs): %v", err)
		}
		t.Logf("mariadb-binlog | mariadb fails too: %v", err)
	}
	return dump
}

// replayUntil replays the binlog up to GTID stop (inclusive; "" for all)
// into the reset target and returns the target's state.
func (r *scenarioRun) replayUntil(stop string) ([]string, error) {
	h := r.h
	if err := r.prepareTarget(h.target, h.tgtDB); err != nil {
		return nil, err
	}
	args := []string{"--no-defaults"}
	if stop != "" {
		args = append(args, "--stop-position="+stop)
	}
	dec := exec.Command("mariadb-binlog", append(args, r.files...)...)
	cl := exec.Command(clientBinary(), clientArgs(h.target)...)
	pipe, err := dec.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var decErr, clOut bytes.Buffer
	dec.Stderr = &decErr
	cl.Stdin, cl.Stdout, cl.Stderr = pipe, &clOut, &clOut
	if err := dec.Start(); err != nil {
		return nil, err
	}
	err = cl.Run()
	derr := dec.Wait()
	dump, dumpErr := Dump(context.Background(), h.tgtDB)
	if err != nil {
		return dump, fmt.Errorf("mariadb client: %v: %s", err, strings.TrimSpace(clOut.String()))
	}
	if derr != nil {
		return dump, fmt.Errorf("mariadb-binlog: %v: %s", derr, strings.TrimSpace(decErr.String()))
	}
	return dump, dumpErr
}

// prepareTarget drops every non-system schema of a target (prepl's
// included) and runs setup.sql and target.sql.
func (r *scenarioRun) prepareTarget(s *sandbox.Server, db *sql.DB) error {
	if err := dropSchemas(db); err != nil {
		return err
	}
	if r.sc.Setup != "" {
		if err := client(s, r.sc.Dir, r.sc.Setup); err != nil {
			return fmt.Errorf("setup.sql: %w", err)
		}
	}
	if r.sc.Target != "" {
		if err := client(s, r.sc.Dir, r.sc.Target); err != nil {
			return fmt.Errorf("target.sql: %w", err)
		}
	}
	return nil
}

// dropSchemas drops every schema but the server's own, and every account
// and role but the server's own, on one connection, running before first
// and after last.
func dropSchemas(db *sql.DB, beforeAfter ...string) error {
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var before, after []string
	if len(beforeAfter) > 0 {
		before, after = beforeAfter[:1], beforeAfter[1:]
	}
	for _, q := range before {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	rows, err := conn.QueryContext(ctx, `SELECT SCHEMA_NAME FROM information_schema.SCHEMATA
		WHERE SCHEMA_NAME NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		if _, err := conn.ExecContext(ctx, "DROP DATABASE "+mysql.QuoteIdent(n)); err != nil {
			return fmt.Errorf("drop database %s: %w", n, err)
		}
	}
	// Accounts and roles a scenario created (the dump compares them).
	rows, err = conn.QueryContext(ctx, `SELECT User, Host FROM mysql.global_priv
		WHERE User NOT IN ('root', 'mariadb.sys', '', 'PUBLIC')`)
	if err != nil {
		return err
	}
	var drops []string
	for rows.Next() {
		var user, host string
		rows.Scan(&user, &host)
		if host == "" {
			drops = append(drops, "DROP ROLE "+mysql.QuoteString(user))
		} else {
			drops = append(drops, "DROP USER "+mysql.QuoteString(user)+"@"+mysql.QuoteString(host))
		}
	}
	rows.Close()
	for _, q := range drops {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	for _, q := range after {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

func clientBinary() string {
	if _, err := exec.LookPath("mariadb"); err == nil {
		return "mariadb"
	}
	return "mysql"
}

func clientArgs(s *sandbox.Server) []string {
	return []string{"--no-defaults", "--host=127.0.0.1", "--port=" + strconv.Itoa(s.Port), "--user=root",
		"--local-infile=1", "--batch", "--silent"}
}

// client runs sql with the mariadb client in dir (where LOAD DATA LOCAL
// finds its files), as one session.
func client(s *sandbox.Server, dir, sql string) error {
	cmd := exec.Command(clientBinary(), clientArgs(s)...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(sql)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// prepl runs prepl with args on the reset target as subtest name and
// checks the outcome.
func (r *scenarioRun) prepl(t *testing.T, name string, args []string) {
	t.Run(name, func(t *testing.T) {
		if err := r.prepareTarget(r.h.target, r.h.tgtDB); err != nil {
			t.Fatalf("target: %v", err)
		}
		code, out := r.runBin(args, 0)
		err := r.check(code, out)
		if o := r.sc.Expect.Output; err == nil && o != nil && name == OutputRun && !o.MatchString(out) {
			err = fmt.Errorf("output does not match %q:\n%s", o, tail(out))
		}
		r.report(t, err)
	})
}

// report fails t with err unless it is the scenario's known failure.
func (r *scenarioRun) report(t *testing.T, err error) {
	if err == nil {
		return
	}
	// A repeated subtest's name ends in #01, #02...: the run is the same.
	run := repeatSuffix.ReplaceAllString(strings.TrimPrefix(t.Name(), "TestScenarios/"+r.sc.Name+"/"), "")
	if k := r.sc.Expect.KnownFailure; k != nil && k.MatchString(run+": "+err.Error()) {
		r.knownSeen = true
		r.knownFails = append(r.knownFails, run)
		t.Logf("known failure: %v", err)
		return
	}
	t.Error(err)
}

var repeatSuffix = regexp.MustCompile(`#\d+$`)

// runBin runs prepl; with killAfter > 0 it sends SIGKILL after that long
// and reports code -9 if the kill landed.
func (r *scenarioRun) runBin(args []string, killAfter time.Duration) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.h.bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return -1, err.Error()
	}
	if killAfter > 0 {
		timer := time.AfterFunc(killAfter, func() { cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal()), out.String()
		}
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		return -1, err.Error()
	}
	return 0, out.String()
}

// gtidInMessage finds the GTID an error names.
// gtidInMessage finds the GTID prepl's error names ("apply GTID 0-1-4",
// "in transaction 0-1-4"), ahead of any other GTID in its output (the
// log line before it gives the position stored, "gtid=0-1-3"); else the
// first GTID at all.
var gtidInMessage = regexp.MustCompile(`(?:GTID |transaction )(\d+)-(\d+)-(\d+)\b`)
var anyGTID = regexp.MustCompile(`\b(\d+)-(\d+)-(\d+)\b`)

// check compares one prepl run's exit and target with the expectation.
func (r *scenarioRun) check(code int, out string) error {
	e := r.sc.Expect
	if e.Outcome == PreplError {
		if code == 0 {
			return fmt.Errorf("prepl exited 0, want an error matching %q:\n%s", e.Error, tail(out))
		}
		if !e.Error.MatchString(out) {
			return fmt.Errorf("prepl exit %d without a message matching %q:\n%s", code, e.Error, tail(out))
		}
	} else if code != 0 {
		return fmt.Errorf("prepl exit %d:\n%s", code, tail(out))
	}
	if err := r.noRows(); err != nil {
		return err
	}
	got, err := Dump(context.Background(), r.h.tgtDB)
	if err != nil {
		return fmt.Errorf("dump target: %w", err)
	}
	want, what := r.reference, "the reference"
	if e.Outcome == PreplError && e.ReferenceFails == "" {
		// Nothing of the offending transaction may be applied: the
		// target must equal a replay stopped just before it.
		m := gtidInMessage.FindStringSubmatch(out)
		if m == nil {
			m = anyGTID.FindStringSubmatch(out)
		}
		if m == nil {
			return fmt.Errorf("prepl's error names no GTID:\n%s", tail(out))
		}
		n, _ := strconv.ParseUint(m[3], 10, 64)
		stop := fmt.Sprintf("%s-%s-%d", m[1], m[2], n-1)
		if want, err = r.prefix(stop, n <= 1); err != nil {
			return err
		}
		what = fmt.Sprintf("a replay up to %s, before the transaction prepl refused", stop)
	}
	if d := Diff(want, got); d != "" {
		return fmt.Errorf("target differs from %s:\n%s\nprepl output:\n%s", what, d, tail(out))
	}
	return nil
}

// prefix returns the state of a replay up to GTID stop (nothing at all if
// none); it resets the target.
func (r *scenarioRun) prefix(stop string, none bool) ([]string, error) {
	if want, ok := r.prefixes[stop]; ok {
		return want, nil
	}
	var want []string
	var err error
	if none {
		if err = r.prepareTarget(r.h.target, r.h.tgtDB); err == nil {
			want, err = Dump(context.Background(), r.h.tgtDB)
		}
	} else {
		want, err = r.replayUntil(stop)
	}
	if err != nil {
		return nil, fmt.Errorf("replay up to %s: %w", stop, err)
	}
	r.prefixes[stop] = want
	return want, nil
}

// noRows runs the scenario's no-rows queries on the target.
func (r *scenarioRun) noRows() error {
	for _, q := range r.sc.Expect.NoRows {
		rows, err := r.h.tgtDB.Query(q)
		if err != nil {
			return fmt.Errorf("no-rows %q: %w", q, err)
		}
		found := rows.Next()
		rows.Close()
		if found {
			return fmt.Errorf("no-rows %q returns rows on the target", q)
		}
	}
	return nil
}

// tail is the end of prepl's output without its INFO lines.
func tail(out string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(l, "level=INFO") {
			lines = append(lines, l)
		}
	}
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.Join(lines, "\n")
}

// crash runs prepl replay (writeset, a target transaction per source
// transaction) and kills it with SIGKILL at random moments until
// crashKills kills have landed while it ran, restarting it each time; after
// each sequence the target must equal the reference.
func (r *scenarioRun) crash(t *testing.T) {
	t.Run("crash/writeset", func(t *testing.T) {
		args := append([]string{"replay", "--target", r.h.target.URL(), "--progress", "0", "--commit-unit", "1"},
			append(modeArgs("writeset"), r.files...)...)
		seed := time.Now().UnixNano()
		rng := rand.New(rand.NewSource(seed))
		t.Logf("random kill moments, seed %d", seed)
		if err := r.prepareTarget(r.h.target, r.h.tgtDB); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		code, out := r.runBin(args, 0)
		whole := time.Since(start)
		if err := r.check(code, out); err != nil {
			r.report(t, fmt.Errorf("uninterrupted run: %w", err))
			return
		}
		kills, sequences := 0, 0
		for attempts := 0; kills < crashKills && attempts < 10*crashKills; sequences++ {
			if err := r.prepareTarget(r.h.target, r.h.tgtDB); err != nil {
				t.Fatal(err)
			}
			for ; kills < crashKills && attempts < 10*crashKills; attempts++ {
				code, out = r.runBin(args, time.Duration(rng.Int63n(int64(whole))))
				if code != -int(syscall.SIGKILL) {
					break // finished (or failed) before the kill
				}
				kills++
			}
			if code == -int(syscall.SIGKILL) {
				code, out = r.runBin(args, 0)
			}
			if err := r.check(code, out); err != nil {
				r.report(t, fmt.Errorf("after %d kills (sequence %d): %w", kills, sequences+1, err))
				return
			}
		}
		if kills < crashKills {
			t.Fatalf("only %d of %d kills landed while prepl ran", kills, crashKills)
		}
		t.Logf("%d kills in %d sequences, each resumed and compared", kills, sequences)
	})
}
