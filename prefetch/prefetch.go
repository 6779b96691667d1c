// Package prefetch reads ahead, on connections of its own, the rows and
// index entries that the transactions about to be applied will touch, as
// the old replica prefetchers did: on a target whose data does not fit in
// its buffer pool, a row change waits for a disk read of each index page
// it touches, and one connection applying a unit makes those reads one
// at a time. SELECTs by key on a few more connections make them at once,
// and the unit then finds its pages in memory.
//
// It wraps the MySQL target: when the engine loads the table definitions
// of a transaction it admits (Target.Load), the transaction's keys are
// queued for the prefetch connections. Prefetching is best effort: a full
// queue drops work, a failed SELECT is counted and forgotten; it never
// changes what is applied.
package prefetch

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/txn"
)

// maxTuples bounds the keys of one SELECT.
const maxTuples = 200

// queueLen bounds the SELECTs waiting for a connection.
const queueLen = 1024

// Target is a *mysql.Target whose Load also queues prefetches.
type Target struct {
	*mysql.Target
	jobs   chan query
	cancel context.CancelFunc
	wg     sync.WaitGroup
	stats  Stats
}

// Stats count what the prefetchers did.
type Stats struct {
	Queries, Failed, Dropped atomic.Int64
}

type query struct {
	sql  string
	args []any
}

// Wrap starts conns prefetch connections (goroutines on t's pool) over t.
// Stop ends them.
func Wrap(t *mysql.Target, conns int) *Target {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Target{Target: t, jobs: make(chan query, queueLen), cancel: cancel}
	for i := 0; i < conns; i++ {
		p.wg.Add(1)
		go p.work(ctx, t.DB)
	}
	return p
}

// Stop ends the prefetchers and returns what they did.
func (p *Target) Stop() *Stats {
	p.cancel()
	p.wg.Wait()
	return &p.stats
}

func (p *Target) work(ctx context.Context, db *sql.DB) {
	defer p.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case q := <-p.jobs:
			rows, err := db.QueryContext(ctx, q.sql, q.args...)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			p.stats.Queries.Add(1)
			if err != nil && ctx.Err() == nil {
				p.stats.Failed.Add(1)
			}
		}
	}
}

// Load loads tx's table definitions, then queues its prefetches.
func (p *Target) Load(ctx context.Context, tx *txn.Txn) error {
	if err := p.Target.Load(ctx, tx); err != nil {
		return err
	}
	for _, q := range queries(p.Catalog, tx) {
		select {
		case p.jobs <- q:
		default:
			p.stats.Dropped.Add(1)
		}
	}
	return nil
}

// queries are the SELECTs that read the index pages tx's row changes
// will touch: for each table and index, the index's columns of every
// before image (the entry an update or delete finds) and after image (the
// entry an insert or update writes), through that index.
func queries(cat txn.Catalog, tx *txn.Txn) []query {
	type key struct {
		table *txn.TableDef
		index int
	}
	tuples := map[key][][]any{}
	var order []key
	for _, ch := range tx.Changes {
		rc := ch.Row
		if rc == nil {
			continue
		}
		def, ok := cat.Table(rc.Table.Schema, rc.Table.Name)
		if !ok {
			continue
		}
		for i, ix := range def.Indexes {
			k := key{def, i}
			for _, img := range [][]txn.Value{rc.Before, rc.After} {
				if t := indexTuple(def, ix, img); t != nil {
					if _, seen := tuples[k]; !seen {
						order = append(order, k)
					}
					tuples[k] = append(tuples[k], t)
				}
			}
		}
	}
	var out []query
	for _, k := range order {
		ts := tuples[k]
		for len(ts) > 0 {
			n := min(len(ts), maxTuples)
			out = append(out, selectByIndex(k.table, k.table.Indexes[k.index], ts[:n]))
			ts = ts[n:]
		}
	}
	return out
}

// indexTuple is the index's columns of a row image; nil when the image
// lacks one of them or holds NULL (no lookup by NULL) or the index has a
// prefix (the whole value would not find its entry).
func indexTuple(def *txn.TableDef, ix txn.IndexDef, img []txn.Value) []any {
	if len(img) == 0 || len(ix.Columns) == 0 {
		return nil
	}
	t := make([]any, 0, len(ix.Columns))
	for i, c := range ix.Columns {
		if c >= len(img) || img[c] == nil || c >= len(def.Columns) || (ix.Prefix != nil && ix.Prefix[i] > 0) {
			return nil
		}
		t = append(t, img[c])
	}
	return t
}

// selectByIndex reads the index entries of tuples through the index alone
// (the SELECT list is the index's columns, so InnoDB need not visit the
// rows for a secondary index).
func selectByIndex(def *txn.TableDef, ix txn.IndexDef, tuples [][]any) query {
	cols := make([]string, len(ix.Columns))
	for i, c := range ix.Columns {
		cols[i] = mysql.QuoteIdent(def.Columns[c].Name)
	}
	list := strings.Join(cols, ", ")
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	var b strings.Builder
	b.WriteString("SELECT " + list + " FROM " + mysql.QuoteIdent(def.Schema) + "." + mysql.QuoteIdent(def.Name))
	b.WriteString(" FORCE INDEX (" + mysql.QuoteIdent(ix.Name) + ") WHERE (" + list + ") IN (")
	args := make([]any, 0, len(tuples)*len(cols))
	for i, t := range tuples {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
		args = append(args, t...)
	}
	b.WriteString(")")
	return query{sql: b.String(), args: args}
}
