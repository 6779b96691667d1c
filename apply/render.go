package apply

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/internal/budget"
	"github.com/prepl/prepl/txn"
)

// Rendering a unit's SQL (compaction, literals) is CPU work that need not
// wait for a worker connection: a renderer goroutine does it for the next
// units in admission order while the workers wait on the target, so on a
// machine with few cores prepl's CPU overlaps the server's instead of
// alternating with it. A worker that finds its unit not started renders it
// itself, so nothing ever waits for the renderer's queue.

// Planner is a Target that writes SQL for a plan the engine makes:
// compaction is planned before the target (compact.PlanUnit), which only
// says which members go verbatim as the source's own events, gives the
// table definitions, and renders the plan. A Target that is not a
// Planner renders units itself (Target.Render).
type Planner interface {
	Verbatim(ctx context.Context, tx *txn.Txn) (string, error)
	Lookup(ctx context.Context) compact.Lookup
	RenderPlan(ctx context.Context, txs []*txn.Txn, p compact.UnitPlan) (Batch, error)
}

// renderUnit plans a unit's members and has the target render the plan.
func renderUnit(ctx context.Context, tgt Target, txs []*txn.Txn, compaction bool) (Batch, error) {
	pl, ok := tgt.(Planner)
	if !ok || len(txs) == 1 && txs[0].XA { // an XA group's rows are the target's to read
		return tgt.Render(ctx, txs, compaction)
	}
	p, err := compact.PlanUnit(txs, func(tx *txn.Txn) (string, error) { return pl.Verbatim(ctx, tx) }, pl.Lookup(ctx), compaction)
	if err != nil {
		return nil, err
	}
	return pl.RenderPlan(ctx, txs, p)
}

type rendering struct {
	txs     []*txn.Txn
	compact bool // render the unit's net effect (package compact)

	state    atomic.Int32 // renderPending, renderByRenderer, renderByWorker
	done     chan struct{}
	batch    Batch
	err      error
	released atomic.Bool // the renderer's slot was given back
	// committed counts the members an earlier attempt committed, of a
	// unit applied one target transaction per member (runEach); -1: not
	// known. Only the worker that holds the unit touches it.
	committed int
}

const (
	renderPending int32 = iota
	renderByRenderer
	renderByWorker
)

// The renderer works for the units in flight, whose number the engine's
// controller chooses (sequencer.Concurrency), not for the --workers
// ceiling: with a limit of c units it keeps at most renderAhead(c)
// rendered units not yet taken (their SQL is memory outside the window)
// and queues at most renderQueue(c) units to render.
func renderAhead(limit int) int { return 2*limit + 2 }
func renderQueue(limit int) int { return 64*limit + 16 }

type renderer struct {
	tgt   Target
	queue chan *rendering // capacity renderQueue(ceiling); queued bounds its use
	done  chan struct{}   // closed when loop has returned
	// ahead holds a unit of 1 for each unit rendered by the renderer and
	// not yet taken: at most renderAhead(limit).
	ahead *budget.Budget

	mu     sync.Mutex
	queued int // units in queue, fewer than renderQueue(limit)
	limit  int // units in flight
}

// newRenderer starts the goroutine for up to ceiling units in flight,
// limit of them at first (follow changes it).
func newRenderer(ctx context.Context, tgt Target, ceiling, limit int) *renderer {
	limit = max(limit, 1)
	r := &renderer{tgt: tgt, queue: make(chan *rendering, renderQueue(max(ceiling, 1))), done: make(chan struct{}),
		limit: limit, ahead: budget.New(int64(renderAhead(limit)))}
	go r.loop(ctx)
	return r
}

// follow sets the number of units in flight the renderer works for.
func (r *renderer) follow(limit int) {
	r.mu.Lock()
	r.limit = max(limit, 1)
	r.mu.Unlock()
	r.ahead.SetLimit(int64(renderAhead(limit)))
}

// add queues x; with the queue full the worker renders it itself.
func (r *renderer) add(x *rendering) {
	r.mu.Lock()
	full := r.queued >= renderQueue(r.limit) || r.queued >= cap(r.queue)
	if !full {
		r.queued++
	}
	r.mu.Unlock()
	if !full {
		r.queue <- x // never blocks: queued counts what is in it
	}
}

func (r *renderer) loop(ctx context.Context) {
	defer close(r.done)
	for {
		var x *rendering
		select {
		case x = <-r.queue:
		case <-ctx.Done():
			return
		}
		r.mu.Lock()
		r.queued--
		r.mu.Unlock()
		if r.ahead.Acquire(ctx, 1) != nil {
			return
		}
		if !x.state.CompareAndSwap(renderPending, renderByRenderer) {
			r.ahead.Release(1) // a worker got there first
			continue
		}
		x.batch, x.err = renderUnit(ctx, r.tgt, x.txs, x.compact)
		close(x.done)
	}
}

// aheadNow is how many rendered units wait for a worker, and how many may.
func (r *renderer) aheadNow() (held, most int) {
	h, _, _ := r.ahead.Stats()
	return int(h), int(r.ahead.Limit())
}

// take returns the unit's batch: the renderer's, or one the worker
// renders now.
func (r *renderer) take(ctx context.Context, x *rendering) (Batch, error) {
	if x.state.CompareAndSwap(renderPending, renderByWorker) {
		x.batch, x.err = renderUnit(ctx, r.tgt, x.txs, x.compact)
		close(x.done)
	}
	select {
	case <-x.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if x.state.Load() == renderByRenderer && x.released.CompareAndSwap(false, true) {
		r.ahead.Release(1)
	}
	return x.batch, x.err
}
