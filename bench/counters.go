package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Counters are status counters of the target server over a timed run:
// where its time went, per source transaction. They show what bounds a
// run: a durable commit costs a redo log fsync (counted in
// Innodb_data_fsyncs: MariaDB 10.11 has no Innodb_os_log_fsyncs) and, with
// the binlog on, a binlog fsync per group commit (Binlog_group_commits
// with sync_binlog=1); a row that is not in the buffer pool costs a read
// from disk (Innodb_buffer_pool_reads).
type Counters struct {
	PoolReads          int64 // Innodb_buffer_pool_reads: pages read from disk
	LogFsyncs          int64 // Innodb_data_fsyncs: InnoDB's fsyncs, the redo log's included
	BinlogGroupCommits int64 // Binlog_group_commits: one binlog fsync each with sync_binlog=1
}

// counterVars are the SHOW GLOBAL STATUS names of Counters' fields.
var counterVars = []string{"Innodb_buffer_pool_reads", "Innodb_data_fsyncs", "Binlog_group_commits"}

func (c *Counters) fields() []*int64 {
	return []*int64{&c.PoolReads, &c.LogFsyncs, &c.BinlogGroupCommits}
}

// sub returns c - d.
func (c Counters) sub(d Counters) Counters {
	return Counters{c.PoolReads - d.PoolReads, c.LogFsyncs - d.LogFsyncs, c.BinlogGroupCommits - d.BinlogGroupCommits}
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
	return fmt.Sprintf("%.2f InnoDB fsyncs, %.2f binlog group commits, %.2f page reads",
		float64(c.LogFsyncs)/n, float64(c.BinlogGroupCommits)/n, float64(c.PoolReads)/n)
}
