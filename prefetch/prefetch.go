// Package prefetch reads, on connections of its own, the index pages a
// commit unit will touch, so that a target whose data does not fit in its
// buffer pool makes those disk reads at once instead of one at a time.
//
// A unit applied on one connection waits for each page it does not find
// in the buffer pool: one read after another, the replica's whole time on
// an I/O-bound target (docs/benchmarks.md, config D). The old replica
// prefetchers read ahead with SELECTs; this one does it for the unit in
// hand: when a worker sends a unit, its row keys (primary key, and the
// before and after images' entries of every secondary index) are read by
// several connections at once, then the unit is sent and finds its pages
// in memory. Reading for the unit in hand, not for transactions admitted
// far ahead, keeps what is read in the pool until it is used, and no read
// is dropped.
//
// It wraps the MySQL target: Render notes each unit's reads, Conn's Send
// makes them. Reading ahead never changes what is applied: a failed
// SELECT is counted and forgotten.
package prefetch

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/txn"
)

// Target is a *mysql.Target whose units read their index pages ahead.
type Target struct {
	*mysql.Target
	indexes indexCache
	jobs    chan job
	window  int // rows the readers may be ahead of a worker
	mu      sync.Mutex
	rate    float64         // rows per second units were sent at (paceByRate)
	ctx     context.Context // the readers'
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stats   Stats
}

// Stats count what the readers did.
type Stats struct {
	Units, Queries, Failed atomic.Int64
	// Skipped counts reads the worker's unit did not wait for: it was
	// sent before they were handed out.
	Skipped atomic.Int64
	// Polls counts the questions for the worker's place.
	Polls atomic.Int64
	// Wait is the nanoseconds of pacing, the units' sending time.
	Wait atomic.Int64
}

type job struct {
	sql string
}

// Wrap starts conns reader connections over t. Stop ends them.
func Wrap(t *mysql.Target, conns int) *Target {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Target{Target: t, jobs: make(chan job), ctx: ctx, cancel: cancel, window: defaultWindow,
		indexes: indexCache{db: t.DB, cat: t.Catalog, m: map[string]*table{}}}
	if w, err := strconv.Atoi(os.Getenv("PREPL_PREFETCH_WINDOW")); err == nil {
		p.window = w
	}
	for i := 0; i < conns; i++ {
		p.wg.Add(1)
		go p.read(ctx)
	}
	return p
}

// Stop ends the readers and returns what they did.
func (p *Target) Stop() *Stats {
	p.cancel()
	p.wg.Wait()
	return &p.stats
}

// defaultWindow is how many rows the readers may be ahead of a worker.
const defaultWindow = 64

// pollEvery is how often the worker's place is asked for while reads
// wait for it.
const pollEvery = time.Millisecond

// sessionSQL: a read-ahead SELECT needs no consistent view; without one
// it never reads undo pages to rebuild a row a unit in flight changed.
const sessionSQL = "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED"

// read runs SELECTs on a connection of its own.
func (p *Target) read(ctx context.Context) {
	defer p.wg.Done()
	var c *sql.Conn
	defer func() { discard(c) }()
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-p.jobs:
			if c == nil {
				if cc, err := p.DB.Conn(ctx); err == nil {
					if _, err := cc.ExecContext(ctx, sessionSQL); err == nil {
						c = cc
					} else {
						discard(cc)
					}
				}
			}
			err := sql.ErrConnDone
			if c != nil {
				err = run(ctx, c, j.sql)
			}
			p.stats.Queries.Add(1)
			if err != nil && ctx.Err() == nil {
				p.stats.Failed.Add(1)
				discard(c)
				c = nil
			}
		}
	}
}

// discard closes a reader's connection for good: back in the pool, its
// session's isolation level would be another user's.
func discard(c *sql.Conn) {
	if c != nil {
		c.Raw(func(any) error { return driver.ErrBadConn })
		c.Close()
	}
}

func run(ctx context.Context, c *sql.Conn, q string) error {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	err = rows.Err()
	rows.Close()
	return err
}

// batch is a rendered unit and the SELECTs that read its pages.
type batch struct {
	apply.Batch
	reads []read
}

// Render renders the unit and notes its reads.
func (p *Target) Render(ctx context.Context, txs []*txn.Txn, compaction bool) (apply.Batch, error) {
	b, err := p.Target.Render(ctx, txs, compaction)
	return p.wrap(ctx, txs, b, err)
}

// RenderPlan renders the unit as planned and notes its reads.
func (p *Target) RenderPlan(ctx context.Context, txs []*txn.Txn, pl compact.UnitPlan) (apply.Batch, error) {
	b, err := p.Target.RenderPlan(ctx, txs, pl)
	return p.wrap(ctx, txs, b, err)
}

func (p *Target) wrap(ctx context.Context, txs []*txn.Txn, b apply.Batch, err error) (apply.Batch, error) {
	if err != nil {
		return b, err
	}
	return &batch{Batch: b, reads: reads(txs, p.indexes.lookup(ctx))}, nil
}

// Conn opens a worker connection whose Send reads the unit's pages ahead.
func (p *Target) Conn(ctx context.Context) (apply.Conn, error) {
	c, err := p.Target.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, p: p}, nil
}

type conn struct {
	apply.Conn
	p *Target
}

// Send sends b while the readers read its pages a little ahead of it.
func (c *conn) Send(ctx context.Context, b apply.Batch) error {
	pb, ok := b.(*batch)
	if !ok {
		return c.Conn.Send(ctx, b)
	}
	if len(pb.reads) == 0 || c.p.window < 0 {
		t0 := time.Now()
		err := c.Conn.Send(ctx, pb.Batch)
		c.p.stats.Wait.Add(int64(time.Since(t0)))
		return err
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.p.pace(pctx, c.ID(), pb.reads)
	}()
	err := c.Conn.Send(ctx, pb.Batch)
	cancel()
	<-done
	return err
}

// pace hands reads to the readers as the worker's transaction (on the
// target, connection id) comes within window rows of them: read further
// ahead, on a target whose data does not fit in its buffer pool, a page
// is evicted again before the worker comes to it. The worker's place is
// the rows the target updated and deleted since the unit was sent
// (SHOW GLOBAL STATUS Handler_update, Handler_delete: INNODB_TRX's
// trx_rows_modified is cached and refreshed only after 100 ms without a
// reader), asked every pollEvery while reads wait for it; with
// PREPL_PREFETCH_PACE=rate, estimated from the rate of earlier units.
// PREPL_PREFETCH_WINDOW sets the window (-1: no reads, Send timed).
func (p *Target) pace(ctx context.Context, id uint64, reads []read) {
	t0 := time.Now()
	defer func() {
		p.stats.Units.Add(1)
		p.stats.Wait.Add(int64(time.Since(t0)))
	}()
	if os.Getenv("PREPL_PREFETCH_PACE") == "rate" {
		p.paceByRate(ctx, t0, reads)
		return
	}
	start, _ := p.rowsChanged(ctx)
	at := 0 // the worker's row
	for i := 0; i < len(reads); {
		for ; i < len(reads) && reads[i].row < at+p.window; i++ {
			select {
			case p.jobs <- job{sql: reads[i].sql}:
			case <-ctx.Done(): // the unit is sent: what is left is of no use
				p.stats.Skipped.Add(int64(len(reads) - i))
				return
			case <-p.ctx.Done():
				return
			}
		}
		if i == len(reads) {
			return
		}
		select {
		case <-time.After(pollEvery):
		case <-ctx.Done():
			p.stats.Skipped.Add(int64(len(reads) - i))
			return
		}
		if n, err := p.rowsChanged(ctx); err == nil {
			at = int(n - start)
		}
		p.stats.Polls.Add(1)
	}
}

// rowsChanged is the target's count of rows InnoDB updated, inserted
// and deleted, all connections together.
func (p *Target) rowsChanged(ctx context.Context) (int64, error) {
	rows, err := p.DB.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_update', 'Handler_delete')")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var sum int64
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, rows.Err()
}

// paceByRate hands reads out as the worker is expected to come within
// window rows of them, at the rate (rows per second) units were sent at
// so far.
func (p *Target) paceByRate(ctx context.Context, t0 time.Time, reads []read) {
	p.mu.Lock()
	rate := p.rate
	p.mu.Unlock()
	rows := reads[len(reads)-1].row + chunkRows
	defer func() {
		if ctx.Err() == nil {
			return
		}
		// The unit was sent: its rate is what the next one paces by.
		r := float64(rows) / time.Since(t0).Seconds()
		p.mu.Lock()
		if p.rate == 0 {
			p.rate = r
		} else {
			p.rate = (p.rate + r) / 2
		}
		p.mu.Unlock()
	}()
	if rate == 0 {
		rate = 1000
	}
	for i := 0; i < len(reads); {
		at := int(rate * time.Since(t0).Seconds())
		for ; i < len(reads) && reads[i].row < at+p.window; i++ {
			select {
			case p.jobs <- job{sql: reads[i].sql}:
			case <-ctx.Done():
				p.stats.Skipped.Add(int64(len(reads) - i))
				<-ctx.Done()
				return
			case <-p.ctx.Done():
				return
			}
		}
		if i == len(reads) {
			<-ctx.Done()
			return
		}
		wait := time.Duration(float64(reads[i].row-p.window-at)/rate*float64(time.Second)) + 100*time.Microsecond
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			p.stats.Skipped.Add(int64(len(reads) - i))
			return
		}
	}
}
