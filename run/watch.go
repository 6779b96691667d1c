package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog/relay"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/position"
	pbar "github.com/prepl/prepl/progress"
	"github.com/prepl/prepl/sourceend"
)

// sourceEnd tells how far the source has written: a live source polled by
// sourceend.Poller, or the end of the files replayed.
type sourceEnd = sourceend.End

func isCanceled(err error) bool { return errors.Is(err, context.Canceled) }

// watchOptions say what a command's watch shows.
type watchOptions struct {
	info metrics.Info
	end  sourceEnd // nil: unknown
	// bar draws a progress bar on a terminal (a run that ends by itself).
	bar bool
	// sourceReconnects counts reconnections to the source (nil: none).
	sourceReconnects func() uint64
	// security says how each connection is protected, for the start line
	// (attribute pairs: source_tls, target_tls).
	security []any
	// gate is the run's pause and throttling (nil: none).
	gate *gateRun
	// channel counts the transactions prepl skip asked to leave out.
	channel *channelRun
	// relay is replicate's relay log (nil: none).
	relay *relay.Log
}

// watch runs beside the engine and reads its apply.Live snapshots: it
// serves /metrics and /status (--metrics-addr), logs progress lines with
// rate and lag (--progress) and notable events (caught up, retry storms,
// stop), and draws the progress bar.
type watch struct {
	ctx   context.Context // the command's: cancelled by SIGINT/SIGTERM
	log   *slog.Logger
	live  *apply.Live
	mon   *metrics.Monitor
	srv   *metrics.Server
	o     watchOptions
	every time.Duration
	bar   *pbar.Bar
	base  int64 // bar: offset where the run started (-1 unknown)

	stopOnce sync.Once
	stopCh   chan struct{}
	done     chan struct{}

	// Shared with HTTP handlers.
	mu       sync.Mutex
	state    string    // running, then done, stopped or failed
	lastRead uint64    // Stats.Read when last seen
	readAt   time.Time // when Stats.Read was last seen to move

	// Loop state.
	lastObserve, lastProgress time.Time
	lastLine                  apply.Stats // at the last progress line
	caughtUp                  bool
	retries                   []retrySample
	lastStorm                 time.Time
}

type retrySample struct {
	at             time.Time
	retries, txnsN uint64
}

const (
	watchTick    = 250 * time.Millisecond // as often as the engine refreshes Live
	observeEvery = time.Second
	// A retry storm: at least stormRetries retries within stormWindow, and
	// more retries than transactions applied; warned at most once per
	// stormQuiet.
	stormRetries = 100
	stormWindow  = 10 * time.Second
	stormQuiet   = time.Minute
)

// WatchOptions say how a run is watched.
type WatchOptions struct {
	Version     string        // prepl's, for the start line and /status
	MetricsAddr string        // HOST:PORT serving /metrics, /status, /pause, /resume ("": none)
	WebConfig   string        // exporter-toolkit web configuration of MetricsAddr
	Progress    time.Duration // a progress line this often (0: none)
	// Terminal is stderr when it is a terminal, where ProgressBar draws.
	Terminal    *pbar.Terminal
	ProgressBar bool
}

// startWatch starts the watch of a run that uses cfg: it sets cfg.Live
// (unless the run set it, to read it itself), binds --metrics-addr and
// logs the start line.
func startWatch(ctx context.Context, log *slog.Logger, cfg *apply.Config, f WatchOptions, channel string, o watchOptions) (*watch, error) {
	if cfg.Live == nil {
		cfg.Live = new(apply.Live)
	}
	cfg.ProgressEvery = 0 // the watch logs progress lines, with lag and rate over a window
	o.info.Version, o.info.Channel = f.Version, channel
	o.info.Mode, o.info.Workers = string(cfg.Mode), cfg.Workers
	if cfg.Workers < 1 {
		o.info.Mode = "serial"
	}
	w := &watch{ctx: ctx, log: log, live: cfg.Live, o: o, every: f.Progress, base: -1,
		stopCh: make(chan struct{}), done: make(chan struct{}), state: "running"}
	w.mon = metrics.New(cfg.Live.Stats, o.info, w.extra)
	if o.channel != nil && o.channel.role != nil {
		w.mon.SetRole(o.channel.role.metrics)
	}
	attrs := []any{"source", o.info.Source, "target", o.info.Target, "mode", o.info.Mode, "workers", o.info.Workers,
		"channel", channel, "version", f.Version}
	attrs = append(attrs, o.security...)
	if f.MetricsAddr != "" {
		h := w.mon.Handler()
		if o.gate != nil {
			h = o.gate.handlers(h)
		}
		srv, err := metrics.ListenWeb(f.MetricsAddr, h, f.WebConfig, log)
		if errors.Is(err, metrics.ErrWebConfig) {
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		if err != nil {
			return nil, err // exit 1, not 2: the address may be free again on a restart
		}
		w.srv = srv
		attrs = append(attrs, "metrics", srv.URL()+"/metrics", "status", srv.URL()+"/status")
	}
	if o.bar && f.Terminal != nil && f.ProgressBar {
		w.bar = pbar.NewBar(f.Terminal, o.info.Command, nil)
	}
	log.Info(o.info.Command+" started", attrs...)
	go w.loop()
	return w, nil
}

func (w *watch) loop() {
	defer close(w.done)
	t := time.NewTicker(watchTick)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			w.tick(now)
		case <-w.stopCh:
			return
		}
	}
}

func (w *watch) tick(now time.Time) {
	s, ok := w.live.Stats()
	if !ok {
		return
	}
	if x := w.extra(s); x.CaughtUp != w.caughtUp {
		if x.CaughtUp {
			w.log.Info("caught up with the source", "applied", s.Txns, "position", posString(s.Last), "gtid", s.Last.GTIDPos)
		}
		w.caughtUp = x.CaughtUp
	}
	if now.Sub(w.lastObserve) >= observeEvery {
		w.lastObserve = now
		w.mon.Observe(now, s)
		w.retryStorm(now, s)
	}
	if w.every > 0 && now.Sub(w.lastProgress) >= w.every {
		if !w.lastProgress.IsZero() {
			w.progressLine(s)
		}
		w.lastProgress = now
	}
	if w.bar != nil {
		w.drawBar(now, s)
	}
}

// extra is what the watch knows of snapshot s beyond it. HTTP handlers
// call it too, with the snapshot they show.
func (w *watch) extra(s apply.Stats) metrics.Extra {
	w.mu.Lock()
	if s.Read != w.lastRead || w.readAt.IsZero() {
		w.lastRead, w.readAt = s.Read, time.Now()
	}
	state, readAt := w.state, w.readAt
	w.mu.Unlock()
	x := metrics.Extra{State: state, BehindBytes: -1}
	if w.ctx.Err() != nil && state == "running" {
		x.State = "stopping"
	}
	if w.o.sourceReconnects != nil {
		x.SourceReconnects = w.o.sourceReconnects()
	}
	if w.o.gate != nil {
		x.Gate = w.o.gate.gate.State()
	}
	if w.o.channel != nil {
		x.SkipRequested = w.o.channel.skipped.Load()
	}
	if w.o.relay != nil {
		x.Relay = relayStatus(w.o.relay)
	}
	if w.o.end == nil {
		return x
	}
	end, ok := w.o.end.End()
	if !ok {
		return x
	}
	x.SourceEnd = &end
	x.CaughtUp = w.o.end.CaughtUp(s, readAt) || (state == "done" && w.o.info.Command == "replay")
	read := readPosition(s)
	if r, ok1 := w.o.end.Offset(read.File, read.Pos); ok1 {
		if e, ok2 := w.o.end.Offset(end.File, end.Pos); ok2 {
			x.BehindBytes = max(0, e-r)
		}
	}
	if x.CaughtUp {
		x.BehindBytes = 0 // what is left are events outside transactions (rotations, checkpoints)
	}
	return x
}

// relayStatus is the relay log's state for status and metrics.
func relayStatus(l *relay.Log) *metrics.Relay {
	st := l.Stats()
	r := &metrics.Relay{Dir: l.Dir(), Bytes: st.Bytes, Files: st.Files, Full: st.Full}
	if !st.Oldest.IsZero() {
		r.OldestSeconds = time.Since(st.Oldest).Seconds()
	}
	return r
}

// readPosition is where reading stands (sourceend.ReadPosition).
var readPosition = sourceend.ReadPosition

func posString(p position.Checkpoint) string {
	if p.File == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", p.File, p.Pos)
}

func (w *watch) progressLine(s apply.Stats) {
	x := w.extra(s)
	// The rate is over the time since the last progress line (--progress).
	rate := 0.0
	if d := s.Elapsed - w.lastLine.Elapsed; d > 0 && s.Txns >= w.lastLine.Txns {
		rate = float64(s.Txns-w.lastLine.Txns) / d.Seconds()
	}
	w.lastLine = s
	// Keys as in /status: numbers are numbers (seconds, bytes, per second).
	attrs := []any{"applied", s.Txns, "transactions_per_second", rate, "lag_seconds", s.Lag.Seconds(),
		"in_flight", s.InFlight, "queue_bytes", s.QueueBytes, "retries", s.Retries,
		"position", posString(s.Last), "gtid", s.Last.LastGTID}
	if x.BehindBytes >= 0 {
		attrs = append(attrs, "behind_bytes", x.BehindBytes)
	}
	if x.Gate.Paused || len(x.Gate.Throttled) > 0 {
		attrs = append(attrs, "held_by", strings.Join(x.Gate.Reasons(), ","))
	}
	if why := x.Gate.Throttled[apply.ThrottleDelay]; why != "" {
		attrs = append(attrs, "delay", why) // what --delay waits for, until when
	}
	if s.Skipped > 0 {
		attrs = append(attrs, "skipped", s.Skipped)
	}
	attrs = append(attrs, "rows", s.Rows)
	if why := Serialized(s.Serialized); why != "" {
		attrs = append(attrs, "serialized", why)
	}
	w.log.Info("progress", attrs...)
}

func (w *watch) retryStorm(now time.Time, s apply.Stats) {
	w.retries = append(w.retries, retrySample{now, s.Retries, s.Txns})
	for len(w.retries) > 2 && now.Sub(w.retries[1].at) >= stormWindow {
		w.retries = w.retries[1:]
	}
	a, z := w.retries[0], w.retries[len(w.retries)-1]
	retries, applied := z.retries-a.retries, z.txnsN-a.txnsN
	if retries < stormRetries || retries <= applied || now.Sub(w.lastStorm) < stormQuiet {
		return
	}
	w.lastStorm = now
	w.log.Warn("retry storm: transactions keep conflicting on the target", "retries", retries, "applied", applied,
		"over_seconds", z.at.Sub(a.at).Seconds(), "errors", s.Errors, "last_error", s.LastError,
		"hint", "fewer --workers, --mode commit-order, or a smaller --commit-unit conflict less")
}

func (w *watch) drawBar(now time.Time, s apply.Stats) {
	var done, total int64 = int64(s.Bytes), 0
	if w.o.end != nil {
		read := readPosition(s)
		end, ok := w.o.end.End()
		r, ok1 := w.o.end.Offset(read.File, read.Pos)
		e, ok2 := w.o.end.Offset(end.File, end.Pos)
		if ok && ok1 && ok2 {
			if w.base < 0 {
				w.base = r
			}
			done, total = r-w.base, e-w.base
		}
	}
	note := fmt.Sprintf("%d txn  %.0f txn/s", s.Txns, w.mon.Rates().Transactions)
	if s.Lag > 0 && w.o.info.Command != "replay" { // a replayed binlog may be days old
		note += fmt.Sprintf("  lag %s", s.Lag.Round(100*time.Millisecond))
	}
	w.bar.Update(now, done, total, note)
}

// finish stops the watch after the run: it publishes the final state,
// logs how the run ended and closes the HTTP server.
func (w *watch) finish(s apply.Stats, runErr error) {
	w.stopOnce.Do(func() { close(w.stopCh) })
	<-w.done
	if w.bar != nil {
		w.bar.Finish()
	}
	state := "done"
	switch {
	case runErr != nil && !(w.ctx.Err() != nil && isCanceled(runErr)):
		state = "failed"
	case w.ctx.Err() != nil:
		state = "stopped"
	}
	w.mon.Observe(time.Now(), s)
	w.mu.Lock()
	w.state = state
	w.mu.Unlock()
	attrs := []any{"applied", s.Txns, "skipped", s.Skipped, "elapsed_seconds", s.Elapsed.Seconds(),
		"transactions_per_second", s.Rate(), "position", posString(s.Last), "gtid", s.Last.GTIDPos}
	switch state {
	case "failed":
		w.log.Error("stopped by an error; the position stored is that of the last transaction committed", append(attrs, "err", runErr.Error())...)
	case "stopped":
		w.log.Info("stopped on signal: transactions in flight were finished and the position stored", attrs...)
	default:
		w.log.Info(w.o.info.Command+" done", attrs...)
	}
	if w.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		w.srv.Close(ctx)
	}
}

// Serialized lists how often transactions waited, by reason, most
// frequent first: "key-conflict=826 ddl=1".
func Serialized(m map[depend.Reason]uint64) string {
	var rs []depend.Reason
	for r, n := range m {
		if r != "" && n > 0 {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return m[rs[i]] > m[rs[j]] || m[rs[i]] == m[rs[j]] && rs[i] < rs[j] })
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s=%d", r, m[r])
	}
	return strings.Join(parts, " ")
}
