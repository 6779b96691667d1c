// Package apply runs transactions against a target: a scheduler that asks
// the dependency tracker what may start, workers on pinned target
// connections, commits in source order, conflict retries, and the position
// stored in the same transaction as the rows it covers.
package apply

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// Source yields complete transactions in stream order; io.EOF ends it.
type Source interface {
	Next(ctx context.Context) (*txn.Txn, error)
}

// Action is a filter's verdict on a transaction.
type Action int

const (
	Apply Action = iota // apply it
	Skip                // do not apply it, but count it in the position
	Stop                // stop before it
	Last                // apply it, then stop
)

// Config of one run.
type Config struct {
	Mode    depend.Mode
	Workers int // 0 or 1: one connection
	// Retries bounds how often one transaction is retried after a
	// deadlock or lock wait timeout while it is the oldest (like
	// slave_transaction_retries); conflicts of speculative work do not count.
	Retries int
	// WindowBytes bounds the bytes of transactions read ahead and not yet
	// committed (like slave_parallel_max_queued). A transaction larger than
	// the window runs alone.
	WindowBytes int
	// UnitTxns is the most consecutive source transactions applied on one
	// connection and committed as one target transaction (a commit unit).
	// Units commit in source order, so the target only shows source states.
	// 1 keeps one target transaction per source transaction.
	UnitTxns int
	// UnitBytes bounds a commit unit's size.
	UnitBytes int
	// NoCompact turns off compaction: by default a unit's changes to a
	// table are reduced to its net effect and sent as multi-row statements
	// (package compact); with NoCompact every row change is one statement.
	NoCompact bool
	// ResolveDDL is the user's word on a DDL a crash interrupted
	// (--pending-ddl ID=applied|not-applied): used only when the stored
	// position names that DDL as pending.
	ResolveDDL ResolveDDL
	// KeepGTID keeps one target transaction per source transaction, with
	// the source GTID in the target's binlog (implies UnitTxns 1).
	KeepGTID bool
	// Filter decides per transaction; nil applies everything.
	Filter func(*txn.Txn) Action
	// ReconnectTimeout bounds how long a broken target connection is
	// retried before the run fails.
	ReconnectTimeout time.Duration
	Log              *slog.Logger
	// ProgressEvery logs a progress line this often (0: never).
	ProgressEvery time.Duration
	// Live, when set, receives statistics snapshots while the run goes.
	Live *Live
}

func (c *Config) defaults() {
	if c.Mode == "" {
		c.Mode = depend.Writeset
	}
	if c.Workers < 1 {
		c.Workers = 1
		c.Mode = depend.Serial
	}
	if c.Retries <= 0 {
		c.Retries = 10
	}
	if c.WindowBytes <= 0 {
		c.WindowBytes = 64 << 20
	}
	if c.UnitTxns <= 0 || c.KeepGTID {
		c.UnitTxns = 1
	}
	if c.UnitBytes <= 0 {
		c.UnitBytes = min(4<<20, c.WindowBytes/2)
	}
	if c.ReconnectTimeout <= 0 {
		c.ReconnectTimeout = 60 * time.Second
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// ResolveDDL says whether the DDL of transaction ID took effect
// (mysql.DDLApplied or mysql.DDLNotApplied).
type ResolveDDL struct{ ID, As string }

// ParseResolveDDL parses "ID=applied" or "ID=not-applied".
func ParseResolveDDL(s string) (ResolveDDL, error) {
	id, as, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok || id == "" || (as != mysql.DDLApplied && as != mysql.DDLNotApplied) {
		return ResolveDDL{}, fmt.Errorf("--pending-ddl %q: want GTID=%s or GTID=%s (or FILE:POS=...)", s, mysql.DDLApplied, mysql.DDLNotApplied)
	}
	return ResolveDDL{ID: id, As: as}, nil
}

// Stats of a run. A snapshot: maps and slices are the caller's.
type Stats struct {
	Txns       uint64 // source transactions applied (committed)
	Skipped    uint64 // read and counted in the position, not applied (filtered or already applied)
	Rows       uint64
	Bytes      uint64
	Retries    uint64
	Serialized map[depend.Reason]uint64 // how often a transaction waited, by reason
	Elapsed    time.Duration
	Last       position.Checkpoint // last committed position

	Read     uint64              // source transactions read
	ReadPos  position.Checkpoint // end of the last transaction read (File, Pos, LastGTID, SourceTS)
	Lag      time.Duration       // now minus the source commit time of the oldest transaction not yet applied; 0 when caught up
	InFlight int                 // transactions read and not yet committed
	// QueueBytes of InFlight against the window (WindowBytes).
	QueueBytes, WindowBytes int
	Units                   uint64   // target commits of row transactions
	CompactedRows           uint64   // source row changes compaction made unnecessary
	CompactFallbacks        uint64   // units re-applied in source order after a compacted statement surprised
	UnitHist                []uint64 // commit units by source transactions, bounds UnitBuckets (+1 overflow)
	Workers                 []WorkerStat
	Reconnects              uint64
	Errors                  map[string]uint64 // failed attempts by class: conflict, retry, connection, fatal
	LastError               string
}

// Reasons of Stats.Serialized besides the tracker's: a unit larger than
// the window ran alone; the window was full, so reading waited.
const (
	ReasonBigTransaction depend.Reason = "big-transaction"
	ReasonWindowFull     depend.Reason = "window-full"
)

// sealQuiet is how long the source must stay quiet, while a worker waits
// for work, before the unit being formed is committed as it is;
// unitMaxWait bounds how long a unit forms while a worker waits.
const (
	sealQuiet   = time.Millisecond
	unitMaxWait = 20 * time.Millisecond
)

// Rate is applied transactions per second.
func (s Stats) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Txns) / s.Elapsed.Seconds()
}

// Run applies src to tgt until src ends (io.EOF), the filter says Stop,
// or ctx is cancelled (then what is in flight is finished and committed).
// A source error is returned after every complete transaction before it
// has been applied.
func Run(ctx context.Context, src Source, tgt *mysql.Target, res Resume, cfg Config) (Stats, error) {
	cfg.defaults()
	e, err := newEngine(tgt, res, cfg)
	if err != nil {
		return Stats{}, err
	}
	return e.run(ctx, src)
}

type state uint8

const (
	queued     state = iota // admitted, not yet allowed to start
	ready                   // allowed by the tracker, waiting for a worker
	running                 // body being applied
	prepared                // body applied, waiting for its commit turn
	committing              // commit sent
	retryWait               // failed as a conflict; runs again after its predecessors commit
)

type entry struct {
	tx     *txn.Txn // the unit as the tracker sees it (depend.Merge of the applied members)
	u      unit
	size   int                 // bytes of all members
	key    string              // commit-order key
	pos    position.Checkpoint // its slot's row once it commits (Floor set at its commit turn)
	before position.Checkpoint // its slot's row before it (for DDL)
	// floorAfter is the gapless position once it and everything before it
	// have committed.
	floorAfter position.Floor
	committed  bool
	st         state
	w          *worker
	retries    int
	aborted    bool // asked to yield; its failure is a conflict
	reason     depend.Reason
	started    time.Time // when its current attempt was dispatched
	ren        *rendering
	nApplied   int // members applied (not skipped)
}

type engine struct {
	tgt     *mysql.Target
	cfg     Config
	res     Resume
	tracker *depend.Tracker
	gtid    *position.Set // every admitted transaction, in stream order
	// Per slot: applied GTIDs, applied count, last admitted row.
	slotGTID    map[string]*position.Set
	slotApplied map[string]uint64
	slotLast    map[string]position.Checkpoint
	// admittedQ holds admitted units in stream order until they and all
	// before them have committed; floor is the gapless committed position.
	admittedQ []*entry
	floor     position.Floor

	entries map[uint64]*entry
	// orderQ holds, per commit-order key, the admitted seqs in order; the
	// head is the next to commit.
	orderQ   map[string][]uint64
	workers  []*worker
	idle     []*worker
	events   chan event
	inflight int // bytes admitted and not committed
	lastPos  position.Checkpoint
	stats    Stats
	counters counters
	ddlHold  bool     // a DDL is admitted: admit nothing more until it is done
	readyQ   []uint64 // allowed to start, waiting for a worker, ascending
	render   *renderer
	// stopWorkers cancels the context of the workers and the renderer.
	stopWorkers context.CancelFunc
	// waits counts what held admission back (big transactions, a full
	// window), beside the tracker's reasons.
	waits         map[depend.Reason]uint64
	windowStalled bool
	waitCh        chan []lockWait
}

type counters struct {
	txns, rows, bytes, retries, reconnects, compacted, fallbacks atomic.Uint64
}

func newEngine(tgt *mysql.Target, res Resume, cfg Config) (*engine, error) {
	if err := res.init(); err != nil {
		return nil, err
	}
	g, err := position.ParseSet(res.Position.GTIDPos)
	if err != nil {
		return nil, err
	}
	e := &engine{tgt: tgt, cfg: cfg, res: res, gtid: g,
		tracker: depend.New(cfg.Mode, tgt.Catalog),
		entries: map[uint64]*entry{}, orderQ: map[string][]uint64{}, waits: map[depend.Reason]uint64{},
		events:   make(chan event, 4*cfg.Workers+4),
		slotGTID: map[string]*position.Set{}, slotApplied: map[string]uint64{}, slotLast: map[string]position.Checkpoint{},
		floor: position.Floor{GTIDPos: res.Position.GTIDPos, File: res.Position.File, Pos: res.Position.Pos}}
	for slot, p := range res.Slots {
		if e.slotGTID[slot], err = position.ParseSet(p.GTIDPos); err != nil {
			return nil, err
		}
		e.slotApplied[slot], e.slotLast[slot] = p.Applied, p
	}
	e.lastPos = position.Checkpoint{Slot: SlotMain, GTIDPos: e.floor.GTIDPos, File: e.floor.File, Pos: e.floor.Pos}
	e.stats.UnitHist = make([]uint64, len(UnitBuckets)+1)
	if id := cfg.ResolveDDL.ID; id != "" && res.Position.PendingDDL != id {
		cfg.Log.Warn("--pending-ddl ignored: the stored position has no such DDL pending", "pending_ddl", id,
			"stored_pending_ddl", res.Position.PendingDDL)
	}
	return e, nil
}

type readResult struct {
	tx  *txn.Txn
	err error
}

func (e *engine) run(ctx context.Context, src Source) (Stats, error) {
	start := time.Now()
	// Workers get their own context: a graceful stop (ctx) lets them finish.
	// Every goroutine started here has returned when run does.
	wctx, wcancel := context.WithCancel(context.Background())
	e.stopWorkers = wcancel
	defer e.closeWorkers()
	for i := 0; i < e.cfg.Workers; i++ {
		w, err := newWorker(wctx, i+1, e)
		if err != nil {
			return Stats{}, err
		}
		e.workers = append(e.workers, w)
		e.idle = append(e.idle, w)
	}
	e.render = newRenderer(wctx, e.tgt, 2*e.cfg.Workers+2, 64*e.cfg.Workers+16)
	var mon *monitor
	if e.cfg.Workers > 1 {
		mon = startMonitor(wctx, e)
		defer mon.stop()
	}

	reads := make(chan readResult, 256)
	rctx, rcancel := context.WithCancel(ctx)
	readerDone := make(chan struct{})
	defer func() {
		rcancel()
		<-readerDone // the caller may close src once Run returns
	}()
	go func() {
		defer close(readerDone)
		defer close(reads)
		for {
			tx, err := src.Next(rctx)
			select {
			case reads <- readResult{tx, err}:
			case <-rctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()

	var progress <-chan time.Time
	if e.cfg.ProgressEvery > 0 {
		t := time.NewTicker(e.cfg.ProgressEvery)
		defer t.Stop()
		progress = t.C
	}

	liveTick := time.NewTicker(liveEvery)
	defer liveTick.Stop()
	defer func() { e.cfg.Live.store(e.snapshot(start)) }()

	var yieldTick <-chan time.Time
	if e.cfg.Workers > 1 {
		t := time.NewTicker(headStallCheck)
		defer t.Stop()
		yieldTick = t.C
	}

	var srcErr error
	f := &former{mode: e.cfg.Mode, maxTxns: e.cfg.UnitTxns, maxBytes: e.cfg.UnitBytes}
	reading := true
	stopping := false
	var quiet *time.Timer // runs while a worker waits and nothing is read
	for {
		// Seal the unit being formed when nothing more will come, or when
		// a worker waits for work and the source has been quiet for
		// sealQuiet: a live stream's pause, not a reader merely a step
		// behind while catching up (sealing then would make small units,
		// each paying a commit). Admit what the window allows.
		starved := !f.empty() && len(reads) == 0 && len(e.idle) > 0 && len(e.readyQ) == 0
		switch {
		case !reading:
			f.seal()
		case len(e.idle) > 0 && len(e.readyQ) == 0 && !f.empty() && time.Since(f.since) >= unitMaxWait:
			f.seal() // a steady trickle never goes quiet: do not let it add lag
		case starved && quiet == nil:
			quiet = time.NewTimer(sealQuiet)
		case !starved && quiet != nil:
			quiet.Stop()
			quiet = nil
		}
		var quietC <-chan time.Time
		if quiet != nil {
			quietC = quiet.C
		}
		for f.ready() && e.canAdmit(f.bytes) {
			if f.bytes > e.cfg.WindowBytes {
				e.waits[ReasonBigTransaction]++
			}
			if err := e.admit(wctx, f.take()); err != nil {
				return e.fail(start, err)
			}
			e.windowStalled = false
		}
		if f.ready() && !e.windowStalled && !e.ddlHold {
			e.windowStalled = true // counted once per stall
			e.waits[ReasonWindowFull]++
		}
		if err := e.dispatch(); err != nil {
			return e.fail(start, err)
		}
		if !reading && f.empty() && len(e.entries) == 0 {
			break
		}
		var readCh <-chan readResult
		if reading && !f.full() && !stopping {
			readCh = reads
		}
		var done <-chan struct{}
		if !stopping {
			done = ctx.Done()
		}
		select {
		case <-quietC:
			quiet = nil
			f.seal()
		case r, ok := <-readCh:
			if quiet != nil { // the source is not quiet: start over
				quiet.Stop()
				quiet = nil
			}
			switch {
			case !ok:
				reading = false
			case r.err == io.EOF:
				reading = false
			case r.err != nil:
				reading, srcErr = false, r.err
			default:
				e.stats.Read++
				e.stats.ReadPos = position.Checkpoint{File: r.tx.End.File, Pos: r.tx.End.Offset, LastGTID: r.tx.GTID, SourceTS: r.tx.Timestamp}
				switch e.filter(r.tx) {
				case Stop:
					reading = false
					rcancel()
				case Last:
					f.add(r.tx, false)
					reading = false
					rcancel()
				case Skip:
					e.stats.Skipped++
					if f.empty() {
						e.gtid.Add(r.tx) // nothing before it waits: the position moves with the next commit
					} else {
						f.add(r.tx, true)
					}
				default:
					f.add(r.tx, false)
				}
			}
		case ev := <-e.events:
			if err := e.handle(ev); err != nil {
				return e.fail(start, err)
			}
		case <-done:
			stopping, reading = true, false
			f.drop()
			rcancel()
			e.cfg.Log.Info("stopping: finishing transactions in flight", "in_flight", len(e.entries))
		case <-liveTick.C:
			e.cfg.Live.store(e.snapshot(start))
		case <-yieldTick:
			e.yieldToStalledHead()
		case ws := <-e.waitCh:
			e.lockWaits(ws)
		case <-progress:
			s := e.snapshot(start)
			e.cfg.Log.Info("progress", "applied", s.Txns, "rows", s.Rows, "rate", fmt.Sprintf("%.0f/s", s.Rate()),
				"retries", s.Retries, "position", s.Last.File+":"+fmt.Sprint(s.Last.Pos), "gtid", s.Last.LastGTID)
		}
	}
	s := e.snapshot(start)
	if srcErr != nil {
		return s, srcErr
	}
	return s, nil
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

func (e *engine) snapshot(start time.Time) Stats {
	s := e.stats
	s.Txns, s.Rows, s.Bytes, s.Retries = e.counters.txns.Load(), e.counters.rows.Load(), e.counters.bytes.Load(), e.counters.retries.Load()
	s.Reconnects = e.counters.reconnects.Load()
	s.CompactedRows, s.CompactFallbacks = e.counters.compacted.Load(), e.counters.fallbacks.Load()
	s.Serialized = e.tracker.Stats()
	for r, n := range e.waits {
		s.Serialized[r] += n
	}
	s.Elapsed = time.Since(start)
	s.Last = e.lastPos
	s.InFlight, s.QueueBytes, s.WindowBytes = len(e.entries), e.inflight, e.cfg.WindowBytes
	s.UnitHist = append([]uint64(nil), e.stats.UnitHist...)
	s.Errors = map[string]uint64{}
	for k, v := range e.stats.Errors {
		s.Errors[k] = v
	}
	if len(e.admittedQ) > 0 {
		if ts := e.admittedQ[0].u.txs[0].Timestamp; !ts.IsZero() {
			s.Lag = max(0, time.Since(ts))
		}
	}
	s.Workers = make([]WorkerStat, len(e.workers))
	for i, w := range e.workers {
		s.Workers[i] = w.stat()
	}
	return s
}

func (e *engine) fail(start time.Time, err error) (Stats, error) {
	for _, w := range e.workers {
		w.abandon()
	}
	return e.snapshot(start), err
}

func (e *engine) canAdmit(size int) bool {
	if e.ddlHold {
		return false
	}
	if len(e.entries) == 0 {
		return true // a transaction larger than the window runs alone
	}
	return e.inflight+size <= e.cfg.WindowBytes && len(e.entries) < 64*e.cfg.Workers
}

// admit hands a unit to the tracker and the commit order.
func (e *engine) admit(ctx context.Context, u unit) error {
	ap := u.applied()
	for _, t := range ap {
		if !t.IsDDL() {
			err := e.tgt.Retry(ctx, "load table definitions", func() error { return e.tgt.Catalog.LoadTxn(ctx, t) })
			if err != nil {
				return fmt.Errorf("%s: %w", mysql.TxnID(t), err)
			}
		}
	}
	if len(ap) == 0 {
		// Only skipped transactions: nothing to commit; the position
		// moves past them with the next commit.
		for _, m := range u.txs {
			e.gtid.Add(m)
		}
		return nil
	}
	t := depend.Merge(ap)
	key := depend.OrderKey(e.cfg.Mode, t)
	slot := slotOf(key)
	sg := e.slotGTID[slot]
	if sg == nil {
		sg, _ = position.ParseSet("")
		e.slotGTID[slot] = sg
	}
	size := 0
	for _, m := range u.txs {
		e.gtid.Add(m)
		sg.Add(m)
		size += m.Size
	}
	e.slotApplied[slot] += uint64(len(u.txs))
	last := u.last()
	// The commit-order key (depend.OrderKey) is "" in every mode but schema
	// and domain, which commit in order per key, each in its own slot.
	before := e.slotLast[slot]
	before.Slot = slot
	en := &entry{tx: t, u: u, nApplied: len(ap), size: size, key: key, before: before,
		pos: position.Checkpoint{Slot: slot, GTIDPos: sg.String(), File: last.End.File, Pos: last.End.Offset,
			LastGTID: last.GTID, SourceTS: last.Timestamp, Applied: e.slotApplied[slot]},
		floorAfter: position.Floor{GTIDPos: e.gtid.String(), File: last.End.File, Pos: last.End.Offset}}
	e.slotLast[slot] = en.pos
	if !t.IsDDL() {
		en.ren = &rendering{txs: ap, compact: !e.cfg.NoCompact, gtid: e.cfg.KeepGTID, done: make(chan struct{})}
		e.render.add(en.ren)
	}
	e.entries[t.Seq] = en
	e.orderQ[en.key] = append(e.orderQ[en.key], t.Seq)
	e.admittedQ = append(e.admittedQ, en)
	e.inflight += size
	if t.IsDDL() {
		e.ddlHold = true
	}
	e.tracker.Add(t)
	return nil
}
