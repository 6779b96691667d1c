package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// MustStart starts an instance for a test and closes it when the test ends.
func MustStart(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := Start(context.Background(), opts)
	if err != nil {
		tb.Fatalf("start sandbox: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// MustOpen opens database db on s and closes it when the test ends.
func MustOpen(tb testing.TB, s *Server, db string) *sql.DB {
	tb.Helper()
	d, err := s.Open(db)
	if err != nil {
		tb.Fatalf("open %s: %v", s.Addr(), err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// MustExec runs statements on db, failing the test on the first error.
func MustExec(tb testing.TB, db *sql.DB, stmts ...string) {
	tb.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("exec %q: %v", q, err)
		}
	}
}

// MustSlaveStatus returns SHOW SLAVE STATUS of db by column name (empty
// when the server is no replica).
func MustSlaveStatus(tb testing.TB, db *sql.DB) map[string]string {
	tb.Helper()
	st, err := SlaveStatus(context.Background(), db)
	if err != nil {
		tb.Fatalf("SHOW SLAVE STATUS: %v", err)
	}
	return st
}

// SlaveStatus returns SHOW SLAVE STATUS of q (a *sql.DB or a *sql.Conn)
// by column name, empty when the server is no replica.
func SlaveStatus(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	out := map[string]string{}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, c := range cols {
			out[c] = vals[i].String
		}
	}
	return out, rows.Err()
}

// RelayReplica is the options of a replica of server id 2 whose relay
// logs are called relay-bin.NNNNNN in its data directory and rotated
// every 4 KiB (so that transactions go on from one into the next).
func RelayReplica() Options {
	o := Defaults()
	o.ServerID = 2
	o.Flags = append(o.Flags, "--max-relay-log-size=4096", "--relay-log=relay-bin")
	return o
}

// MustWaitFetched waits, at most within, until the I/O thread of replica
// db has fetched the MariaDB GTID position pos (domains in any order).
func MustWaitFetched(tb testing.TB, db *sql.DB, pos string, within time.Duration) {
	tb.Helper()
	for deadline := time.Now().Add(within); !SameGTIDs(MustSlaveStatus(tb, db)["Gtid_IO_Pos"], pos); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("the replica's I/O thread did not fetch %s in %s", pos, within)
		}
	}
}

// SameGTIDs compares two MariaDB GTID positions, domains in any order.
func SameGTIDs(a, b string) bool {
	x, y := strings.Split(a, ","), strings.Split(b, ",")
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// MustStartCluster starts an n-node Galera cluster for a test and closes
// it when the test ends; it skips the test when Galera is not installed.
func MustStartCluster(tb testing.TB, n int, opts Options) *Cluster {
	tb.Helper()
	c, err := StartCluster(context.Background(), n, opts)
	if errors.Is(err, ErrNoGalera) {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatalf("start galera cluster: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// MustSyncWait waits until every running node of c has applied what the
// cluster committed (Cluster.SyncWait).
func MustSyncWait(tb testing.TB, c *Cluster) {
	tb.Helper()
	for i, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		if err := c.SyncWait(context.Background(), i); err != nil {
			tb.Fatal(err)
		}
	}
}
