package apply

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prepl/prepl/txn"
)

// countingTarget renders every unit as an empty batch and counts them.
type countingTarget struct {
	Target
	rendered atomic.Int64
}

type emptyBatch struct{}

func (emptyBatch) Saved() int     { return 0 }
func (emptyBatch) RowEvents() int { return 0 }

func (c *countingTarget) Render(context.Context, []*txn.Txn, bool) (Batch, error) {
	c.rendered.Add(1)
	return emptyBatch{}, nil
}

// waitFor polls cond until it holds; failing after a minute means it
// never will (a hang, not a slow machine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}

// TestRendererFollowsLimit: with a --workers ceiling of 256 and the
// controller's limit of one unit in flight, the renderer holds as many
// rendered units as one unit in flight needs (renderAhead(1)), not as 256
// do, and queues as many as one needs; when the limit rises it renders
// further ahead, and when it falls it renders nothing more until the
// workers have taken what it holds down to the new bound.
func TestRendererFollowsLimit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tgt := &countingTarget{}
	r := newRenderer(ctx, tgt, 256, 1)
	defer func() { cancel(); <-r.done }()

	var units []*rendering
	add := func(n int) {
		for range n {
			x := &rendering{txs: []*txn.Txn{{}}, done: make(chan struct{})}
			units = append(units, x)
			r.add(x)
		}
	}
	check := func() {
		t.Helper()
		held, most := r.aheadNow()
		r.mu.Lock()
		queued := r.queued
		r.mu.Unlock()
		if held > most || queued > renderQueue(r.limitNow()) {
			t.Fatalf("renderer holds %d rendered units (at most %d) and queues %d (at most %d)", held, most, queued, renderQueue(r.limitNow()))
		}
	}
	add(renderQueue(256)) // far more than one unit in flight needs
	waitFor(t, "the renderer to fill its room ahead", func() bool { held, most := r.aheadNow(); return held == most })
	check()
	if got, want := tgt.rendered.Load(), int64(renderAhead(1)); got != want {
		t.Fatalf("rendered %d units ahead for one unit in flight; want %d", got, want)
	}
	r.mu.Lock()
	queued := r.queued
	r.mu.Unlock()
	// The renderer took renderAhead(1)+1 units from the queue, one of
	// them waiting for room, some of them while the rest were added.
	if most := renderQueue(1); queued > most || queued < most-renderAhead(1)-1 {
		t.Fatalf("%d units queued for one unit in flight; want about %d (the rest are left to the workers)", queued, most)
	}

	r.follow(8)
	waitFor(t, "the renderer to render further ahead at 8 units in flight", func() bool { held, _ := r.aheadNow(); return held == renderAhead(8) })
	check()

	r.follow(1)
	next := 0
	take := func() {
		t.Helper()
		if _, err := r.take(ctx, units[next]); err != nil {
			t.Fatal(err)
		}
		next++
	}
	before := tgt.rendered.Load()
	for range renderAhead(8) - renderAhead(1) {
		take() // held stays over the new bound until here
	}
	// Taken down to the lower bound: nothing more was rendered meanwhile.
	if got := tgt.rendered.Load(); got != before {
		t.Fatalf("the renderer rendered %d more units while it held more than it may at the lower limit", got-before)
	}
	take()
	waitFor(t, "one more unit rendered once there is room", func() bool { return tgt.rendered.Load() == before+1 })
	check()

	// Every unit is rendered once, by the renderer or by the worker that
	// takes it.
	for next < len(units) {
		take()
		check()
	}
	if got := tgt.rendered.Load(); got != int64(len(units)) {
		t.Fatalf("%d renderings for %d units", got, len(units))
	}
}

func (r *renderer) limitNow() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.limit
}
