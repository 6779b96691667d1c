package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/prepl/prepl/internal/readahead"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/txn"
)

// engine is the runtime: it feeds the sequencer what happens and does
// what the sequencer asks. Only its own goroutine touches it; workers,
// the renderer and the monitor talk to it through channels.
type engine struct {
	tgt     Target
	cfg     Config
	res     Resume
	seq     *sequencer.Sequencer
	workers []*worker
	render  *renderer
	rens    map[uint64]*rendering // by unit seq, until the unit commits or fails for good
	events  chan event
	waitCh  chan []ConnWait
	stats   Stats // what the runtime counts: reads, skips
	shared  *shared
	// stopWorkers cancels the context of the workers and the renderer.
	stopWorkers context.CancelFunc
	start       time.Time
	// silent is the source, which tells its silence (for Stats.Lag).
	silent Silent
}

// shared is what workers read and count, never the engine's state.
type shared struct {
	tgt      Target
	cfg      *Config
	render   *renderer
	events   chan event
	counters counters
}

type counters struct{ reconnects, compacted, fallbacks, rowEvents atomic.Uint64 }

func newEngine(tgt Target, res Resume, cfg Config) (*engine, error) {
	if err := res.init(); err != nil {
		return nil, err
	}
	unitTxns := cfg.UnitTxns
	if tgt.KeepsGTIDs() && !appliesEach(tgt) {
		unitTxns = 1 // one target transaction per source transaction
	}
	unitBytes, unitRows := unitLimits(tgt, cfg)
	s, err := sequencer.New(sequencer.Config{Mode: cfg.Mode, Workers: cfg.Workers, Retries: cfg.Retries,
		WindowBytes: cfg.WindowBytes, UnitTxns: unitTxns, UnitBytes: unitBytes, UnitRows: unitRows, Catalog: tgt.Tables(),
		Adapt: !cfg.FixedWorkers, WaitsVisible: cfg.Workers > 1, HeadStallAfter: headStallFallback},
		sequencer.Origin{Floor: position.Floor{GTIDPos: res.Position.GTIDPos, File: res.Position.File, Pos: res.Position.Pos},
			Slots: res.Slots})
	if err != nil {
		return nil, err
	}
	e := &engine{tgt: tgt, cfg: cfg, res: res, seq: s, rens: map[uint64]*rendering{},
		events: make(chan event, 4*cfg.Workers+4)}
	e.shared = &shared{tgt: tgt, cfg: &e.cfg, events: e.events}
	if id := cfg.ResolveDDL.ID; id != "" && res.Position.PendingDDL != id && !maybeApplied(tgt, id) {
		cfg.Log.Warn("--pending-ddl ignored: the stored position has no such DDL pending", "pending_ddl", id,
			"stored_pending_ddl", res.Position.PendingDDL)
	}
	return e, nil
}

// maybeApplied reports whether the target marks id's unit as interrupted
// with non-transactional writes (Target.MaybeApplied), which --pending-ddl
// also decides.
func maybeApplied(tgt Target, id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := tgt.MaybeApplied(ctx)
	return err == nil && got == id
}

// readerOf is the read-ahead the engine takes src's transactions from
// (Source.ReadAhead), and whether it is the engine's own (to close when
// the run ends).
func readerOf(src Source, limit int) (*readahead.Reader, bool) {
	if rd := src.ReadAhead(); rd != nil {
		return rd, false
	}
	return readahead.Start(readahead.FromNext(src.Next), int64(limit), src.AtHand), true
}

func (e *engine) run(ctx context.Context, src Source) (Stats, error) {
	e.start = time.Now()
	e.silent = src
	// Workers get their own context: a graceful stop (ctx) lets them finish.
	// Every goroutine started here has returned when run does.
	wctx, wcancel := context.WithCancel(context.Background())
	e.stopWorkers = wcancel
	defer e.closeWorkers()
	concurrency := e.seq.Concurrency()
	e.render = newRenderer(wctx, e.tgt, e.cfg.Workers, concurrency)
	e.shared.render = e.render
	for i := 0; i < e.cfg.Workers; i++ {
		w, err := newWorker(wctx, i+1, e.shared, i == 0 || e.cfg.FixedWorkers)
		if err != nil {
			return Stats{}, err
		}
		e.workers = append(e.workers, w)
	}
	var mon *monitor
	if e.cfg.Workers > 1 {
		mon = startMonitor(wctx, e.tgt, e.cfg.Log)
		e.waitCh = mon.waits
		defer mon.stop()
	}

	rd, own := readerOf(src, e.cfg.ReadAheadBytes)
	// stopReading stops the engine's own reader; a source's own read-ahead
	// is left to its caller, who closes it once Run returns.
	stopReading := func() {}
	if own {
		stopReading = func() { rd.Close(nil) } // Close may be called again
		defer stopReading()                    // the caller may close src once Run returns
	}
	reads := rd.Batches()
	// in is the batch being fed to the sequencer, from in.Txs[taken].
	var in readahead.Batch
	taken := 0
	backlog := func() bool { return taken < len(in.Txs) || in.Err != nil || len(reads) > 0 }

	var progress <-chan time.Time
	if e.cfg.ProgressEvery > 0 {
		t := time.NewTicker(e.cfg.ProgressEvery)
		defer t.Stop()
		progress = t.C
	}
	liveTick := time.NewTicker(liveEvery)
	defer liveTick.Stop()
	defer func() { e.cfg.Live.store(e.snapshot()) }()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	var monOff <-chan struct{}
	if mon != nil {
		monOff = mon.off
	}
	var srcErr error
	stopping := false
	for {
		now := time.Now()
		var delayUntil time.Time
		if e.cfg.Delay > 0 && e.cfg.Gate != nil {
			why := ""
			if taken < len(in.Txs) {
				tx := in.Txs[taken]
				if due, wait := delayDue(tx.Timestamp, e.cfg.Delay, now); wait {
					delayUntil = due
					why = fmt.Sprintf("%s committed %s, applied from %s", tx.GTID, tx.Timestamp.UTC().Format(time.RFC3339), due.UTC().Format(time.RFC3339))
				}
			}
			if e.cfg.Gate.Throttle(ThrottleDelay, why != "", why) && why != "" {
				e.cfg.Log.Debug("delaying", "until", delayUntil, "why", why)
			}
		}
		// A held gate (pause, throttling) feeds nothing new: what was
		// read before finishes, then the position holds still.
		held, gateCh := e.cfg.Gate.Held()
		e.seq.Tick(now, backlog() && !held)
		if err := e.perform(wctx); err != nil {
			return e.fail(err)
		}
		if mon != nil {
			mon.busy.Store(e.seq.Busy() > 1)
		}
		if c := e.seq.Concurrency(); c != concurrency {
			e.cfg.Log.Debug("units in flight", "from", concurrency, "to", c, "settled", e.seq.Settled(), "applied", e.seq.Stats().Txns)
			concurrency = c
			e.render.follow(c)
		}
		if e.seq.Done() {
			break
		}
		wants := e.seq.WantsInput() && !held
		if wants && taken < len(in.Txs) {
			tx := rd.Take(in, taken)
			taken++
			if taken == len(in.Txs) && in.Err == nil {
				rd.Recycle(in)
				in, taken = readahead.Batch{}, 0
			}
			e.read(tx, stopReading) // at the loop's time: a clock read is ~1% of a transaction's CPU here
			continue
		}
		if wants && in.Err != nil {
			if in.Err != io.EOF {
				srcErr = in.Err
			}
			e.seq.EndOfInput()
			in = readahead.Batch{}
			continue
		}
		var readCh <-chan readahead.Batch
		if wants {
			readCh = reads
		}
		var done <-chan struct{}
		if !stopping {
			done = ctx.Done()
		}
		var timerC <-chan time.Time
		if d := e.seq.Deadline(); !d.IsZero() || !delayUntil.IsZero() {
			if d.IsZero() || (!delayUntil.IsZero() && delayUntil.Before(d)) {
				d = delayUntil
			}
			timer.Reset(max(0, d.Sub(now)))
			timerC = timer.C
		}
		select {
		case <-timerC:
		case <-gateCh:
		case b, ok := <-readCh:
			if !ok {
				b.Err = io.EOF
			}
			in, taken = b, 0 // fed from the top of the loop
		case ev := <-e.events:
			e.seq.Tick(time.Now(), backlog())
			if err := e.handle(ev); err != nil {
				return e.fail(err)
			}
		case <-done:
			stopping = true
			e.seq.Stop()
			stopReading()
			e.cfg.Log.Info("stopping: finishing transactions in flight", "in_flight", e.seq.InFlight())
		case <-liveTick.C:
			e.cfg.Live.store(e.snapshot())
		case ws := <-e.waitCh:
			e.lockWaits(ws)
		case <-monOff:
			monOff = nil
			e.seq.LockWaitsUnseen()
			e.cfg.Log.Info("the target does not report lock waits: a later unit yields when the next to commit has run "+
				headStallFallback.String(), "fallback", headStallFallback)
		case <-progress:
			s := e.snapshot()
			e.cfg.Log.Info("progress", "applied", s.Txns, "rows", s.Rows, "transactions_per_second", s.Rate(),
				"lag_seconds", s.Lag.Seconds(), "retries", s.Retries, "position", s.Last.File+":"+fmt.Sprint(s.Last.Pos), "gtid", s.Last.LastGTID)
		}
		timer.Stop() // since Go 1.23 a stopped or reset timer delivers no stale fire
	}
	return e.snapshot(), srcErr
}

// read feeds one transaction to the sequencer, as the filter decides.
func (e *engine) read(t *txn.Txn, stopReading func()) {
	e.stats.Read++
	e.stats.ReadPos = position.Checkpoint{File: t.End.File, Pos: t.End.Offset, LastGTID: t.GTID, SourceTS: t.Timestamp}
	switch e.filter(t) {
	case Stop:
		e.seq.EndOfInput()
		stopReading()
	case Last:
		e.seq.Read(t, false)
		e.seq.EndOfInput()
		stopReading()
	case Skip:
		e.stats.Skipped++
		e.seq.Read(t, true)
	default:
		e.seq.Read(t, false)
	}
}

func (e *engine) filter(t *txn.Txn) Action {
	if e.res.Already(t) {
		return Skip
	}
	if e.cfg.Filter != nil {
		return e.cfg.Filter(t)
	}
	return Apply
}

// perform does the sequencer's actions until it has none.
func (e *engine) perform(ctx context.Context) error {
	for acts := e.seq.Ready(); len(acts) > 0; acts = e.seq.Ready() {
		for _, a := range acts {
			if err := e.do(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *engine) do(ctx context.Context, a sequencer.Action) error {
	u := a.Unit
	switch a.Kind {
	case sequencer.Admit:
		return e.admit(ctx, u)
	case sequencer.Start:
		j := job{unit: u, ren: e.rens[u.Seq()], pos: a.Pos, before: a.Before, commitNow: a.CommitNow, oldest: a.Oldest}
		if u.Txn.IsDDL() {
			j.ddl = true
			if e.cfg.ResolveDDL.ID == u.Txn.ID() {
				j.resolveDDL = e.cfg.ResolveDDL.As
			}
		}
		e.workers[a.Worker].jobs <- j
	case sequencer.Commit:
		e.workers[a.Worker].ctl <- ctlMsg{seq: u.Seq(), pos: a.Pos}
	case sequencer.Abort:
		e.workers[a.Worker].ctl <- ctlMsg{seq: u.Seq(), abort: true}
	case sequencer.Kill:
		kctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		id := e.workers[a.Worker].connID.Load()
		if err := e.tgt.Kill(kctx, id); err != nil {
			e.cfg.Log.Warn("kill query of a yielding transaction failed", "conn", id, "err", err)
		}
	}
	return nil
}

// admit loads the tables a unit changes, so that the tracker can compute
// its keys, and queues its SQL for rendering ahead.
func (e *engine) admit(ctx context.Context, u *sequencer.Unit) error {
	ap := u.Applied()
	for _, t := range ap {
		if !t.IsDDL() {
			err := e.tgt.Retry(ctx, "load table definitions", func() error { return e.tgt.Load(ctx, t) })
			if err != nil {
				return fmt.Errorf("%s: %w", t.ID(), err)
			}
		}
	}
	e.seq.Admitted(u.Seq())
	if !u.Txn.IsDDL() {
		// With kept GTIDs each member is a target transaction of its own:
		// nothing to compact.
		ren := &rendering{txs: ap, compact: !e.cfg.NoCompact && !appliesEach(e.tgt), done: make(chan struct{})}
		e.rens[u.Seq()] = ren
		e.render.add(ren)
	}
	return nil
}

type evKind uint8

const (
	evPrepared evKind = iota
	evCommitted
	evFailed
)

// event is what a worker reports about the unit it holds.
type event struct {
	kind evKind
	seq  uint64
	err  error
	// prefix, with a fatal evFailed: the members before the failing one
	// were committed, up to this position.
	prefix *sequencer.Prefix
	// speculative, with evFailed: the unit had started before the units
	// ahead of it committed (see sequencer.Failure).
	speculative bool
}

func (e *engine) handle(ev event) error {
	switch ev.kind {
	case evPrepared:
		e.seq.Prepared(ev.seq)
	case evCommitted:
		e.seq.Committed(ev.seq)
		delete(e.rens, ev.seq)
	case evFailed:
		f := sequencer.Failure{Class: e.tgt.Classify(ev.err), Yielded: errors.Is(ev.err, errYield), Err: ev.err, Prefix: ev.prefix,
			Speculative: ev.speculative}
		var fe fatalErr
		if errors.As(ev.err, &fe) {
			f.Final, f.Err = true, fe.error
		}
		if err := e.seq.Failed(ev.seq, f); err != nil {
			return err
		}
		e.cfg.Log.Debug("retry", "seq", ev.seq, "class", f.Class, "yielded", f.Yielded, "err", ev.err)
	}
	return nil
}

// lockWaits maps the target's connections to workers for the sequencer.
func (e *engine) lockWaits(ws []ConnWait) {
	byConn := map[uint64]int{}
	for i, w := range e.workers {
		if id := w.connID.Load(); id != 0 { // 0: not connected yet
			byConn[id] = i
		}
	}
	var out []sequencer.LockWait
	for _, cw := range ws {
		r, ok1 := byConn[cw.Requester]
		b, ok2 := byConn[cw.Blocker]
		switch {
		case ok1 && cw.Blocker == 0:
			out = append(out, sequencer.LockWait{Requester: r, Blocker: sequencer.BlockerUnknown})
		case ok1 && ok2:
			out = append(out, sequencer.LockWait{Requester: r, Blocker: b})
		}
	}
	e.seq.LockWaits(out)
}

func (e *engine) snapshot() Stats {
	q := e.seq.Stats()
	s := e.stats
	s.Txns, s.Rows, s.Bytes, s.Retries = q.Txns, q.Rows, q.Bytes, q.Retries
	s.Reconnects = e.shared.counters.reconnects.Load()
	s.CompactedRows, s.CompactFallbacks = e.shared.counters.compacted.Load(), e.shared.counters.fallbacks.Load()
	s.RowEvents = e.shared.counters.rowEvents.Load()
	s.Serialized = q.Serialized
	s.Elapsed = time.Since(e.start)
	s.Last = q.Last
	s.InFlight, s.QueueBytes, s.WindowBytes = q.InFlight, q.QueueBytes, e.seq.Config().WindowBytes
	s.Units, s.UnitHist, s.Errors, s.LastError = q.Units, q.UnitHist, q.Errors, q.LastError
	s.Concurrency, s.Yields, s.RetriesBy = q.Concurrency, q.Yields, q.RetriesBy
	s.Lag = lag(e.seq.Oldest(), e.silent, time.Now())
	s.Workers = make([]WorkerStat, len(e.workers))
	for i, w := range e.workers {
		s.Workers[i] = w.stat()
	}
	return s
}

func (e *engine) fail(err error) (Stats, error) {
	for _, w := range e.workers {
		w.abandon()
	}
	return e.snapshot(), err
}

// UnitBuckets are the upper bounds of Stats.UnitHist: commit units by
// number of source transactions; the last bucket counts everything larger.
var UnitBuckets = sequencer.UnitBuckets

// Silent is what lag needs of a Source: Source.Silence.
type Silent interface {
	Silence() time.Duration
}

// lag is Stats.Lag: the age at now of oldest, the oldest transaction read
// and not yet applied (admitted, or in the unit being formed), and at
// least the source's silence, so it is not 0 while the source is
// unreachable or work is pending.
func lag(oldest *txn.Txn, silent Silent, now time.Time) time.Duration {
	var d time.Duration
	if oldest != nil && !oldest.Timestamp.IsZero() {
		d = max(0, now.Sub(oldest.Timestamp))
	}
	if silent != nil {
		d = max(d, silent.Silence())
	}
	return d
}

// unitLimits are the unit's bytes and rows: the configured bytes, capped
// by the target's own limits (Target.UnitLimits), logged when they bind.
func unitLimits(tgt Target, cfg Config) (bytes, rows int) {
	bytes = cfg.UnitBytes
	r, b := tgt.UnitLimits()
	if b > 0 {
		if bytes <= 0 {
			bytes = sequencer.DefaultUnitBytes(cmp.Or(cfg.WindowBytes, sequencer.DefaultWindowBytes))
		}
		if b < bytes {
			bytes = b
		} else {
			b = 0 // does not bind
		}
	}
	if r > 0 || b > 0 {
		cfg.Log.Info("commit units sized to the target's write-set limits", "unit_rows", r, "unit_bytes", bytes)
	}
	return bytes, r
}
