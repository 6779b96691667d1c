package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// pollEvery is how often a replica's state is polled while waiting.
const pollEvery = 20 * time.Millisecond

// mariaDBCatchUp times MariaDB's own replica: the replica (restored from
// the snapshot) first fetches the whole workload into its relay log with
// the IO thread alone, then START SLAVE SQL_THREAD is timed until
// MASTER_GTID_WAIT says the source's last GTID is applied. threads 0 is
// the single-threaded replica.
func mariaDBCatchUp(ctx context.Context, src *Source, replica *sandbox.Server, mode string, threads int) (elapsed, cpu time.Duration, ctr Counters, err error) {
	db, err := replica.Open("")
	if err != nil {
		return 0, 0, ctr, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, 0, ctr, fmt.Errorf("connect to replica: %w", err)
	}
	defer conn.Close()
	setup := []string{
		"SET GLOBAL gtid_slave_pos = '" + src.Stats.StartGTID + "'",
		"CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = " + strconv.Itoa(src.Server.Port) +
			", MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_USE_GTID = slave_pos",
		// Set while the replica threads are stopped: MariaDB refuses to
		// change them while they run.
		"SET GLOBAL slave_parallel_threads = " + strconv.Itoa(threads),
	}
	if threads > 0 {
		setup = append(setup, "SET GLOBAL slave_parallel_mode = '"+mode+"'")
	}
	setup = append(setup, "START SLAVE IO_THREAD")
	for _, q := range setup {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return 0, 0, ctr, fmt.Errorf("replica: %s: %w", q, err)
		}
	}
	if err := waitRelayLog(ctx, conn, src.MasterFile, src.MasterPos); err != nil {
		return 0, 0, ctr, err
	}
	before, err := readCounters(ctx, conn)
	if err != nil {
		return 0, 0, ctr, err
	}
	meter := startCPU(replica)
	start := time.Now()
	if _, err := conn.ExecContext(ctx, "START SLAVE SQL_THREAD"); err != nil {
		return 0, 0, ctr, fmt.Errorf("replica: START SLAVE SQL_THREAD: %w", err)
	}
	if err := waitGTID(ctx, conn, src.Stats.EndGTID); err != nil {
		return 0, 0, ctr, err
	}
	elapsed, cpu = time.Since(start), meter.elapsed()
	after, err := readCounters(ctx, conn)
	if err != nil {
		return 0, 0, ctr, err
	}
	if _, err := conn.ExecContext(ctx, "STOP SLAVE"); err != nil {
		return 0, 0, ctr, fmt.Errorf("replica: STOP SLAVE: %w", err)
	}
	return elapsed, cpu, after.sub(before), nil
}

// waitRelayLog waits until the IO thread has read the source's binlog up
// to file:pos.
func waitRelayLog(ctx context.Context, conn *sql.Conn, file string, pos uint64) error {
	for {
		st, err := SlaveStatus(ctx, conn)
		if err != nil {
			return err
		}
		if st["Last_IO_Error"] != "" {
			return fmt.Errorf("replica IO thread: %s (error %s)", st["Last_IO_Error"], st["Last_IO_Errno"])
		}
		read, _ := strconv.ParseUint(st["Read_Master_Log_Pos"], 10, 64)
		if st["Master_Log_File"] == file && read >= pos {
			return nil
		}
		if st["Slave_IO_Running"] == "No" {
			return fmt.Errorf("replica IO thread stopped at %s:%d before %s:%d", st["Master_Log_File"], read, file, pos)
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return fmt.Errorf("waiting for the relay log (at %s:%d of %s:%d): %w", st["Master_Log_File"], read, file, pos, err)
		}
	}
}

// waitGTID waits until the replica has applied gtid position pos. It asks
// MASTER_GTID_WAIT with a short timeout so that an SQL thread that stops
// on an error is noticed; MASTER_GTID_WAIT returns as soon as the position
// is reached, so the polling adds nothing to the time measured.
func waitGTID(ctx context.Context, conn *sql.Conn, pos string) error {
	for {
		var r sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, 1)", pos).Scan(&r); err != nil {
			return fmt.Errorf("replica: MASTER_GTID_WAIT('%s'): %w", pos, err)
		}
		if r.Valid && r.Int64 == 0 {
			return nil
		}
		st, err := SlaveStatus(ctx, conn)
		if err != nil {
			return err
		}
		if st["Last_SQL_Error"] != "" || st["Slave_SQL_Running"] == "No" {
			return fmt.Errorf("replica SQL thread stopped at %s before %s: %s (error %s)",
				st["Gtid_Slave_Pos"], pos, st["Last_SQL_Error"], st["Last_SQL_Errno"])
		}
	}
}

// SlaveStatus returns SHOW SLAVE STATUS as column → value; an error when
// the replica has none.
func SlaveStatus(ctx context.Context, conn *sql.Conn) (map[string]string, error) {
	st, err := sandbox.SlaveStatus(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("replica: SHOW SLAVE STATUS: %w", err)
	}
	if len(st) == 0 {
		return nil, fmt.Errorf("replica: SHOW SLAVE STATUS is empty: CHANGE MASTER did not take")
	}
	return st, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
