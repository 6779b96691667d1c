// Command prepl applies a MySQL/MariaDB row-based binlog to a target in
// parallel, committing in the source's order, with a crash-safe position.
//
// Each command is a file here that declares its flags and help, parses
// them into the options of the package that does the work (run for
// replicate, replay, status, skip and reset; snapshot, analyze, bench),
// calls it and prints what it returns. internal/cli is the command-line
// toolkit: GNU-style flags, --config, completion, the man page.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"github.com/prepl/prepl/internal/cli"
	prun "github.com/prepl/prepl/run"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// errUsage marks a command-line mistake: exit code 2. It is package run's
// (imported as prun here: main's run is the command dispatcher).
var errUsage = prun.ErrUsage

// Exit codes say whether running prepl again can help, for whoever runs
// it (systemd: RestartPreventExitStatus=2 in docs/prepl.service): exitRetry
// for a fault a restart may fix, the position stored; exitFatal for a
// mistake it cannot fix (package fault's rule; prun.Fatal says which).
const (
	exitOK    = 0
	exitRetry = 1
	exitFatal = 2
	// exitFenced: another prepl took the channel over (--standby) and this
	// one was fenced: nothing of what it had in flight committed. Restart
	// it only as a standby (docs/standby.md).
	exitFenced = 3
)

// exitCode classifies the error a command ended with (prun.Fatal).
func exitCode(err error) int {
	var se *prun.StatusError
	switch {
	case errors.As(err, &se): // prepl status: a Nagios-style state
		return se.Code
	case errors.Is(err, prun.ErrFenced):
		return exitFenced
	case prun.Fatal(err):
		return exitFatal
	}
	return exitRetry
}

// onSignal is what a command logs at the first SIGINT/SIGTERM when it is
// not what an applying command does (finish what is in flight).
var onSignal = map[string]string{
	"analyze": "signal received: stopping at once; the report covers the transactions read (send again to exit without it)",
}

var commands = []command{
	{Name: "replicate", Summary: "apply a live source's binlog to a target", Run: runReplicate},
	{Name: "replay", Summary: "apply binlog files to a target (point-in-time recovery)", Run: runReplay},
	{Name: "status", Summary: "print the positions stored on a target and the live status; exit 0/1/2 as a Nagios check", Run: runStatus},
	{Name: "copy", Summary: "copy a consistent snapshot of the source's tables to a MySQL or PostgreSQL target", Run: runCopy},
	{Name: "verify", Summary: "compare source and target row by row (MySQL or PostgreSQL target); exit 1 on a difference", Run: runVerifyCmd},
	{Name: "skip", Summary: "record that a channel's next run leaves one transaction out (by GTID or FILE:OFFSET)", Run: runSkip},
	{Name: "reset", Summary: "delete a channel's stored position for a fresh start (optionally at --start-gtid)", Run: runReset},
	{Name: "analyze", Summary: "tell how much parallelism a binlog holds and the speedup to expect", Run: runAnalyze},
	{Name: "bench", Summary: "benchmark prepl against MariaDB's parallel replica on sandbox servers", Run: runBench},
	{Name: "completion", Summary: "write a shell completion script: prepl completion bash|zsh", Run: cli.Completion},
	{Name: "man", Summary: "write prepl's man page (roff) made from the commands' help", Run: cli.ManCommand(version, usage)},
	{Name: "version", Summary: "print prepl's version", Run: cli.VersionCommand(version)},
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `prepl applies a MySQL/MariaDB row-based binlog to a target server in parallel,
committing in the source's order, with its position kept crash-safe in the target.

Usage: prepl COMMAND [flags]

Commands:
`)
	for _, c := range allCommands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintf(w, "\nRun `prepl COMMAND --help` for a command's flags and an example.\n")
}

func main() {
	// prepl's heap is mostly the transactions in flight, bounded by
	// --memory-budget; a higher GC target than Go's default trades some
	// memory for about a third less CPU spent collecting (measured on a
	// sysbench binlog), and the soft memory limit the applying commands
	// set (run/memory.go) caps what that trade may take. GOGC in the
	// environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if f := os.Getenv("PREPL_MEMPROFILE"); f != "" {
		go cli.PeakHeapProfile(f)
	}
	// PREPL_CPUPROFILE=FILE writes a Go CPU profile of the run, for
	// looking into where prepl's own time goes (go tool pprof).
	if f := os.Getenv("PREPL_CPUPROFILE"); f != "" {
		if out, err := os.Create(f); err == nil && pprof.StartCPUProfile(out) == nil {
			code := run(os.Args[1:], os.Stdout, os.Stderr)
			pprof.StopCPUProfile()
			out.Close()
			os.Exit(code)
		}
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command args name: its exit code (cli.Dispatch).
func run(args []string, stdout, stderr io.Writer) int {
	return cli.Dispatch(args, stdout, stderr, usage, onSignal, exitCode)
}

// errInterrupted is returned by a command that stopped early on SIGINT or
// SIGTERM with nothing in flight to finish (analyze): exit 128 + the
// signal's number.
var errInterrupted = cli.ErrInterrupted

func usageErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %v", errUsage, err)
}
