package apply

import (
	"context"
	"sync/atomic"

	"github.com/prepl/prepl/compact"
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
}

const (
	renderPending int32 = iota
	renderByRenderer
	renderByWorker
)

type renderer struct {
	tgt   Target
	queue chan *rendering
	slots chan struct{} // units rendered ahead and not yet taken
	done  chan struct{} // closed when loop has returned
}

// newRenderer starts the goroutine: it renders up to ahead units not yet
// taken by a worker, from a queue of up to queue units.
func newRenderer(ctx context.Context, tgt Target, ahead, queue int) *renderer {
	r := &renderer{tgt: tgt, queue: make(chan *rendering, queue), slots: make(chan struct{}, ahead), done: make(chan struct{})}
	go r.loop(ctx)
	return r
}

// add queues x; with the queue full the worker renders it itself.
func (r *renderer) add(x *rendering) {
	select {
	case r.queue <- x:
	default:
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
		select {
		case r.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		if !x.state.CompareAndSwap(renderPending, renderByRenderer) {
			<-r.slots // a worker got there first
			continue
		}
		x.batch, x.err = renderUnit(ctx, r.tgt, x.txs, x.compact)
		close(x.done)
	}
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
		<-r.slots
	}
	return x.batch, x.err
}
