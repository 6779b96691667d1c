package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Counters are status counters of the target server over a timed run:
// where its time went, per source transaction. They show what bounds a
// run: a durable commit costs a redo log fsync (counted in
// Innodb_data_fsyncs: MariaDB 10.11 has no Innodb_os_log_fsyncs) and, with
// the binlog on, a binlog fsync per group commit (Binlog_group_commits
// with sync_binlog=1); a row that is not in the buffer pool costs a read
// from disk (Innodb_buffer_pool_reads).
//
// On an I/O-bound config, InnoDB's purge is half of the page reads: it
// removes the secondary index entries an update delete-marked, once the
// transaction that did it has committed, reading those index pages and
// their rows again. What a run leaves to purge when it ends is work the
// timed run did not pay: bigger target transactions leave more (prepl
// --commit-unit 5000 on a 5,000-transaction binlog left 13,000 page
// reads, 2.9 s, against 2,200 and 0.7 s with units of 500).
// PurgeReads and PurgeMillis show it: measured from the end of the timed
// run until the history list is empty.
type Counters struct {
	PoolReads          int64 // Innodb_buffer_pool_reads: pages read from disk
	LogFsyncs          int64 // Innodb_data_fsyncs: InnoDB's fsyncs, the redo log's included
	BinlogGroupCommits int64 // Binlog_group_commits: one binlog fsync each with sync_binlog=1
	PurgeReads         int64 // pages read after the run until purge was done (I/O-bound configs)
	PurgeMillis        int64 // milliseconds after the run until purge was done (I/O-bound configs)
}

// counterVars are the SHOW GLOBAL STATUS names of Counters' first fields.
var counterVars = []string{"Innodb_buffer_pool_reads", "Innodb_data_fsyncs", "Binlog_group_commits"}

func (c *Counters) fields() []*int64 {
	return []*int64{&c.PoolReads, &c.LogFsyncs, &c.BinlogGroupCommits, &c.PurgeReads, &c.PurgeMillis}
}

// sub returns c - d.
func (c Counters) sub(d Counters) Counters {
	out := c
	for i, f := range out.fields() {
		*f -= *d.fields()[i]
	}
	return out
}

// querier is a *sql.DB or *sql.Conn.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readCounters reads the counters from a server.
func readCounters(ctx context.Context, db querier) (Counters, error) {
	var c Counters
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('"+strings.Join(counterVars, "','")+"')")
	if err != nil {
		return c, fmt.Errorf("target status counters: %w", err)
	}
	defer rows.Close()
	fields := c.fields()
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return c, fmt.Errorf("target status counters: %w", err)
		}
		for i, n := range counterVars {
			if strings.EqualFold(n, name) {
				*fields[i] = v
			}
		}
	}
	return c, rows.Err()
}

// perTxn renders counters per source transaction.
func (c Counters) perTxn(txns int) string {
	if txns == 0 {
		return "–"
	}
	n := float64(txns)
	s := fmt.Sprintf("%.2f InnoDB fsyncs, %.2f binlog group commits, %.2f page reads",
		float64(c.LogFsyncs)/n, float64(c.BinlogGroupCommits)/n, float64(c.PoolReads)/n)
	if c.PurgeMillis > 0 || c.PurgeReads > 0 {
		s += fmt.Sprintf("; then purge: %.2f page reads, %.2f s", float64(c.PurgeReads)/n, float64(c.PurgeMillis)/1000)
	}
	return s
}

// purgeTimeout bounds how long a run's purge is waited for.
const purgeTimeout = time.Minute

// drainPurge waits until InnoDB's purge has emptied the history list
// (trx_rseg_history_len), and says how long it took and how many pages
// it read meanwhile. A purge still going after purgeTimeout is cut
// there: the figures are then at least that.
func drainPurge(ctx context.Context, db *sql.DB) (reads, millis int64, err error) {
	if _, err := db.ExecContext(ctx, "SET GLOBAL innodb_monitor_enable = 'trx_rseg_history_len'"); err != nil {
		return 0, 0, fmt.Errorf("purge: %w", err)
	}
	before, err := readCounters(ctx, db)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	for time.Since(start) < purgeTimeout {
		var history int64
		if err := db.QueryRowContext(ctx, "SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'").Scan(&history); err != nil {
			return 0, 0, fmt.Errorf("purge: history list length: %w", err)
		}
		if history == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	millis = time.Since(start).Milliseconds()
	after, err := readCounters(ctx, db)
	if err != nil {
		return 0, 0, err
	}
	return after.PoolReads - before.PoolReads, millis, nil
}
