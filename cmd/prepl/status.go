package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/redact"
	prun "github.com/prepl/prepl/run"
)

// prepl status is a Nagios-style check: its first line is the verdict,
// its exit code the state.
const (
	statusOK       = 0 // positions stored, the live prepl (if asked) running and within --max-lag
	statusWarning  = 1 // the live prepl failed, cannot read its source or target, or lags past --max-lag
	statusCritical = 2 // target or live prepl unreachable, or no position stored
)

var statusNames = [...]string{"OK", "WARNING", "CRITICAL"}

// statusError ends a status check that is not OK; its code is the exit
// code.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// health gathers a check's findings.
type health struct {
	code     int
	problems []string // what makes it WARNING or CRITICAL
	notes    []string // what is fine, for the OK line
	perf     string   // Nagios performance data
}

func (h *health) problem(code int, format string, args ...any) {
	h.code = max(h.code, code)
	h.problems = append(h.problems, fmt.Sprintf(format, args...))
}

func (h *health) note(format string, args ...any) {
	h.notes = append(h.notes, fmt.Sprintf(format, args...))
}

// verdict is the first line: STATE: what, | performance data.
func (h *health) verdict() string {
	what := h.problems
	if h.code == statusOK {
		what = h.notes
	}
	line := statusNames[h.code] + ": " + strings.Join(what, "; ")
	if h.perf != "" {
		line += " | " + h.perf
	}
	return redact.String(line)
}

func (h *health) err() error {
	if h.code == statusOK {
		return nil
	}
	return &statusError{code: h.code, msg: redact.String(statusNames[h.code] + ": " + strings.Join(h.problems, "; "))}
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var af applyFlags
	// status takes only the flags it uses of the applying commands' set.
	all := flag.NewFlagSet("", flag.ContinueOnError)
	af.register(all, "default")
	keepFlags(fs, all, "target", "channel", "metrics-addr", "log-format", "log-level", "reconnect-timeout", "defaults-file",
		"strict-permissions", "target-password-file", "target-defaults-file", "target-ssl-mode", "target-ssl-ca", "target-ssl-cert", "target-ssl-key")
	af.secrets.ConfigPath = func() string { // --config is on fs, not on all
		if f := fs.Lookup("config"); f != nil {
			return f.Value.String()
		}
		return ""
	}
	maxLag := fs.Duration("max-lag", 0, "WARNING (exit 1) when the live prepl at --metrics-addr lags more than this (0: lag is not checked)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl status --target URL [--channel NAME] [--metrics-addr HOST:PORT] [--max-lag DURATION]

Prints the positions prepl stored in the target, for every channel or for
--channel NAME, and, with --metrics-addr, the live status of the prepl
serving there: read and applied positions, lag, rates, workers, last error.
Either part may be asked alone.

It is a Nagios-style check: the first line is the verdict and the exit code
its state:
  0 OK        positions stored; the live prepl (if asked) runs, within --max-lag
  1 WARNING   the live prepl failed, cannot read its source or reach its target,
              or lags more than --max-lag
  2 CRITICAL  the target or the live prepl does not answer, or no position is
              stored (and no live prepl is starting on that channel)

Example:
  prepl status --target mysql://root@127.0.0.1:3306
  prepl status --config /etc/prepl/prepl.toml --max-lag 60s   # target and metrics-addr from the file

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if _, err := af.logger(stderr); err != nil { // warnings about secrets' files
		return err
	}
	switch {
	case af.target == "" && af.metricsAddr == "":
		return fmt.Errorf("%w: give --target (the stored positions), --metrics-addr (the live status) or both", errUsage)
	case *maxLag < 0:
		return fmt.Errorf("%w: --max-lag must be 0 or more", errUsage)
	case *maxLag > 0 && af.metricsAddr == "":
		return fmt.Errorf("%w: --max-lag needs --metrics-addr: the lag is what the running prepl measures", errUsage)
	}
	channelGiven := false
	fs.Visit(func(f *flag.Flag) { channelGiven = channelGiven || f.Name == "channel" })

	var h health
	var report bytes.Buffer
	var missing []string // channels without a stored position ("": no channel at all)
	if af.target != "" {
		var err error
		if missing, err = printStored(ctx, &report, &af, channelGiven, &h); err != nil {
			return err
		}
	}
	var live *metrics.Status
	if af.metricsAddr != "" {
		live = printLive(ctx, &report, af.metricsAddr)
		judgeLive(&h, live, af.metricsAddr, *maxLag)
	} else {
		fmt.Fprintln(&report, "live: not asked (give --metrics-addr HOST:PORT of the running prepl for its live status)")
	}
	judgeMissing(&h, missing, live, af.metricsAddr)
	fmt.Fprintln(stdout, h.verdict())
	stdout.Write(report.Bytes())
	return h.err()
}

// printStored prints the positions stored on the target: of --channel if
// given, else of every channel. It returns the channels asked for that
// have none ("" when the target has no position at all); it fails only on
// a usage mistake, and notes an unreachable target in h.
func printStored(ctx context.Context, w io.Writer, af *applyFlags, channelGiven bool, h *health) ([]string, error) {
	af.reconnect = 0   // a status check answers now, it does not wait for the target
	af.readOnly = true // and writes nothing: no prepl schema made where there was none
	to, err := af.targetOptions()
	if err != nil {
		return nil, err
	}
	tgt, err := prun.OpenTarget(ctx, to, &af.secrets)
	if errors.Is(err, errUsage) {
		return nil, err
	}
	if err != nil {
		fmt.Fprintf(w, "target: %v\n", err)
		h.problem(statusCritical, "cannot read the target: %v", err)
		return nil, nil
	}
	defer tgt.Close()
	stored, err := tgt.Channels(ctx)
	if err != nil {
		fmt.Fprintf(w, "target %s: %v\n", tgt, err)
		h.problem(statusCritical, "cannot read the positions on %s: %v", tgt, err)
		return nil, nil
	}
	channels := stored
	if channelGiven {
		channels = []string{af.channel}
	}
	if len(channels) == 0 {
		fmt.Fprintf(w, "no position stored on %s for any channel\n", tgt)
		return []string{""}, nil
	}
	var missing []string
	for _, ch := range channels {
		ps, err := tgt.ChannelPositions(ctx, ch)
		if err != nil {
			h.problem(statusCritical, "cannot read the position of channel %q on %s: %v", ch, tgt, err)
			continue
		}
		if len(ps) == 0 {
			fmt.Fprintf(w, "channel %q: no position stored on %s", ch, tgt)
			if len(stored) > 0 {
				fmt.Fprintf(w, " (channels with a position: %s; status without a channel shows them all)", strings.Join(stored, ", "))
			}
			fmt.Fprintln(w)
			missing = append(missing, ch)
			continue
		}
		var total uint64
		for _, s := range sortedSlots(ps) {
			p := ps[s]
			total += p.Applied
			fmt.Fprintf(w, "channel %q slot %q: applied %d, position %s:%d, gtid %s, last %s, source time %s",
				ch, s, p.Applied, p.File, p.Pos, p.GTIDPos, p.LastGTID, p.SourceTS.Local().Format("2006-01-02 15:04:05.000000 -07:00 MST"))
			if p.PendingDDL != "" {
				fmt.Fprintf(w, ", DDL %s may be half-done", p.PendingDDL)
			}
			fmt.Fprintln(w)
		}
		if half, err := tgt.HalfApplied(ctx, ch); err != nil {
			h.problem(statusWarning, "cannot read the maybe-applied marker of channel %q on %s: %v", ch, tgt, err)
		} else if half != "" {
			fmt.Fprintf(w, "channel %q: %s\n", ch, half)
		}
		h.note("channel %q applied %d", ch, total)
	}
	return missing, nil
}

func sortedSlots[V any](ps map[string]V) []string {
	slots := make([]string, 0, len(ps))
	for s := range ps {
		slots = append(slots, s)
	}
	sort.Strings(slots)
	return slots
}

// judgeMissing: no stored position is CRITICAL, unless the live prepl
// runs on that channel and has not committed yet (a fresh start on an
// idle source).
func judgeMissing(h *health, missing []string, live *metrics.Status, addr string) {
	for _, ch := range missing {
		starting := live != nil && (ch == "" || live.Channel == ch) && live.State != "failed"
		switch {
		case starting:
			h.note("channel %q: nothing applied yet by the prepl at %s", live.Channel, addr)
		case ch == "":
			h.problem(statusCritical, "no position stored on the target for any channel")
		default:
			h.problem(statusCritical, "no position stored for channel %q", ch)
		}
	}
}

// judgeLive notes what the live status says; live is nil when nothing
// answered at addr.
func judgeLive(h *health, live *metrics.Status, addr string, maxLag time.Duration) {
	if live == nil {
		h.problem(statusCritical, "no prepl answers at %s", addr)
		return
	}
	warn := ""
	if maxLag > 0 {
		warn = fmt.Sprintf("%g", maxLag.Seconds())
	}
	h.perf = fmt.Sprintf("lag=%.3fs;%s;;0", live.LagSeconds, warn)
	what := fmt.Sprintf("prepl %s on channel %q", live.Command, live.Channel)
	if live.State == "failed" {
		h.problem(statusWarning, "%s failed: %s", what, live.LastError)
	}
	if e := live.SourceEnd; e != nil && e.Error != "" {
		h.problem(statusWarning, "%s cannot read the source: %s", what, e.Error)
	}
	reconnecting := 0
	for _, w := range live.WorkerStates {
		if w.State == "reconnecting" {
			reconnecting++
		}
	}
	if reconnecting > 0 {
		h.problem(statusWarning, "%s: %d of %d workers reconnecting to the target", what, reconnecting, len(live.WorkerStates))
	}
	if maxLag > 0 && live.LagSeconds > maxLag.Seconds() {
		h.problem(statusWarning, "%s lags %.1fs, more than --max-lag %s", what, live.LagSeconds, maxLag)
	}
	h.note("%s %s, lag %.3fs", what, live.State, live.LagSeconds)
}
