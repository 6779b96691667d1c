// Package calibrate measures the cost model of package analyze on a
// target (`prepl analyze --calibrate`): a few timed statements on a
// scratch table, shaped like the ones prepl sends. It is kept apart from
// package analyze, which does no I/O.
package calibrate

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prepl/prepl/analyze"
	"github.com/prepl/prepl/mysql"
)

// DB is the database of the scratch table calibration creates (and drops
// again if it created it).
const DB = "prepl_calibrate"

// StatementRows is the most rows the engine puts in one multi-row
// statement of a compacted unit (mysql's netRows).
const StatementRows = 1000

// URL measures the cost model on the target at e: an UPDATE by primary
// key setting every column from literals per row change, batched in
// multi-statement round trips; and the multi-row INSERT ... ON DUPLICATE
// KEY UPDATE of a compacted unit. Costs.Source names the target.
func URL(ctx context.Context, e mysql.Endpoint) (analyze.Costs, error) {
	db, err := e.OpenDB()
	if err != nil {
		return analyze.Costs{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	c, err := Run(ctx, db)
	if err != nil {
		return analyze.Costs{}, fmt.Errorf("calibrate on %s: %w (it needs CREATE, DROP, INSERT and UPDATE on database %s)", e, err, DB)
	}
	c.Source = "calibrated on " + e.String()
	c.Local = local(e)
	c.Conflict = analyze.DefaultCosts.Conflict // not measured
	// prepl's own CPU per transaction was measured in CPU time; on a
	// busy machine it takes longer.
	s := slowdown()
	c.ReadTxn = time.Duration(float64(analyze.DefaultCosts.ReadTxn) * s)
	c.ReadKiB = time.Duration(float64(analyze.DefaultCosts.ReadKiB) * s)
	conn, err := best(3, func() error { return connectOnce(ctx, e) })
	if err != nil {
		return analyze.Costs{}, fmt.Errorf("calibrate on %s: connect: %w", e, err)
	}
	var tables int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'position'",
		mysql.PositionSchema).Scan(&tables); err != nil {
		return analyze.Costs{}, fmt.Errorf("calibrate on %s: %w", e, err)
	}
	c.Start = startCost(time.Duration(float64(ProcessStart)*s), conn, c.DDL, tables > 0)
	return c, nil
}

// ProcessStart is how long starting the prepl process takes before it
// does anything (the Go runtime, flags): `prepl version`'s best of 8 on
// the project's 2-core machine, 2026-11-23.
const ProcessStart = 10 * time.Millisecond

// SetupStatements are the statements prepl runs on a target without its
// position tables before applying anything, each a DDL: the schema and
// its three tables (mysql.Open: the position, XA and skip tables).
const SetupStatements = 4

// startCost is a run's fixed cost besides applying (analyze.Costs.Start,
// without scanning the files, which depends on them): the process's
// start, two connections opened one after the other before the first
// unit is sent (prepl's own, which reads and creates its tables, and the
// first worker's), and, on a target without prepl's position tables, the
// DDL of each.
func startCost(process, connect, ddl time.Duration, hasTables bool) time.Duration {
	d := process + 2*connect
	if !hasTables {
		d += SetupStatements * ddl
	}
	return d
}

// connectOnce opens a new connection to e and runs one query on it, as
// prepl does when it starts.
func connectOnce(ctx context.Context, e mysql.Endpoint) error {
	db, err := e.OpenDB()
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxIdleConns(0)
	var v string
	return db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v)
}

type calibration struct {
	db    *sql.DB
	table string
	c     string // 120-character CHAR value
	pad   string // 60-character CHAR value
	wide  string // 4000-character value for the per-KiB cost
}

const (
	calRows     = 8000 // rows in the scratch table
	calTxnRows  = 2000 // row changes in the per-statement and per-row measurements
	calAutoRows = 200  // single-row commits in the per-commit measurement
	calWideRows = 1000 // wide row changes in the per-KiB measurement
	calConnRows = 1000 // row changes per connection in the capacity measurement
)

// Run measures the cost model on db (at least 9 connections).
func Run(ctx context.Context, db *sql.DB) (c analyze.Costs, err error) {
	var existed int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", DB).Scan(&existed); err != nil {
		return c, err
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+DB); err != nil {
		return c, err
	}
	k := &calibration{db: db, table: fmt.Sprintf("%s.t_%d_%d", DB, os.Getpid(), time.Now().UnixNano()%1000000),
		c: strings.Repeat("c", 120), pad: strings.Repeat("p", 60), wide: strings.Repeat("w", 4000)}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db.ExecContext(cctx, "DROP TABLE IF EXISTS "+k.table)
		if existed == 0 {
			var left int
			if db.QueryRowContext(cctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", DB).Scan(&left) == nil && left == 0 {
				db.ExecContext(cctx, "DROP DATABASE IF EXISTS "+DB)
			}
		}
	}()

	start := time.Now()
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+k.table+` (id INT NOT NULL PRIMARY KEY, k INT NOT NULL,
		c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, wide VARCHAR(8000) NOT NULL DEFAULT '') ENGINE=InnoDB`); err != nil {
		return c, err
	}
	c.DDL = time.Since(start)
	if err := k.fill(ctx); err != nil {
		return c, err
	}

	conn, err := db.Conn(ctx)
	if err != nil {
		return c, err
	}
	defer conn.Close()
	single, err := best(5, func() error { return k.updateTxn(ctx, conn, 1, calTxnRows, false) })
	if err != nil {
		return c, err
	}
	multi, err := best(5, func() error { return k.upsertTxn(ctx, conn, 1, calTxnRows) })
	if err != nil {
		return c, err
	}
	auto, err := best(5, func() error { return k.autocommit(ctx, conn, calAutoRows) })
	if err != nil {
		return c, err
	}
	wide, err := best(5, func() error { return k.updateTxn(ctx, conn, 1, calWideRows, true) })
	if err != nil {
		return c, err
	}
	// single = n*(stmt+row) + commit; multi = n*row + commit (two
	// statements); auto = stmt+row+commit per row; a wide row change
	// carries about 7.8 KiB more binlog (the 4000-byte value in both
	// images) than a narrow one.
	perAuto := auto / calAutoRows
	c.Row = max((multi-perAuto)/calTxnRows, 100*time.Nanosecond)
	c.Stmt = max((single-perAuto)/calTxnRows-c.Row, time.Microsecond)
	c.Commit = max(perAuto-c.Stmt-c.Row, time.Microsecond)
	perWide := (wide - perAuto) / calWideRows
	c.PerKiB = max(time.Duration(float64(perWide-c.Stmt-c.Row)/(2*4000.0/1024)), time.Nanosecond)
	if c.Cores, err = k.capacity(ctx); err != nil {
		return c, err
	}
	return c, nil
}

// fill inserts the scratch rows.
func (k *calibration) fill(ctx context.Context) error {
	for lo := 1; lo <= calRows; lo += 500 {
		var b strings.Builder
		b.WriteString("INSERT INTO " + k.table + " (id, k, c, pad) VALUES ")
		for id := lo; id < lo+500 && id <= calRows; id++ {
			if id > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d, %d, '%s', '%s')", id, id, k.c, k.pad)
		}
		if _, err := k.db.ExecContext(ctx, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// update is one row change as prepl sends it: every column from literals.
func (k *calibration) update(b *strings.Builder, id, n int, wide bool) {
	w := ""
	if wide {
		w = k.wide
	}
	fmt.Fprintf(b, "UPDATE %s SET id=%d, k=%d, c='%s', pad='%s', wide='%s' WHERE id=%d;", k.table, id, n, k.c, k.pad, w, id)
}

// updateTxn changes rows first..first+n-1 in one transaction, in batches
// of 100 statements per round trip.
func (k *calibration) updateTxn(ctx context.Context, conn *sql.Conn, first, n int, wide bool) error {
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	stamp := int(time.Now().UnixNano() % 1000000)
	for lo := first; lo < first+n; lo += 100 {
		var b strings.Builder
		for id := lo; id < lo+100 && id < first+n; id++ {
			k.update(&b, id, stamp, wide)
		}
		if _, err := conn.ExecContext(ctx, b.String()); err != nil {
			conn.ExecContext(ctx, "ROLLBACK")
			return err
		}
	}
	_, err := conn.ExecContext(ctx, "COMMIT")
	return err
}

// upsertTxn overwrites rows first..first+n-1 in one transaction with
// multi-row INSERT ... ON DUPLICATE KEY UPDATE statements of 1000 rows, as
// a compacted unit does.
func (k *calibration) upsertTxn(ctx context.Context, conn *sql.Conn, first, n int) error {
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	stamp := int(time.Now().UnixNano() % 1000000)
	for lo := first; lo < first+n; lo += StatementRows {
		var b strings.Builder
		b.WriteString("INSERT INTO " + k.table + " (id, k, c, pad, wide) VALUES ")
		for id := lo; id < lo+StatementRows && id < first+n; id++ {
			if id > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d, %d, '%s', '%s', '')", id, stamp, k.c, k.pad)
		}
		b.WriteString(" ON DUPLICATE KEY UPDATE id=VALUES(id), k=VALUES(k), c=VALUES(c), pad=VALUES(pad), wide=VALUES(wide)")
		if _, err := conn.ExecContext(ctx, b.String()); err != nil {
			conn.ExecContext(ctx, "ROLLBACK")
			return err
		}
	}
	_, err := conn.ExecContext(ctx, "COMMIT")
	return err
}

// autocommit changes n rows, each in its own transaction and round trip.
func (k *calibration) autocommit(ctx context.Context, conn *sql.Conn, n int) error {
	stamp := int(time.Now().UnixNano() % 1000000)
	for id := 1; id <= n; id++ {
		var b strings.Builder
		k.update(&b, id, stamp, false)
		if _, err := conn.ExecContext(ctx, strings.TrimSuffix(b.String(), ";")); err != nil {
			return err
		}
	}
	return nil
}

// capacity is how many connections' row changes the target runs at full
// speed at once: the best throughput of 2, 4 or 8 connections, each
// changing its own rows, over the throughput of one. It can exceed the
// target's cores: one connection also waits for its round trips.
func (k *calibration) capacity(ctx context.Context) (float64, error) {
	conns := make([]*sql.Conn, 8)
	for i := range conns {
		c, err := k.db.Conn(ctx)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		conns[i] = c
	}
	run := func(n int) (float64, error) {
		d, err := best(3, func() error {
			var wg sync.WaitGroup
			errs := make(chan error, n)
			start := make(chan struct{})
			for j := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs <- k.updateTxn(ctx, conns[j], 1+j*calConnRows, calConnRows, false)
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					return err
				}
			}
			return nil
		})
		return float64(n*calConnRows) / d.Seconds(), err
	}
	one, err := run(1)
	if err != nil {
		return 0, err
	}
	capacity := 1.0
	for _, n := range []int{2, 4, 8} {
		t, err := run(n)
		if err != nil {
			return 0, err
		}
		capacity = max(capacity, t/one)
	}
	return float64(int(capacity*10+0.5)) / 10, nil
}

// best runs f n times and returns its shortest time.
func best(n int, f func() error) (time.Duration, error) {
	var b time.Duration
	for i := range n {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if d := time.Since(start); i == 0 || d < b {
			b = d
		}
	}
	return b, nil
}

// local reports whether e is on this machine (a socket or a loopback
// address): prepl's CPU then competes with the target's.
func local(e mysql.Endpoint) bool {
	if e.Socket != "" || e.Host == "localhost" {
		return true
	}
	ip := net.ParseIP(e.Host)
	return ip != nil && ip.IsLoopback()
}
