// Command prepl applies a MySQL/MariaDB row-based binlog to a target in
// parallel, committing in the source's order, with a crash-safe position.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/redact"
	prun "github.com/prepl/prepl/run"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// errUsage marks a command-line mistake: exit code 2. It is package run's
// (imported as prun here: main's run is the command dispatcher).
var errUsage = prun.ErrUsage

// Exit codes say whether running prepl again can help, for whoever runs
// it (systemd: RestartPreventExitStatus=2 in docs/prepl.service).
const (
	exitOK = 0
	// exitRetry: a fault a restart may fix (source or target unreachable
	// or gone, a lost connection past its reconnect timeout, the last
	// binlog file ending inside a transaction that is still being
	// written). The position is stored: a restart resumes.
	exitRetry = 1
	// exitFatal: a mistake a restart cannot fix: wrong usage or config,
	// a damaged or non-row-based binlog (from a file, or met twice at the
	// same place in a live stream), a target that diverged from the
	// source, something prepl does not support.
	exitFatal = 2
)

// exitCode classifies the error a command ended with.
func exitCode(err error) int {
	var fe *binlog.FormatError
	var se *statusError
	switch {
	case errors.As(err, &se): // prepl status: a Nagios-style state
		return se.code
	case errors.Is(err, errUsage):
		return exitFatal
	case errors.As(err, &fe):
		if errors.Is(err, binlog.ErrIncomplete) {
			return exitRetry
		}
		return exitFatal
	case errors.Is(err, mysql.ErrRowCount), errors.Is(err, mysql.ErrUnsupported), mysql.Diverged(err), postgres.Diverged(err):
		return exitFatal // the target diverged: someone must repair it, or skip
	case errors.Is(err, postgres.ErrRefusedDDL), errors.Is(err, postgres.ErrNotTranslated), errors.Is(err, postgres.ErrUnsupported),
		errors.Is(err, postgres.ErrNoTable), errors.Is(err, postgres.ErrOptions):
		return exitFatal // a PostgreSQL target cannot take it: the user must (--skip-gtid, or a fix of the source)
	case errors.As(err, new(*mysql.PendingDDLError)), errors.As(err, new(*mysql.PendingRowsError)):
		return exitFatal // a restart cannot answer the question; the user must
	case errors.Is(err, mysql.ErrTooLarge):
		return exitFatal // the target's max_allowed_packet must be raised first
	}
	return exitRetry
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// onSignal is what a command logs at the first SIGINT/SIGTERM when it is
// not what an applying command does (finish what is in flight).
var onSignal = map[string]string{
	"analyze": "signal received: stopping at once; the report covers the transactions read (send again to exit without it)",
}

var commands = []command{
	{"replicate", "apply a live source's binlog to a target", runReplicate},
	{"replay", "apply binlog files to a target (point-in-time recovery)", runReplay},
	{"status", "print the positions stored on a target and the live status; exit 0/1/2 as a Nagios check", runStatus},
	{"copy", "copy a consistent snapshot of the source's tables to a MySQL or PostgreSQL target", runCopy},
	{"verify", "compare source and target row by row (MySQL or PostgreSQL target); exit 1 on a difference", runVerifyCmd},
	{"skip", "record that a channel's next run leaves one transaction out (by GTID or FILE:OFFSET)", runSkip},
	{"reset", "delete a channel's stored position for a fresh start (optionally at --start-gtid)", runReset},
	{"analyze", "tell how much parallelism a binlog holds and the speedup to expect", runAnalyze},
	{"bench", "benchmark prepl against MariaDB's parallel replica on sandbox servers", runBench},
	{"completion", "write a shell completion script: prepl completion bash|zsh", runCompletion},
	{"man", "write prepl's man page (roff) made from the commands' help", runMan},
	{"version", "print prepl's version", runVersion},
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `prepl applies a MySQL/MariaDB row-based binlog to a target server in parallel,
committing in the source's order, with its position kept crash-safe in the target.

Usage: prepl COMMAND [flags]

Commands:
`)
	for _, c := range allCommands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun `prepl COMMAND --help` for a command's flags and an example.\n")
}

func main() {
	// prepl's heap is mostly the transactions in flight, bounded by
	// --memory-budget; a higher GC target than Go's default trades some
	// memory for about a third less CPU spent collecting (measured on a
	// sysbench binlog), and the soft memory limit the applying commands
	// set (memlimit.go) caps what that trade may take. GOGC in the
	// environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if f := os.Getenv("PREPL_MEMPROFILE"); f != "" {
		go peakHeapProfile(f)
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

// peakHeapProfile writes a heap profile to file whenever the live heap is
// the highest seen so far, measured by a collection every second (a cost
// the run pays only with PREPL_MEMPROFILE=FILE): what prepl holds at its
// peak, for go tool pprof -sample_index=inuse_space.
func peakHeapProfile(file string) {
	var peak uint64
	var ms runtime.MemStats
	for range time.Tick(time.Second) {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc <= peak {
			continue
		}
		peak = ms.HeapAlloc
		if out, err := os.Create(file); err == nil {
			pprof.Lookup("heap").WriteTo(out, 0)
			out.Close()
		}
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-V") {
		args[0] = "version"
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		ctx, stop := signalContext(onSignal[c.name])
		defer stop()
		err := c.run(ctx, args[1:], stdout, stderr)
		var sig signalError
		switch {
		case err == nil || errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errInterrupted) && errors.As(context.Cause(ctx), &sig):
			// A command with nothing in flight to finish stopped early
			// on the signal: the shell's code for it.
			fmt.Fprintf(stderr, "prepl %s: %s\n", c.name, redact.String(err.Error()))
			return 128 + int(sig.Signal)
		case ctx.Err() != nil && errors.Is(err, context.Canceled):
			// Stopped by SIGINT/SIGTERM before or while applying: what was
			// in flight is finished and the position is stored.
			fmt.Fprintf(stderr, "prepl %s: stopped on signal\n", c.name)
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "prepl %s: %s\n", c.name, redact.String(err.Error()))
			return exitFatal
		default:
			fmt.Fprintf(stderr, "prepl %s: error: %s\n", c.name, redact.String(err.Error()))
			return exitCode(err)
		}
	}
	fmt.Fprintf(stderr, "prepl: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// errInterrupted is returned by a command that stopped early on SIGINT or
// SIGTERM with nothing in flight to finish (analyze): it exits with
// 128 + the signal's number, as a shell reports a process the signal
// ended.
var errInterrupted = errors.New("interrupted")

// signalError is the cause of a signal context's cancellation.
type signalError struct{ syscall.Signal }

func (e signalError) Error() string { return "signal " + e.Signal.String() }

// signalContext is cancelled by the first SIGINT/SIGTERM (its cause a
// signalError), which logs msg (default: an applying command's: prepl
// then finishes and commits what is in flight and exits 0). A second
// signal exits at once; the position in the target is consistent either
// way.
func signalContext(msg string) (context.Context, func()) {
	if msg == "" {
		msg = "signal received: finishing transactions in flight (send again to stop at once)"
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-ch:
			slog.Default().Warn(msg, "signal", sig.String())
			s, _ := sig.(syscall.Signal)
			cancel(signalError{s})
		case <-ctx.Done():
			return
		}
		// Exiting drops the target connections: the server rolls back what
		// was not committed, and every commit carries its own position.
		sig := <-ch
		slog.Default().Warn("second signal: exiting at once; uncommitted work is rolled back by the target", "signal", sig.String())
		if s, ok := sig.(syscall.Signal); ok {
			os.Exit(128 + int(s))
		}
		os.Exit(130)
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(fs.Output(), "Usage: prepl version\n\nPrints prepl's version.") }
	if introspecting(fs, args) {
		return errIntrospect
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "prepl %s\n", version)
	return nil
}

func usageErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %v", errUsage, err)
}
