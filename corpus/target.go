package corpus

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/scenario"
)

// Config is one way of applying a test's binlog to a target.
type Config struct {
	Mode    string // "" for the reference, mariadb-binlog | mariadb
	Compact bool
}

func (c Config) String() string {
	if c.Mode == "" {
		return "reference"
	}
	if c.Compact {
		return c.Mode + "/compact"
	}
	return c.Mode + "/no-compact"
}

// Modes are prepl's modes the corpus runs, each with compaction on and
// off: serial on one connection, the others with 4 workers.
var Modes = []string{"serial", "writeset", "optimistic"}

// stepTimeout bounds one increment of a replay.
const stepTimeout = 5 * time.Minute

// errStepTimeout is a prepl step killed after stepTimeout: its output
// then ends without prepl's error line.
var errStepTimeout = fmt.Errorf("prepl killed: the step took over %s", stepTimeout)

// target is a sandbox started from the test's install.db, with the
// options of mtr's server that change what a statement does.
type target struct {
	srv *sandbox.Server
	db  *sql.DB
}

// startTarget starts a target from installDB with mtr's options and then
// the test's own (opts, TargetOptions'), which win.
func startTarget(ctx context.Context, installDB string, opts []string) (*target, error) {
	o := sandbox.Defaults()
	o.ServerID = 3
	o.FromDataDir = installDB
	o.FlushLogAtTrxCommit = 2
	// Later flags win over the sandbox's own. mtr's server (its
	// include/default_mysqld.cnf) is latin1 and MyISAM by default (a
	// CREATE TABLE without ENGINE is logged as written, so the targets
	// must default alike), its MEMORY tables 1 MiB at most, its redo log
	// 10 MiB (a different size would be rebuilt at start).
	o.Flags = []string{"--character-set-server=latin1", "--collation-server=latin1_swedish_ci",
		"--default-storage-engine=myisam", "--max-heap-table-size=1M",
		"--innodb-log-file-size=10M", "--innodb-buffer-pool-size=64M", "--max-allowed-packet=1G",
		"--log-bin-trust-function-creators=1", "--secure-file-priv="}
	o.Flags = append(o.Flags, opts...)
	s, err := sandbox.Start(ctx, o)
	if err != nil {
		if len(opts) > 0 {
			err = fmt.Errorf("%w (with the test's server options %s)", err, strings.Join(opts, " "))
		}
		return nil, err
	}
	db, err := s.Open("")
	if err != nil {
		s.Close()
		return nil, err
	}
	db.SetMaxOpenConns(2)
	return &target{srv: s, db: db}, nil
}

func (t *target) Close() {
	t.db.Close()
	t.srv.Close()
}

func (t *target) dump(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	return scenario.Dump(ctx, t.db)
}

// replayRef applies files[from.File..to.File] from after `from` (nil:
// the start) up to `to` with `mariadb-binlog | mariadb`.
func (t *target) replayRef(ctx context.Context, files []string, from *Checkpoint, to Checkpoint) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	args := []string{"--no-defaults"}
	first := 0
	if from != nil {
		first = from.File
		args = append(args, "--start-position="+strconv.FormatInt(from.Offset, 10))
	}
	if !to.End() {
		args = append(args, "--stop-position="+strconv.FormatInt(to.Offset, 10))
	}
	dec := exec.CommandContext(ctx, "mariadb-binlog", append(args, files[first:to.File+1]...)...)
	// --comments: without it the client strips the # comment lines of a
	// CREATE PROCEDURE body before sending it, where MariaDB's replica
	// and prepl store the body as the source logged it (main.type_newdecimal).
	// With it the client keeps mariadb-binlog's own # lines too, which
	// the server ignores.
	cl := exec.CommandContext(ctx, clientBinary(), "--no-defaults", "--host=127.0.0.1",
		"--port="+strconv.Itoa(t.srv.Port), "--user=root", "--max-allowed-packet=1G", "--binary-mode", "--comments", "--batch", "--silent")
	pipe, err := dec.StdoutPipe()
	if err != nil {
		return err
	}
	var decErr, clOut bytes.Buffer
	dec.Stderr = &decErr
	cl.Stdin, cl.Stdout, cl.Stderr = pipe, &clOut, &clOut
	if err := dec.Start(); err != nil {
		return err
	}
	err = cl.Run()
	derr := dec.Wait()
	if err != nil {
		return fmt.Errorf("mariadb: %v: %s", err, clientError(clOut.String()))
	}
	if derr != nil {
		return fmt.Errorf("mariadb-binlog: %v: %s", derr, oneLine(decErr.String()))
	}
	return nil
}

// replayPrepl runs prepl replay on files[..to.File] up to `to`; prepl
// resumes after the position it stored on the target at the last step.
func (t *target) replayPrepl(ctx context.Context, bin string, c Config, files []string, to Checkpoint) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	args := []string{"replay", "--target", t.srv.URL(), "--progress", "0", "--progress-bar=false",
		"--compact=" + strconv.FormatBool(c.Compact), "--mode", c.Mode, "--workers", "4"}
	if c.Mode == "serial" {
		args[len(args)-1] = "0"
	}
	if !to.End() {
		args = append(args, "--stop-position="+strconv.FormatInt(to.Offset, 10))
	}
	cmd := exec.CommandContext(ctx, bin, append(args, files[:to.File+1]...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = errStepTimeout
	}
	return out.String(), err
}

func clientBinary() string {
	if _, err := exec.LookPath("mariadb"); err == nil {
		return "mariadb"
	}
	return "mysql"
}

// oneLine squeezes a message onto one line of at most 300 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// preplError is the line of prepl's output that says why it stopped.
func preplError(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if _, e, ok := strings.Cut(l, " err="); ok && strings.Contains(l, "level=ERROR") {
			if q, err := strconv.QuotedPrefix(e); err == nil {
				e, _ = strconv.Unquote(q)
			}
			return oneLine(e)
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := lines[i]; strings.Contains(l, "level=ERROR") || strings.HasPrefix(l, "prepl") {
			return oneLine(l)
		}
	}
	return oneLine(lastLines(out, 2))
}

// clientError is the mariadb client's error line, after the start of the
// statement it echoes (a BINLOG statement is kilobytes of base64).
func clientError(out string) string {
	i := strings.Index(out, "\nERROR ")
	if i < 0 {
		return oneLine(out)
	}
	stmt := strings.Trim(strings.TrimSpace(out[:i]), "-")
	if stmt = strings.TrimSpace(strings.Trim(strings.TrimSpace(stmt), "-")); len(stmt) > 100 {
		stmt = stmt[:100] + "..."
	}
	return oneLine(out[i+1:]) + " in: " + oneLine(stmt)
}
