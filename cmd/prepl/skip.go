package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/prepl/prepl/apply"
	prun "github.com/prepl/prepl/run"
)

// channelFlags are the flags of the commands that change a channel's
// stored state: prepl skip and prepl reset.
type channelFlags struct {
	target  string
	channel string
	secrets prun.Secrets
}

func (c *channelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.target, "target", "", "target URL: mysql://USER@HOST:PORT or postgres://USER@HOST:PORT/DB (required; password as for replicate)")
	fs.StringVar(&c.channel, "channel", prun.DefaultChannel, "channel whose position to change (replay's is \""+prun.ReplayChannel+"\")")
	registerSecrets(fs, &c.secrets)
}

func runSkip(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("skip", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf channelFlags
	cf.register(fs)
	gtid := fs.String("gtid", "", "GTID of the transaction to skip (MariaDB D-S-N or MySQL UUID:N)")
	pos := fs.String("position", "", "FILE:OFFSET where the transaction to skip begins (for a binlog without GTIDs)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl skip --target URL [--channel C] (--gtid GTID | --position FILE:OFFSET)

Records in the target (table prepl.skip) that the channel's next run leaves
out one transaction, as MariaDB's sql_slave_skip_counter or a changed
gtid_slave_pos do for a replica: the run logs it, counts it, and moves its
position past it without applying it. Use it when prepl stopped on a
transaction the target cannot take (a diverged row, a DDL it refuses) and
the target is known right without it. Refused while a prepl runs on the
channel.

Examples:
  prepl skip --target mysql://root@127.0.0.1:3306 --channel default --gtid 0-1-1234
  prepl skip --target mysql://root@127.0.0.1:3306 --channel replay --position binlog.000042:1234

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	id, err := prun.SkipID(*gtid, *pos)
	if err != nil {
		return err
	}
	tgt, err := prun.OpenIdle(ctx, cf.target, cf.channel, &cf.secrets)
	if err != nil {
		return err
	}
	defer tgt.Close()
	msg, err := prun.AddSkip(ctx, tgt, id)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	log.Info("skip recorded: the channel's next run leaves this transaction out", "txn", id, "channel", cf.channel)
	fmt.Fprintf(stdout, "channel %s: transaction %s will be skipped by the next run\n", cf.channel, id)
	if msg != "" {
		warn(log, stdout, msg)
	}
	return nil
}

func runReset(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reset", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf channelFlags
	cf.register(fs)
	start := fs.String("start-gtid", "", "GTID position the next run starts after (MariaDB gtid_slave_pos form 0-1-100,1-1-5,\n"+
		"or a MySQL GTID set); empty: no position, the next run starts from its --start-gtid or the beginning")
	yes := fs.Bool("yes", false, "do not ask for confirmation (for scripts)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl reset --target URL [--channel C] [--start-gtid GTIDS] [--yes]

Deletes the channel's stored positions, prepared XA transactions and skip
requests from the target, for a fresh start, as RESET SLAVE and SET GLOBAL
gtid_slave_pos do for a replica; with --start-gtid the next run starts
after that GTID position. Asks for confirmation unless --yes. Refused while
a prepl runs on the channel.

Example:
  prepl reset --target mysql://root@127.0.0.1:3306 --channel default --start-gtid 0-1-5000 --yes

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	tgt, err := prun.OpenIdle(ctx, cf.target, cf.channel, &cf.secrets)
	if err != nil {
		return err
	}
	defer tgt.Close()
	ps, err := tgt.Checkpoints(ctx)
	if err != nil {
		return err
	}
	if !*yes {
		fmt.Fprintf(stderr, "Reset channel %q on %s: delete its %d stored position rows", cf.channel, tgt, len(ps))
		if p, ok := ps[apply.SlotMain]; ok {
			fmt.Fprintf(stderr, " (now at %s:%d gtid %s)", p.File, p.Pos, p.GTIDPos)
		}
		if *start != "" {
			fmt.Fprintf(stderr, " and start after %s", *start)
		}
		fmt.Fprint(stderr, "? Type yes: ")
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if strings.TrimSpace(line) != "yes" {
			return fmt.Errorf("%w: not confirmed; nothing changed (--yes skips the question)", errUsage)
		}
	}
	if err := prun.Reset(ctx, tgt, *start); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "channel %s reset", cf.channel)
	if *start != "" {
		fmt.Fprintf(stdout, ": the next run starts after %s", *start)
	}
	fmt.Fprintln(stdout)
	return nil
}
