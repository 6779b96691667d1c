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

	"github.com/prepl/prepl/metrics"
	prun "github.com/prepl/prepl/run"
)

// prepl status is a Nagios-style check (prun.Health): its first line is
// the verdict, its exit code the state.
const (
	statusOK       = prun.StatusOK
	statusWarning  = prun.StatusWarning
	statusCritical = prun.StatusCritical
)

var statusNames = prun.StatusNames

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var af applyFlags
	// status takes only the flags it uses of the applying commands' set.
	all := flag.NewFlagSet("", flag.ContinueOnError)
	af.register(all, prun.DefaultChannel)
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

	var h prun.Health
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
		h.JudgeLive(live, af.metricsAddr, *maxLag)
	} else {
		fmt.Fprintln(&report, "live: not asked (give --metrics-addr HOST:PORT of the running prepl for its live status)")
	}
	h.JudgeMissing(missing, live, af.metricsAddr)
	fmt.Fprintln(stdout, h.Verdict())
	stdout.Write(report.Bytes())
	return h.Err()
}

// printStored prints the positions stored on the target: of --channel if
// given, else of every channel. It returns the channels asked for that
// have none ("" when the target has no position at all); it fails only on
// a usage mistake, and notes an unreachable target in h.
func printStored(ctx context.Context, w io.Writer, af *applyFlags, channelGiven bool, h *prun.Health) ([]string, error) {
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
		h.Problem(prun.StatusCritical, "cannot read the target: %v", err)
		return nil, nil
	}
	defer tgt.Close()
	stored, err := tgt.Channels(ctx)
	if err != nil {
		fmt.Fprintf(w, "target %s: %v\n", tgt, err)
		h.Problem(prun.StatusCritical, "cannot read the positions on %s: %v", tgt, err)
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
			h.Problem(prun.StatusCritical, "cannot read the position of channel %q on %s: %v", ch, tgt, err)
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
		if m := prun.MySQL(tgt); m != nil { // who applies the channel (docs/standby.md)
			if a := m.ChannelActive(ctx, ch); a != "" {
				fmt.Fprintf(w, "channel %q: active prepl: %s\n", ch, a)
			}
			if s := m.ChannelStandby(ctx, ch); s != "" {
				fmt.Fprintf(w, "channel %q: a standby waits: %s\n", ch, s)
			}
		}
		if half, err := tgt.HalfApplied(ctx, ch); err != nil {
			h.Problem(prun.StatusWarning, "cannot read the maybe-applied marker of channel %q on %s: %v", ch, tgt, err)
		} else if half != "" {
			fmt.Fprintf(w, "channel %q: %s\n", ch, half)
		}
		h.Note("channel %q applied %d", ch, total)
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
