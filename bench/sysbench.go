package bench

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/prepl/prepl/sandbox"
)

// Sysbench drives sysbench's bundled OLTP Lua scripts against a sandbox
// server: Tables tables (sbtest.sbtest1...; default 1) of TableSize rows.
// A script of the tree (bench/lua) takes Options instead.
type Sysbench struct {
	Server    *sandbox.Server
	DB        string // default "sbtest"
	TableSize int
	Tables    int
	RandType  string // sysbench --rand-type; "" keeps its default
	// Options, when not nil, replace --tables and --table-size: the
	// options of a script that sizes its data itself.
	Options []string
}

// RunSpec bounds a sysbench run by transactions (Events), by time
// (Seconds), or both; 0 means no bound, and one of them must be set.
// Rate caps the transactions per second (0: as fast as it goes).
type RunSpec struct {
	Threads int
	Events  int
	Seconds int
	Rate    int
}

func (sb Sysbench) db() string {
	if sb.DB == "" {
		return "sbtest"
	}
	return sb.DB
}

func (sb Sysbench) args(script string, extra ...string) []string {
	a := []string{script, "--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=" + strconv.Itoa(sb.Server.Port),
		"--mysql-user=root", "--mysql-db=" + sb.db()}
	if sb.Options != nil {
		a = append(a, sb.Options...)
	} else {
		a = append(a, "--tables="+strconv.Itoa(max(sb.Tables, 1)), "--table-size="+strconv.Itoa(sb.TableSize))
	}
	if sb.RandType != "" {
		a = append(a, "--rand-type="+sb.RandType)
	}
	return append(a, extra...)
}

// Prepare creates the database and fills the table.
func (sb Sysbench) Prepare(ctx context.Context, script string) error {
	if _, err := exec.LookPath("sysbench"); err != nil {
		return ErrNoSysbench
	}
	db, err := sb.Server.Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+sb.db()+"`"); err != nil {
		return fmt.Errorf("sysbench prepare: create database %s: %w", sb.db(), err)
	}
	// One thread per table, as many as there are cores to fill them.
	return sb.exec(ctx, sb.args(script, "--threads="+strconv.Itoa(min(max(sb.Tables, 1), runtime.NumCPU())), "prepare"))
}

// Run runs the script's load.
func (sb Sysbench) Run(ctx context.Context, script string, spec RunSpec) error {
	if spec.Events <= 0 && spec.Seconds <= 0 {
		return fmt.Errorf("sysbench run: give events or seconds")
	}
	return sb.exec(ctx, sb.args(script, "--threads="+strconv.Itoa(max(spec.Threads, 1)),
		"--events="+strconv.Itoa(max(spec.Events, 0)), "--time="+strconv.Itoa(max(spec.Seconds, 0)),
		"--rate="+strconv.Itoa(max(spec.Rate, 0)), "run"))
}

func (sb Sysbench) exec(ctx context.Context, args []string) error {
	out, err := exec.CommandContext(ctx, "sysbench", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sysbench %s: %v\n%s", strings.Join(args, " "), err, Tail(string(out), 20))
	}
	return nil
}

// Tail returns the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
