package run

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/binlog/relay"
	"github.com/prepl/prepl/filter"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/prefetch"
)

// Options say what a run does. The fields above the Replay and Replicate
// groups are for both.
type Options struct {
	Log *slog.Logger
	// Config is the engine's; its Filter, Gate and Live are the run's to set.
	Config apply.Config
	// Tables is the table filter (--include, --exclude, --rewrite-schema;
	// nil: every table), composed after the command's own filter.
	Tables  *filter.Filter
	Target  TargetOptions
	Secrets *Secrets // the target's (and --throttle-replica's) passwords and TLS
	// Limits cap the binlog reader; ReadAheadBytes is what it may decode
	// ahead of the engine.
	Limits         binlog.Limits
	ReadAheadBytes int64
	// Prefetch is the number of read-ahead connections (MySQL targets; 0: off).
	Prefetch int
	Gate     GateOptions
	Watch    WatchOptions
	// Standby waits for the channel's active prepl to go, then takes the
	// channel over (MySQL/MariaDB targets). TakeoverAfter is the lease of
	// the channel's lock, standby or not: the target drops the lock of an
	// active silent this long (0: DefaultTakeoverAfter). docs/standby.md.
	Standby       bool
	TakeoverAfter time.Duration

	// Replay: the files, in order, and what to select of them.
	Files     []string
	Select    *Selection
	AllowGaps bool
	// DryRun, when set, applies nothing and says what would be applied.
	DryRun *DryRun

	// Replicate: the source and where to start and stop.
	Source          mysql.Endpoint
	StartGTID       string   // when the target has no stored position
	UntilGTID       string   // stop after it (inclusive)
	SkipGTIDs       []string // leave these out, the position still moving past them
	StopAtEnd       bool     // end once what the source had at the start is applied
	ServerID        uint32
	Heartbeat       time.Duration
	SourceReconnect time.Duration
	// Relay, when its Dir is set, keeps what is read from the source in
	// relay files before it is applied (package binlog/relay).
	Relay relay.Options
}

// Summary is how a run ended.
type Summary struct {
	// Ran: the engine ran, and Stats are its figures (the summary to print).
	Ran   bool
	Stats apply.Stats
	// Warnings are for the end of the output, where a DBA reading the
	// summary sees them.
	Warnings []string
}

// runner holds the steps Replay and Replicate share: open (the target,
// its checks, the channel's claim, the resume point), then apply (the
// gate, the watch, the prefetch, apply.Run, stop), then close.
type runner struct {
	o       Options
	command string // replicate, replay
	log     *slog.Logger
	cfg     apply.Config
	tgt     Target
	ch      *channelRun
	res     apply.Resume
}

func newRunner(o Options, command string) *runner {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	if o.Secrets == nil {
		o.Secrets = new(Secrets)
	}
	return &runner{o: o, command: command, log: log, cfg: o.Config}
}

// open opens the target and checks it, claims the channel (with claim:
// its lock and the skip requests, installed in the filter) and loads the
// resume point.
func (r *runner) open(ctx context.Context, claim bool) error {
	tgt, err := OpenTarget(ctx, r.o.Target, r.o.Secrets)
	if err != nil {
		return err
	}
	r.tgt = tgt
	if err := tgt.CheckStart(ctx, r.log, r.cfg); err != nil {
		return err
	}
	if claim {
		so := standbyOptions{standby: r.o.Standby, takeoverAfter: r.o.TakeoverAfter, command: r.command, watch: r.o.Watch}
		if so.takeoverAfter <= 0 {
			so.takeoverAfter = DefaultTakeoverAfter
		}
		if r.ch, err = claimChannel(ctx, r.log, tgt, &r.cfg, so); err != nil {
			return err
		}
	}
	r.res, err = apply.LoadResume(ctx, tgt)
	return err
}

// close lets the channel go and closes the target.
func (r *runner) close() {
	r.ch.release()
	if r.tgt != nil {
		r.tgt.Close()
	}
}

// apply runs the engine on src with the gate, the watch (wo) and the
// prefetch around it. end, when set, may change the run's error before
// the watch reports it.
func (r *runner) apply(ctx context.Context, src apply.Source, wo watchOptions, end func(error) error) (Summary, error) {
	ctx, lost, stopLost := r.ch.watchLost(ctx)
	defer stopLost()
	gate, rctx, err := startGate(ctx, r.log, statusDB(r.tgt), r.o.Gate, r.o.Secrets, &r.cfg)
	if err != nil {
		return Summary{}, err
	}
	wo.gate, wo.channel = gate, r.ch
	wo.security = append(wo.security, "target_tls", r.tgt.Security(ctx))
	w, err := startWatch(ctx, r.log, &r.cfg, r.o.Watch, r.o.Target.Channel, wo)
	if err != nil {
		return Summary{}, gate.stop(rctx, err)
	}
	at, stopPrefetch := withPrefetch(r.log, r.tgt, r.o.Prefetch)
	stats, err := apply.Run(rctx, src, at, r.res, r.cfg)
	stopPrefetch()
	err = gate.stop(rctx, err)
	if end != nil {
		err = end(err)
	}
	err = r.ch.lostErr(err, lost())
	w.finish(stats, err)
	return Summary{Ran: true, Stats: stats}, err
}

// withPrefetch wraps the target in n read-ahead connections; stop ends
// them and logs what they did. Without them it is the target itself.
func withPrefetch(log *slog.Logger, tgt Target, n int) (t apply.Target, stop func()) {
	if n <= 0 {
		return tgt, func() {}
	}
	m := MySQL(tgt)
	if m == nil {
		log.Warn("--prefetch reads ahead on MySQL/MariaDB targets only: ignored")
		return tgt, func() {}
	}
	p := prefetch.Wrap(m, n)
	return p, func() {
		st := p.Stop()
		log.Info("prefetch done", "connections", n, "selects", st.Queries.Load(), "failed", st.Failed.Load(),
			"dropped_queue_full", st.Dropped.Load())
	}
}

// filesSource names the files a replay reads, for logs and /status.
func filesSource(files []string) string {
	switch len(files) {
	case 0:
		return ""
	case 1:
		return files[0]
	}
	return fmt.Sprintf("%s ... %s (%d files)", files[0], files[len(files)-1], len(files))
}
