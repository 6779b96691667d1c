package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/txn"
)

// channelLockWait is how long a run waits for the channel's lock: a prepl
// killed a moment ago may still hold it until the target notices.
const channelLockWait = 10 * time.Second

// channelRun is what a run holds on its channel besides its position: the
// channel's lock (prepl skip and prepl reset refuse while it is held) and
// the transactions `prepl skip` asked it to leave out.
type channelRun struct {
	unlock  func() // lets the channel's lock go
	skipped atomic.Uint64
	// requested are the transactions prepl skip asked to leave out, by
	// GTID or FILE:OFFSET, as the run started; read-only.
	requested map[string]bool
}

// requestedSkip reports whether prepl skip named the transaction: the
// binlog reader then drops one too big to hold (--max-txn-size) instead
// of refusing it.
func (cr *channelRun) requestedSkip(gtid string, start txn.Position) bool {
	return gtid != "" && cr.requested[gtid] || cr.requested[start.String()]
}

// claimChannel takes the channel's lock and installs the skip requests in
// cfg.Filter: a transaction named there is skipped (counted in the
// position, not applied) with a log line.
func claimChannel(ctx context.Context, log *slog.Logger, tgt target, cfg *apply.Config) (*channelRun, error) {
	release, err := tgt.lockChannel(ctx, channelLockWait)
	if err != nil {
		return nil, err
	}
	cr := &channelRun{unlock: release}
	skips, err := tgt.skipRequests(ctx)
	if err != nil {
		release()
		return nil, err
	}
	// A request already marked done stays in force: the mark is not
	// written in the transaction that stores the position past it, so
	// after a crash between the two the transaction comes again and must
	// be skipped again. Its GTID or start cannot come back otherwise
	// (prepl reset deletes the requests).
	want := map[string]bool{}    // requested, pending or done
	pending := map[string]bool{} // not yet marked done
	for _, s := range skips {
		want[s.txn] = true
		if !s.done {
			pending[s.txn] = true
			log.Info("a transaction will be skipped (prepl skip)", "txn", s.txn, "channel", tgt.channelName())
		}
	}
	if len(want) == 0 {
		return cr, nil
	}
	cr.requested = maps.Clone(want)
	inner := cfg.Filter
	cfg.Filter = func(t *txnT) apply.Action {
		id := ""
		switch {
		case t.GTID != "" && want[t.GTID]:
			id = t.GTID
		case want[t.Start.String()]:
			id = t.Start.String()
		}
		if id == "" {
			if inner != nil {
				return inner(t)
			}
			return apply.Apply
		}
		delete(want, id)
		cr.skipped.Add(1)
		log.Warn("skipping a transaction as prepl skip asked: not applied, counted in the position", "txn", mysql.TxnID(t),
			"position", t.Start.String(), "channel", tgt.channelName())
		if pending[id] {
			mctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tgt.markSkipped(mctx, id); err != nil {
				log.Warn("could not mark the skip request done", "txn", id, "err", err)
			}
			mysql.CrashPoint("after-skip-mark", t)
		}
		return apply.Skip
	}
	return cr, nil
}

func (cr *channelRun) release() {
	if cr != nil {
		cr.unlock()
	}
}

// channelFlags are the flags of the commands that change a channel's
// stored state: prepl skip and prepl reset.
type channelFlags struct {
	target  string
	channel string
	secrets secretFlags
}

func (c *channelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.target, "target", "", "target server URL: mysql://USER@HOST:PORT (required; password as for replicate)")
	fs.StringVar(&c.channel, "channel", "default", "channel whose position to change (replay's is \"replay\")")
	c.secrets.register(fs)
}

// open connects to the target and refuses when a prepl runs on the
// channel (it holds the channel's lock).
func (c *channelFlags) open(ctx context.Context) (*mysql.Target, error) {
	if c.target == "" {
		return nil, fmt.Errorf("%w: --target is required", errUsage)
	}
	if postgres.IsURL(c.target) {
		return nil, fmt.Errorf("%w: prepl skip and prepl reset change a MySQL target's channel; with a PostgreSQL target, "+
			"run replicate or replay with --skip-gtid GTID, or change prepl.position there by hand", errUsage)
	}
	e, err := c.secrets.endpoint(c.target, &c.secrets.target)
	if err != nil {
		return nil, err
	}
	tgt, err := mysql.Open(ctx, e, c.channel)
	if err != nil {
		return nil, err
	}
	if h := tgt.ChannelHolder(ctx); h != "" {
		tgt.Close()
		return nil, fmt.Errorf("a prepl runs on channel %q (it holds the lock %q%s): stop it first; changing a running channel's "+
			"position is refused", c.channel, mysql.LockName(c.channel), h)
	}
	return tgt, nil
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
	var id string
	switch {
	case (*gtid == "") == (*pos == ""):
		return fmt.Errorf("%w: give one of --gtid and --position", errUsage)
	case *gtid != "":
		if _, err := position.ParseMariaGTID(*gtid); err != nil && !strings.Contains(*gtid, ":") {
			return fmt.Errorf("%w: --gtid %q: want a MariaDB GTID D-S-N or a MySQL UUID:N", errUsage, *gtid)
		}
		id = *gtid
	default:
		f, off, ok := strings.Cut(*pos, ":")
		n, err := strconv.ParseUint(off, 10, 32)
		if !ok || f == "" || err != nil {
			return fmt.Errorf("%w: --position %q: want FILE:OFFSET (e.g. binlog.000042:1234)", errUsage, *pos)
		}
		id = fmt.Sprintf("%s:%d", filepath.Base(f), n)
	}
	tgt, err := cf.open(ctx)
	if err != nil {
		return err
	}
	defer tgt.Close()
	if err := tgt.AddSkip(ctx, id); err != nil {
		return fmt.Errorf("record the skip on target %s: %w", tgt.Endpoint, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	log.Info("skip recorded: the channel's next run leaves this transaction out", "txn", id, "channel", cf.channel)
	fmt.Fprintf(stdout, "channel %s: transaction %s will be skipped by the next run\n", cf.channel, id)
	// A channel with no stored position is a first run to come, or a
	// mistyped name: then the run that stopped on the transaction never
	// sees the skip and stops on it again.
	if chs, err := storedChannels(ctx, tgt.DB); err == nil && !slices.Contains(chs, cf.channel) {
		have := "none"
		if len(chs) > 0 {
			have = strings.Join(chs, ", ")
		}
		warn(log, stdout, fmt.Sprintf("channel %s has no stored position on this target (channels that have one: %s): the skip waits for "+
			"a run of channel %s; if the name is mistyped, record it again with the right --channel", cf.channel, have, cf.channel))
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
	tgt, err := cf.open(ctx)
	if err != nil {
		return err
	}
	defer tgt.Close()
	ps, err := tgt.Positions(ctx)
	if err != nil {
		return err
	}
	if !*yes {
		fmt.Fprintf(stderr, "Reset channel %q on %s: delete its %d stored position rows", cf.channel, tgt.Endpoint, len(ps))
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
	if err := tgt.ResetPositions(ctx); err != nil {
		return fmt.Errorf("reset channel %q on %s: %w", cf.channel, tgt.Endpoint, err)
	}
	if err := tgt.ResetSkips(ctx); err != nil {
		return fmt.Errorf("reset channel %q on %s: %w", cf.channel, tgt.Endpoint, err)
	}
	if *start != "" {
		p := position.Checkpoint{Slot: apply.SlotMain, GTIDPos: *start, Floor: position.Floor{GTIDPos: *start}}
		if err := tgt.StorePosition(ctx, p); err != nil {
			return fmt.Errorf("store the start position of channel %q on %s: %w", cf.channel, tgt.Endpoint, err)
		}
	}
	fmt.Fprintf(stdout, "channel %s reset", cf.channel)
	if *start != "" {
		fmt.Fprintf(stdout, ": the next run starts after %s", *start)
	}
	fmt.Fprintln(stdout)
	return nil
}
