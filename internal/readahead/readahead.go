// Package readahead reads transactions ahead of their consumer, in a
// goroutine, within a byte budget, and hands them over in batches. It is
// the one read-ahead of prepl's input: fileset.Reader decodes files
// through it, and the apply engine reads any other source (a live
// stream) through it, taking a Reader's batches directly when its source
// has one, so that a transaction crosses one handoff between the decoder
// and the sequencer.
//
// Batches: a channel operation, and the wake-up of a waiting consumer,
// per transaction cost as much CPU as decoding a small one.
package readahead

import (
	"context"
	"io"

	"github.com/prepl/prepl/internal/budget"
	"github.com/prepl/prepl/txn"
)

// BatchTxns is the most transactions in a batch.
const BatchTxns = 64

// DefaultBytes is the default limit of a Reader, the read-ahead of
// binlog.FileOptions and apply.Config alike.
const DefaultBytes = 8 << 20

// queued is how many batches wait for the consumer: with the one the
// producer fills and the one the consumer takes from, at most 3×64
// transactions ahead, so that a consumer that stops early (a stop
// position) has not had much more decoded than it takes.
const queued = 1

// Batch is transactions handed over at once, then the error that ended
// the reading (io.EOF included), if any.
type Batch struct {
	Txs []*txn.Txn
	ns  []int64 // their footprints, held in the budget until taken
	Err error
}

// Produce decodes transactions and gives each to emit, in order, until
// it has no more (it returns nil, read as io.EOF) or an error, or emit
// returns false (the Reader is closed: Produce returns at once).
type Produce func(ctx context.Context, emit func(*txn.Txn) bool) error

// FromNext is the Produce of a source read one transaction at a time.
func FromNext(next func(context.Context) (*txn.Txn, error)) Produce {
	return func(ctx context.Context, emit func(*txn.Txn) bool) error {
		for {
			t, err := next(ctx)
			if err != nil {
				return err
			}
			if !emit(t) {
				return nil
			}
		}
	}
}

// Reader runs a Produce in a goroutine. The transactions it holds ahead
// of the consumer, handed over or not, are at most limit bytes of memory
// (txn.Txn.Footprint), except one bigger transaction, read alone.
type Reader struct {
	out    chan Batch
	free   chan Batch
	ahead  *budget.Budget
	cancel context.CancelFunc
	done   chan struct{}
	// For Next: the batch being returned, from cur.Txs[next], and the
	// error to return after the last transaction.
	cur  Batch
	next int
	err  error
}

// freeBatches is how many emptied batches wait to be filled again.
const freeBatches = 4

// Start reads produce ahead within limit bytes and hands the
// transactions over in batches of up to BatchTxns, early when the budget
// is full, and at the end. atHand is nil for a source read to its end (a
// file). A live source, whose next transaction may be minutes away,
// passes a func that reports whether its next transaction has already
// arrived whole: each transaction is handed over as soon as it is
// decoded unless the next one has (a stream catching up is batched as a
// file is, and a transaction is never held back waiting for one still
// on its way).
func Start(produce Produce, limit int64, atHand func() bool) *Reader {
	ctx, cancel := context.WithCancel(context.Background())
	n := queued
	if atHand != nil {
		n = 4 * BatchTxns // as many transactions ahead as batches would hold
	}
	r := &Reader{out: make(chan Batch, n), free: make(chan Batch, freeBatches), ahead: budget.New(limit), cancel: cancel,
		done: make(chan struct{})}
	go r.run(ctx, produce, atHand)
	return r
}

func (r *Reader) run(ctx context.Context, produce Produce, atHand func() bool) {
	defer close(r.done)
	defer close(r.out)
	var b Batch
	flush := func() bool {
		select {
		case r.out <- b:
			b = Batch{}
			return true
		case <-ctx.Done():
			return false
		}
	}
	emit := func(t *txn.Txn) bool {
		n := t.Footprint()
		if !r.ahead.TryAcquire(n) {
			// The batch's own bytes may be what the budget lacks: hand it
			// over before waiting for room.
			if len(b.Txs) > 0 && !flush() || r.ahead.Acquire(ctx, n) != nil {
				return false
			}
		}
		if b.Txs == nil {
			select {
			case b = <-r.free:
			default:
				b = Batch{Txs: make([]*txn.Txn, 0, BatchTxns), ns: make([]int64, 0, BatchTxns)}
			}
		}
		b.Txs, b.ns = append(b.Txs, t), append(b.ns, n)
		return (atHand == nil || atHand()) && len(b.Txs) < BatchTxns || flush()
	}
	err := produce(ctx, emit)
	if ctx.Err() != nil {
		return // closed: nobody takes what is left
	}
	if err == nil {
		err = io.EOF
	}
	b.Err = err
	flush()
}

// Batches is where the batches arrive, in order; the last has Err set
// (io.EOF at the end), then the channel is closed. Whoever receives from
// it must Take every transaction of a batch.
func (r *Reader) Batches() <-chan Batch { return r.out }

// Take returns b's i-th transaction and gives its bytes back to the
// budget: from then on the consumer accounts for it.
func (r *Reader) Take(b Batch, i int) *txn.Txn {
	t := b.Txs[i]
	b.Txs[i] = nil // taken: the batch no longer keeps it
	r.ahead.Release(b.ns[i])
	return t
}

// Recycle gives back a batch whose transactions were all taken, to be
// filled again.
func (r *Reader) Recycle(b Batch) {
	select {
	case r.free <- Batch{Txs: b.Txs[:0], ns: b.ns[:0]}:
	default:
	}
}

// Next returns the next transaction, for a consumer that takes them one
// at a time (not also through Batches); the error that ended the reading
// (io.EOF at the end) after the last one, and from then on.
func (r *Reader) Next(ctx context.Context) (*txn.Txn, error) {
	for {
		if r.err != nil {
			return nil, r.err
		}
		if r.next < len(r.cur.Txs) {
			r.next++
			return r.Take(r.cur, r.next-1), nil
		}
		if r.cur.Err != nil {
			r.err = r.cur.Err
			continue
		}
		if r.cur.Txs != nil {
			r.Recycle(r.cur)
			r.cur = Batch{}
		}
		select {
		case b, ok := <-r.out:
			if !ok {
				b.Err = io.EOF
			}
			r.cur, r.next = b, 0
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Buffered is how many transactions Next returns without waiting for
// the producer, at least (an error to return counts as one).
func (r *Reader) Buffered() int {
	n := len(r.cur.Txs) - r.next + len(r.out)
	if r.err != nil || r.cur.Err != nil {
		n++
	}
	return n
}

// Close stops the producer and waits for it; Next returns err from then
// on, unless it had ended already. Closing again does nothing more.
func (r *Reader) Close(err error) {
	r.cancel()
	<-r.done
	if r.err == nil {
		r.err = err
	}
}

// Budget is the byte budget of what is read ahead (for tests and
// statistics).
func (r *Reader) Budget() *budget.Budget { return r.ahead }
