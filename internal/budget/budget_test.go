package budget

import (
	"context"
	"errors"
	"testing"
)

// TestBudget: items are taken while their bytes fit beside what is held,
// one item bigger than the budget is taken alone, and a producer that
// does not fit waits until enough is released.
func TestBudget(t *testing.T) {
	ctx := context.Background()
	b := New(100)
	for _, n := range []int64{40, 60} {
		if err := b.Acquire(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	// 100 of 100 held: one more byte waits, until 40 are released.
	got := make(chan error, 1)
	go func() { got <- b.Acquire(ctx, 1) }()
	<-b.Full()
	if held, _, waits := b.Stats(); held != 100 || waits == 0 {
		t.Fatalf("a full budget: held %d, waits %d; want 100 held and a wait", held, waits)
	}
	b.Release(40)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	b.Release(60)
	b.Release(1)
	// Nothing held: an item of 250 passes alone, and nothing passes beside it.
	if err := b.Acquire(ctx, 250); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { got <- b.Acquire(cctx, 1) }()
	<-b.Full()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire beside an item bigger than the budget: %v, want it to wait until cancelled", err)
	}
	held, peak, _ := b.Stats()
	if held != 250 || peak != 250 {
		t.Fatalf("held %d, peak %d; want 250 and 250 (the big item alone)", held, peak)
	}
	b.Release(250)
	if held, _, _ := b.Stats(); held != 0 {
		t.Fatalf("held %d after every release", held)
	}
}

// TestTryAcquire: TryAcquire takes what Acquire would take at once, and
// refuses without waiting what Acquire would wait for.
func TestTryAcquire(t *testing.T) {
	b := New(100)
	if !b.TryAcquire(250) {
		t.Fatal("nothing held: an item bigger than the budget is refused")
	}
	if b.TryAcquire(1) {
		t.Fatal("an item taken beside one bigger than the budget")
	}
	b.Release(250)
	for _, n := range []int64{60, 40} {
		if !b.TryAcquire(n) {
			t.Fatalf("%d bytes refused with room for them", n)
		}
	}
	if b.TryAcquire(1) {
		t.Fatal("a byte taken beyond the budget")
	}
	if held, peak, waits := b.Stats(); held != 100 || peak != 250 || waits != 0 {
		t.Fatalf("held %d, peak %d, waits %d; want 100, 250 and no wait", held, peak, waits)
	}
}

// TestBudgetSetLimit: a raised limit lets a waiting Acquire through at
// once; a lowered one keeps what is held and makes the next items wait
// until enough is released to fit under it.
func TestBudgetSetLimit(t *testing.T) {
	ctx := context.Background()
	b := New(2)
	for range 2 {
		if err := b.Acquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan error, 1)
	go func() { got <- b.Acquire(ctx, 1) }()
	<-b.Full()
	b.SetLimit(3)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	b.SetLimit(1)
	if held, _, _ := b.Stats(); held != 3 || b.Limit() != 1 {
		t.Fatalf("after lowering the limit to 1: held %d, limit %d; want 3 held, limit 1", held, b.Limit())
	}
	if b.TryAcquire(1) {
		t.Fatal("TryAcquire passed with 3 held under a limit of 1")
	}
	b.Release(1)
	b.Release(1)
	if b.TryAcquire(1) {
		t.Fatal("TryAcquire passed with 1 held under a limit of 1")
	}
	b.Release(1)
	if !b.TryAcquire(1) {
		t.Fatal("TryAcquire refused with nothing held")
	}
	if b.SetLimit(0); b.Limit() != 1 {
		t.Fatalf("SetLimit(0): limit %d, want 1 (at least 1)", b.Limit())
	}
}
