package cli

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
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/prepl/prepl/redact"
)

// PeakHeapProfile writes a heap profile to file whenever the live heap is
// the highest seen so far, measured by a collection every second (a cost
// the run pays only with PREPL_MEMPROFILE=FILE): what prepl holds at its
// peak, for go tool pprof -sample_index=inuse_space.
func PeakHeapProfile(file string) {
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

// Dispatch runs the command args names (args[0]) with the rest of args
// and returns the process's exit code: 0 done (or stopped on a signal
// with what was in flight finished), 2 a usage mistake, 128 + the signal
// for a command that stopped early on one (ErrInterrupted), else
// exitCode(err). usage is the help without a command; onSignal what a
// command logs at the first SIGINT/SIGTERM when it does not finish what
// is in flight.
func Dispatch(args []string, stdout, stderr io.Writer, usage func(io.Writer), onSignal map[string]string, exitCode func(error) int) int {
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
	for _, c := range commands() {
		if c.Name != args[0] {
			continue
		}
		ctx, stop := signalContext(onSignal[c.Name])
		defer stop()
		err := c.Run(ctx, args[1:], stdout, stderr)
		var sig signalError
		switch {
		case err == nil || errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, ErrInterrupted) && errors.As(context.Cause(ctx), &sig):
			// A command with nothing in flight to finish stopped early
			// on the signal: the shell's code for it.
			fmt.Fprintf(stderr, "prepl %s: %s\n", c.Name, redact.String(err.Error()))
			return 128 + int(sig.Signal)
		case ctx.Err() != nil && errors.Is(err, context.Canceled):
			// Stopped by SIGINT/SIGTERM before or while applying: what was
			// in flight is finished and the position is stored.
			fmt.Fprintf(stderr, "prepl %s: stopped on signal\n", c.Name)
			return 0
		case errors.Is(err, ErrUsage):
			fmt.Fprintf(stderr, "prepl %s: %s\n", c.Name, redact.String(err.Error()))
			return 2
		default:
			fmt.Fprintf(stderr, "prepl %s: error: %s\n", c.Name, redact.String(err.Error()))
			return exitCode(err)
		}
	}
	fmt.Fprintf(stderr, "prepl: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// ErrInterrupted is returned by a command that stopped early on SIGINT or
// SIGTERM with nothing in flight to finish (analyze): it exits with
// 128 + the signal's number, as a shell reports a process the signal
// ended.
var ErrInterrupted = errors.New("interrupted")

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
