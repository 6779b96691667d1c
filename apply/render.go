package apply

import (
	"context"
	"sync/atomic"

	"github.com/prepl/prepl/txn"
)

// Rendering a unit's SQL (compaction, literals) is CPU work that need not
// wait for a worker connection: a renderer goroutine does it for the next
// units in admission order while the workers wait on the target, so on a
// machine with few cores prepl's CPU overlaps the server's instead of
// alternating with it. A worker that finds its unit not started renders it
// itself, so nothing ever waits for the renderer's queue.

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
		x.batch, x.err = r.tgt.Render(ctx, x.txs, x.compact)
		close(x.done)
	}
}

// take returns the unit's batch: the renderer's, or one the worker
// renders now.
func (r *renderer) take(ctx context.Context, x *rendering) (Batch, error) {
	if x.state.CompareAndSwap(renderPending, renderByWorker) {
		x.batch, x.err = r.tgt.Render(ctx, x.txs, x.compact)
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
