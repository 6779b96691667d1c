package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
)

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var af applyFlags
	af.register(fs, "default")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl status --target URL [--channel NAME] [--metrics-addr HOST:PORT]

Prints the position prepl stored in the target for a channel and, with
--metrics-addr, the live status of the prepl serving there: read and applied
positions, lag, rates, workers, last error. Either part may be asked alone.

Example:
  prepl status --target mysql://root@127.0.0.1:3306 --channel replay
  prepl status --config /etc/prepl/prepl.toml   # target and metrics-addr from the file

Flags:
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if _, err := af.logger(stderr); err != nil { // warnings about secrets' files
		return err
	}
	if af.target == "" && af.metricsAddr != "" {
		return printLive(ctx, stdout, af.metricsAddr, true)
	}
	err := printStored(ctx, stdout, &af)
	if af.metricsAddr == "" {
		if err == nil {
			fmt.Fprintln(stdout, "live: not asked (give --metrics-addr HOST:PORT of the running prepl for its live status)")
		}
		return err
	}
	printLive(ctx, stdout, af.metricsAddr, false)
	return err
}

// printStored prints the positions stored on the target for the channel.
func printStored(ctx context.Context, stdout io.Writer, af *applyFlags) error {
	af.reconnect = 0 // a status check answers now, it does not wait for the target
	tgt, err := af.openTarget(ctx)
	if err != nil {
		return err
	}
	defer tgt.Close()
	ps, err := tgt.Positions(ctx)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		fmt.Fprintf(stdout, "channel %q: no position stored on %s\n", af.channel, tgt.Endpoint)
		return nil
	}
	slots := make([]string, 0, len(ps))
	for s := range ps {
		slots = append(slots, s)
	}
	sort.Strings(slots)
	for _, s := range slots {
		p := ps[s]
		fmt.Fprintf(stdout, "channel %q slot %q: applied %d, position %s:%d, gtid %s, last %s, source time %s",
			af.channel, s, p.Applied, p.File, p.Pos, p.GTIDPos, p.LastGTID, p.SourceTS.Local().Format("2006-01-02 15:04:05.000000 -07:00 MST"))
		if p.PendingDDL != "" {
			fmt.Fprintf(stdout, ", DDL %s may be half-done", p.PendingDDL)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}
