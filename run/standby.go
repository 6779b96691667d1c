package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/mysql"
)

// DefaultTakeoverAfter is --takeover-after's default: the lease of the
// channel's lock. The target drops the lock of an active prepl silent for
// this long (dead, hung, cut off), and a waiting standby has it at once:
// with the claim and the resume (well under a second on a reachable
// target), a standby takes over within 10 s of the active's last sign of
// life. Shorter leases take over sooner and risk taking over from an
// active that was only slow to ping (it is then fenced: safe, not free).
const DefaultTakeoverAfter = 5 * time.Second

// ErrFenced is mysql.ErrFenced: this prepl lost its channel to another
// and must not write (cmd/prepl exits 3).
var ErrFenced = mysql.ErrFenced

// errStoppedWaiting ends a standby stopped (SIGINT, SIGTERM) while it
// waited: it applied nothing, and that is no failure.
var errStoppedWaiting = errors.New("stopped while waiting as a standby")

// stoppedWaiting is err, nil for a standby stopped while it waited.
func stoppedWaiting(err error) error {
	if errors.Is(err, errStoppedWaiting) {
		return nil
	}
	return err
}

// standbyOptions say how a run claims its channel.
type standbyOptions struct {
	standby       bool
	takeoverAfter time.Duration
	command       string
	watch         WatchOptions
}

// role is what the process is on its channel, for metrics and /status.
type role struct {
	waiting atomic.Bool
	since   atomic.Pointer[time.Time]
	epoch   atomic.Uint64
}

func (r *role) metrics() metrics.Role {
	m := metrics.Role{Standby: r.waiting.Load(), Epoch: r.epoch.Load()}
	if t := r.since.Load(); t != nil {
		m.ActiveSince = *t
	}
	return m
}

// lockChannel takes the channel: on a MySQL target, its lease and a
// raised epoch (mysql.ClaimChannel: as a standby, once the active goes);
// on PostgreSQL, its advisory lock.
func lockChannel(ctx context.Context, log *slog.Logger, tgt Target, so standbyOptions) (*channelRun, error) {
	m := MySQL(tgt)
	if m == nil {
		if so.standby {
			return nil, fmt.Errorf("%w: --standby needs a MySQL/MariaDB target: a PostgreSQL target's channel has no lease or "+
				"epoch yet, so a standby could not take over from a hung prepl, nor fence it; run one prepl per channel there, "+
				"restarted by its supervisor", ErrUsage)
		}
		release, err := tgt.LockChannel(ctx, channelLockWait)
		if err != nil {
			return nil, err
		}
		return &channelRun{unlock: release}, nil
	}
	r := new(role)
	o := mysql.ClaimOptions{Wait: channelLockWait, Standby: so.standby, Lease: so.takeoverAfter, Log: log}
	if so.standby {
		r.waiting.Store(true)
		stop, err := serveStandby(log, so, tgt.ChannelName(), r)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	cl, err := m.ClaimChannel(ctx, o)
	r.waiting.Store(false)
	if err != nil {
		if so.standby && ctx.Err() != nil {
			log.Info("standby stopped on signal while waiting: nothing applied", "channel", tgt.ChannelName())
			return nil, errStoppedWaiting
		}
		return nil, err
	}
	since := cl.Since
	r.since.Store(&since)
	r.epoch.Store(cl.Epoch)
	log.Info("channel claimed: this prepl is its active", "channel", tgt.ChannelName(), "epoch", cl.Epoch,
		"takeover_after", so.takeoverAfter.String())
	return &channelRun{unlock: cl.Release, claim: cl, role: r}, nil
}

// serveStandby serves /metrics and /status on --metrics-addr while a
// standby waits (prepl_standby 1, state "standby"); the run's own watch
// serves them once it is the active.
func serveStandby(log *slog.Logger, so standbyOptions, channel string, r *role) (stop func(), err error) {
	if so.watch.MetricsAddr == "" {
		return func() {}, nil
	}
	info := metrics.Info{Command: so.command, Version: so.watch.Version, Channel: channel}
	mon := metrics.New(func() (apply.Stats, bool) { return apply.Stats{}, false }, info, nil)
	mon.SetRole(r.metrics)
	srv, err := metrics.ListenWeb(so.watch.MetricsAddr, mon.Handler(), so.watch.WebConfig, log)
	if errors.Is(err, metrics.ErrWebConfig) {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if err != nil {
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Close(ctx)
	}, nil
}

// watchLost stops the run (ctx) when its channel is lost: the claim's
// lease could not be kept, or another prepl holds the lock. lost then
// says why.
func (cr *channelRun) watchLost(ctx context.Context) (rctx context.Context, lost func() error, stop func()) {
	if cr == nil || cr.claim == nil {
		return ctx, func() error { return nil }, func() {}
	}
	rctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-cr.claim.Lost:
			cancel(cr.claim.Err())
		case <-done:
		}
	}()
	return rctx, cr.claim.Err, func() { close(done); cancel(nil) }
}

// lostErr is the error of a run that lost its channel: err, when it
// says so already (a fenced commit), else why the channel was lost. A run
// that failed otherwise is asked whether it was fenced: its error is then
// a consequence (another prepl applied what it tried again).
func (cr *channelRun) lostErr(err, lost error) error {
	if err != nil && lost == nil && !errors.Is(err, mysql.ErrFenced) && cr != nil {
		if f := cr.claim.Fenced(context.Background()); f != nil {
			return fmt.Errorf("%w; the run stopped on an error met as a fenced process, nothing of it committed: %v", f, err)
		}
	}
	switch {
	case lost == nil || errors.Is(err, mysql.ErrFenced):
		return err
	case err == nil || isCanceled(err):
		return lost
	}
	return fmt.Errorf("%w (and %w)", lost, err)
}
